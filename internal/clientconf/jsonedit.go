package clientconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/tailscale/hujson"
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
	root     hujson.Value
	path     []string // of the servers object
	unit     string   // one level of indentation
	standard bool     // the file was plain JSON: keep it so
}

func newJSONEditor(c *Client, path string, data []byte) (*jsonEditor, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}\n")
	}
	root, err := hujson.Parse(data)
	if err != nil {
		return nil, err
	}
	if _, ok := root.Value.(*hujson.Object); !ok {
		return nil, errors.New("not a JSON object")
	}
	d := &jsonEditor{c: c, root: root, path: c.serversPath(path), unit: indentUnit(data), standard: root.IsStandard()}
	if _, err := objectAt(d.top(), d.path); err != nil {
		return nil, err
	}
	// A name given twice is ambiguous to edit: refuse rather than guess.
	obj := d.top()
	for i := 0; obj != nil; i++ {
		if n, ok := duplicate(obj); ok {
			return nil, fmt.Errorf("%q appears twice in the same object; remove one first", n)
		}
		if i == len(d.path) {
			break
		}
		obj, _ = objectAt(obj, d.path[i:i+1])
	}
	return d, nil
}

func duplicate(obj *hujson.Object) (string, bool) {
	seen := map[string]bool{}
	for _, m := range obj.Members {
		n := m.Name.Value.(hujson.Literal).String()
		if seen[n] {
			return n, true
		}
		seen[n] = true
	}
	return "", false
}

func (d *jsonEditor) top() *hujson.Object { return d.root.Value.(*hujson.Object) }

// servers returns the servers object, or nil.
func (d *jsonEditor) servers() *hujson.Object {
	o, _ := objectAt(d.top(), d.path)
	return o
}

func (d *jsonEditor) names() []string {
	o := d.servers()
	if o == nil {
		return nil
	}
	ns := make([]string, len(o.Members))
	for i, m := range o.Members {
		ns[i] = m.Name.Value.(hujson.Literal).String()
	}
	return ns
}

func decodeValue(v hujson.Value) any {
	v = v.Clone()
	v.BeforeExtra, v.AfterExtra = nil, nil
	v.Standardize()
	var out any
	if json.Unmarshal(v.Pack(), &out) != nil {
		return nil
	}
	return out
}

func (d *jsonEditor) value(name string) (any, bool) {
	o := d.servers()
	if o == nil {
		return nil, false
	}
	v := member(o, name)
	if v == nil {
		return nil, false
	}
	return decodeValue(*v), true
}

func (d *jsonEditor) rest() (any, error) {
	c := d.root.Clone()
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

func (d *jsonEditor) bytes() []byte { return d.root.Pack() }

// pointer is the JSON pointer of servers member name.
func (d *jsonEditor) pointer(name string) string {
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	var b strings.Builder
	for _, k := range append(append([]string(nil), d.path...), name) {
		b.WriteByte('/')
		b.WriteString(esc.Replace(k))
	}
	return b.String()
}

func (d *jsonEditor) remove(name string) error {
	o := d.servers()
	if o == nil {
		return nil
	}
	i := memberIndex(o, name)
	if i < 0 {
		return nil
	}
	wasLast := i == len(o.Members)-1
	trailing := o.Members[i].Value.AfterExtra != nil
	patch, err := json.Marshal([]map[string]string{{"op": "remove", "path": d.pointer(name)}})
	if err != nil {
		return err
	}
	if err := d.root.Patch(patch); err != nil {
		return err
	}
	o = d.servers()
	if n := len(o.Members); wasLast && n > 0 && !trailing {
		last := &o.Members[n-1].Value
		if last.AfterExtra != nil {
			o.AfterExtra = append(append(hujson.Extra(nil), last.AfterExtra...), o.AfterExtra...)
			last.AfterExtra = nil
		}
	}
	if len(o.Members) == 0 && isBlank(o.AfterExtra) {
		o.AfterExtra = nil
	}
	return nil
}

func isBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

func memberIndex(o *hujson.Object, name string) int {
	for i := len(o.Members) - 1; i >= 0; i-- {
		if o.Members[i].Name.Value.(hujson.Literal).String() == name {
			return i
		}
	}
	return -1
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
	v := member(o, name)
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
		next := member(obj, k)
		if next == nil || isNull(next) {
			// Create the rest of the path with the entry inside.
			var val any = ordered{{name, v}}
			if raw != nil {
				val = ordered{{name, json.RawMessage(packed(*raw))}}
			}
			for j := len(d.path) - 1; j > i; j-- {
				val = ordered{{d.path[j], val}}
			}
			return d.setMember(obj, indent, k, val, nil)
		}
		mi := memberIndex(obj, k)
		indent = memberIndent(obj, mi, indent, d.unit)
		obj = next.Value.(*hujson.Object)
	}
	return d.setMember(obj, indent, name, v, raw)
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

// memberIndent is the indentation of member i of obj, whose own line is
// indented by parent: the whitespace after the last newline before the
// member's name, or parent plus one unit for a compact object.
func memberIndent(obj *hujson.Object, i int, parent, unit string) string {
	if i >= 0 && i < len(obj.Members) {
		if ind, ok := lineIndent(obj.Members[i].Name.BeforeExtra); ok {
			return ind
		}
	}
	return parent + unit
}

// lineIndent is what follows the last newline of extra when that is
// whitespace only.
func lineIndent(extra []byte) (string, bool) {
	j := bytes.LastIndexByte(extra, '\n')
	if j < 0 {
		return "", false
	}
	tail := extra[j+1:]
	if !isBlank(tail) {
		return "", false
	}
	return string(tail), true
}

// setMember adds or replaces obj's member name, obj's own line being
// indented by parent. A new member follows the layout of its siblings.
func (d *jsonEditor) setMember(obj *hujson.Object, parent, name string, v any, raw *hujson.Value) error {
	compact := false
	ind := parent + d.unit
	like := len(obj.Members) - 1 // the member whose layout to follow
	if i := memberIndex(obj, name); i >= 0 {
		like = i
	}
	if like >= 0 {
		if got, ok := lineIndent(obj.Members[like].Name.BeforeExtra); ok {
			ind = got
		} else {
			compact = true
		}
	}
	var nv hujson.Value
	if raw != nil {
		nv = raw.Clone()
	} else {
		var b []byte
		var err error
		if compact {
			b, err = json.Marshal(v)
		} else {
			b, err = json.MarshalIndent(v, ind, d.unit)
		}
		if err != nil {
			return err
		}
		if nv, err = hujson.Parse(b); err != nil {
			return err
		}
		nv.BeforeExtra, nv.AfterExtra = nil, nil
	}
	if i := memberIndex(obj, name); i >= 0 {
		obj.Members[i].Value.Value = nv.Value
		return nil
	}
	m := hujson.ObjectMember{Name: hujson.Value{Value: hujson.String(name)}}
	m.Value.BeforeExtra = hujson.Extra(" ")
	m.Value.Value = nv.Value
	n := len(obj.Members)
	switch {
	case compact:
		m.Name.BeforeExtra = hujson.Extra(" ")
		if n > 1 {
			m.Name.BeforeExtra = append(hujson.Extra(nil), obj.Members[n-1].Name.BeforeExtra...)
		}
		if n > 0 {
			m.Value.BeforeExtra = append(hujson.Extra(nil), obj.Members[n-1].Value.BeforeExtra...)
		}
	default:
		m.Name.BeforeExtra = hujson.Extra("\n" + ind)
		// A comment on the last member's line stays on that line.
		if n > 0 {
			if nl := bytes.IndexByte(obj.AfterExtra, '\n'); nl > 0 && !isBlank(obj.AfterExtra[:nl]) {
				m.Name.BeforeExtra = append(append(hujson.Extra(nil), obj.AfterExtra[:nl]...), m.Name.BeforeExtra...)
				obj.AfterExtra = append(hujson.Extra(nil), obj.AfterExtra[nl:]...)
			}
		}
		if n > 0 && isBlank(obj.Members[n-1].Value.BeforeExtra) {
			m.Value.BeforeExtra = append(hujson.Extra(nil), obj.Members[n-1].Value.BeforeExtra...)
		}
		if n == 0 && isBlank(obj.AfterExtra) {
			obj.AfterExtra = hujson.Extra("\n" + parent)
		}
	}
	if n > 0 && obj.Members[n-1].Value.AfterExtra != nil {
		// Keep a trailing comma where the file has one.
		m.Value.AfterExtra = hujson.Extra{}
	}
	obj.Members = append(obj.Members, m)
	return nil
}

// indentUnit guesses one level of the file's indentation: a tab, or the
// smallest indentation by spaces; two spaces when the file has none.
func indentUnit(data []byte) string {
	best := 0
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if line[0] == '\t' {
			return "\t"
		}
		n := 0
		for n < len(line) && line[n] == ' ' {
			n++
		}
		if n > 0 && n < len(line) && (best == 0 || n < best) {
			best = n
		}
	}
	if best == 0 || best > 8 {
		return "  "
	}
	return strings.Repeat(" ", best)
}

// equalJSON compares decoded values.
func equalJSON(a, b any) bool { return reflect.DeepEqual(a, b) }
