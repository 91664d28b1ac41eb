package clientconf

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/internal/confedit"
)

// editor changes the servers of one client file in place. It is the one
// place a file's bytes are edited; JSON and TOML each have one.
type editor interface {
	// names are the servers in file order.
	names() []string
	// value is a server's content, decoded, for comparisons.
	value(name string) (any, bool)
	// set writes e's entry as name, replacing one of that name.
	set(name string, e Entry) error
	remove(name string) error
	// copyFrom adds the server name of from, as written there.
	copyFrom(from editor, name string) error
	bytes() []byte
	// rest is the document without its servers, decoded, for comparisons.
	rest() (any, error)
}

func newEditor(c *Client, path string, data []byte) (editor, error) {
	if c.Format == TOML {
		return newTOMLEditor(data)
	}
	return newJSONEditor(c, path, data)
}

type jsonEditor struct {
	c        *Client
	l        *confedit.Layout
	path     []string // of the servers object
	standard bool     // the file was plain JSON: keep it so
}

func newJSONEditor(c *Client, path string, data []byte) (*jsonEditor, error) {
	l, err := confedit.ParseLayout(data)
	if err != nil {
		return nil, err
	}
	d := &jsonEditor{c: c, l: l, path: c.serversPath(path), standard: l.Root.IsStandard()}
	if _, err := confedit.ObjectAt(d.top(), d.path); err != nil {
		return nil, err
	}
	// A name given twice is ambiguous to edit: refuse rather than guess.
	obj := d.top()
	for i := 0; obj != nil; i++ {
		if n, ok := confedit.Duplicate(obj); ok {
			return nil, fmt.Errorf("%q appears twice in the same object; remove one first", n)
		}
		if i == len(d.path) {
			break
		}
		obj, _ = confedit.ObjectAt(obj, d.path[i:i+1])
	}
	return d, nil
}

func (d *jsonEditor) top() *hujson.Object { return d.l.Top() }

// servers returns the servers object, or nil.
func (d *jsonEditor) servers() *hujson.Object {
	o, _ := confedit.ObjectAt(d.top(), d.path)
	return o
}

func (d *jsonEditor) names() []string {
	o := d.servers()
	if o == nil {
		return nil
	}
	ns := make([]string, len(o.Members))
	for i, m := range o.Members {
		ns[i] = confedit.Name(m)
	}
	return ns
}

func (d *jsonEditor) value(name string) (any, bool) {
	o := d.servers()
	if o == nil {
		return nil, false
	}
	v := confedit.ValueOf(o, name)
	if v == nil {
		return nil, false
	}
	return confedit.Decode(*v), true
}

func (d *jsonEditor) rest() (any, error) {
	c := d.l.Root.Clone()
	c.Standardize()
	var doc map[string]any
	if err := json.Unmarshal(c.Pack(), &doc); err != nil {
		return nil, err
	}
	// Take out the servers object itself; empty parents left behind (a
	// created "mcp": {}) do not count.
	m := doc
	for i, k := range d.path {
		if i == len(d.path)-1 {
			delete(m, k)
			break
		}
		next, ok := m[k].(map[string]any)
		if !ok {
			break
		}
		m = next
	}
	pruneEmpty(doc)
	return doc, nil
}

func pruneEmpty(m map[string]any) {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			pruneEmpty(sub)
			if len(sub) == 0 {
				delete(m, k)
			}
		}
	}
}

func (d *jsonEditor) bytes() []byte { return d.l.Bytes() }

func (d *jsonEditor) remove(name string) error {
	return d.l.Remove(append(append([]string(nil), d.path...), name))
}

func (d *jsonEditor) set(name string, e Entry) error {
	v, err := d.c.renderValue(e)
	if err != nil {
		return err
	}
	return d.put(name, v, nil)
}

func (d *jsonEditor) copyFrom(from editor, name string) error {
	f, ok := from.(*jsonEditor)
	if !ok {
		return errors.New("copy between formats")
	}
	o := f.servers()
	if o == nil {
		return fmt.Errorf("no server %q to copy", name)
	}
	v := confedit.ValueOf(o, name)
	if v == nil {
		return fmt.Errorf("no server %q to copy", name)
	}
	raw := v.Clone()
	raw.BeforeExtra, raw.AfterExtra = nil, nil
	return d.put(name, nil, &raw)
}

// put sets servers member name to v (rendered at the member's indentation)
// or to the parsed value raw (kept as written), creating the servers
// object and its parents as needed.
func (d *jsonEditor) put(name string, v any, raw *hujson.Value) error {
	obj := d.top()
	indent := ""
	for i, k := range d.path {
		next := confedit.ValueOf(obj, k)
		if next == nil || isNull(next) {
			// Create the rest of the path with the entry inside.
			var val any = ordered{{name, v}}
			if raw != nil {
				val = ordered{{name, json.RawMessage(packed(*raw))}}
			}
			for j := len(d.path) - 1; j > i; j-- {
				val = ordered{{d.path[j], val}}
			}
			return d.l.SetMember(obj, indent, k, val, nil)
		}
		mi := confedit.MemberIndex(obj, k)
		indent = confedit.MemberIndent(obj, mi, indent, d.l.Unit)
		obj = next.Value.(*hujson.Object)
	}
	return d.l.SetMember(obj, indent, name, v, raw)
}

func isNull(v *hujson.Value) bool {
	lit, ok := v.Value.(hujson.Literal)
	return ok && lit.Kind() == 'n'
}

func packed(v hujson.Value) []byte {
	v = v.Clone()
	v.Standardize()
	return v.Pack()
}

// equalJSON compares decoded values.
func equalJSON(a, b any) bool { return reflect.DeepEqual(a, b) }
