package confedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/tailscale/hujson"
)

// A Layout is a JSON document edited in place: every byte the edits do not
// touch (indentation, blank lines, key order, escapes, and where the file
// has them, comments and trailing commas, as hujson reads them) stays as
// written, and a member an edit adds or changes is written with the
// indentation of its siblings. Edit keeps a configuration file's layout
// through it, and internal/clientconf edits MCP clients' files with it.
type Layout struct {
	Root hujson.Value
	// Unit is one level of the file's indentation (IndentUnit).
	Unit string
}

// ParseLayout reads data, which must be one JSON object (with comments
// and trailing commas allowed); empty or blank data is the empty object.
func ParseLayout(data []byte) (*Layout, error) {
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
	return &Layout{Root: root, Unit: IndentUnit(data)}, nil
}

// Top is the document's object.
func (l *Layout) Top() *hujson.Object { return l.Root.Value.(*hujson.Object) }

// Bytes is the document as it now reads.
func (l *Layout) Bytes() []byte { return l.Root.Pack() }

// Name is the decoded name of a member.
func Name(m hujson.ObjectMember) string { return m.Name.Value.(hujson.Literal).String() }

// ValueOf returns the value of obj's member named k, or nil. Of duplicate
// names the last counts, as in encoding/json and the JavaScript clients.
func ValueOf(obj *hujson.Object, k string) *hujson.Value {
	if i := MemberIndex(obj, k); i >= 0 {
		return &obj.Members[i].Value
	}
	return nil
}

// MemberIndex is the index of obj's (last) member named name, or -1.
func MemberIndex(obj *hujson.Object, name string) int {
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if Name(obj.Members[i]) == name {
			return i
		}
	}
	return -1
}

// Duplicate returns a name that obj has twice, if any.
func Duplicate(obj *hujson.Object) (string, bool) {
	seen := map[string]bool{}
	for _, m := range obj.Members {
		n := Name(m)
		if seen[n] {
			return n, true
		}
		seen[n] = true
	}
	return "", false
}

// Decode is a value as encoding/json decodes it (numbers as float64), for
// comparisons; nil when it cannot be.
func Decode(v hujson.Value) any {
	v = v.Clone()
	v.BeforeExtra, v.AfterExtra = nil, nil
	v.Standardize()
	var out any
	if json.Unmarshal(v.Pack(), &out) != nil {
		return nil
	}
	return out
}

// Pointer is the JSON pointer (RFC 6901) of the member at path.
func Pointer(path []string) string {
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	var b strings.Builder
	for _, k := range path {
		b.WriteByte('/')
		b.WriteString(esc.Replace(k))
	}
	return b.String()
}

// Remove takes out the member at path (its parent object's path, then its
// name), if there. A comment or trailing comma after the last member stays
// with the object.
func (l *Layout) Remove(path []string) error {
	if len(path) == 0 {
		return errors.New("no member to remove")
	}
	parent, err := l.objectAt(path[:len(path)-1])
	if err != nil || parent == nil {
		return err
	}
	i := MemberIndex(parent, path[len(path)-1])
	if i < 0 {
		return nil
	}
	wasLast := i == len(parent.Members)-1
	trailing := parent.Members[i].Value.AfterExtra != nil
	if i == 0 && !wasLast && isBlank(parent.Members[0].Name.BeforeExtra) && isBlank(parent.Members[1].Name.BeforeExtra) {
		// The next member becomes the first: it takes the first's place.
		parent.Members[1].Name.BeforeExtra = append(hujson.Extra(nil), parent.Members[0].Name.BeforeExtra...)
	}
	patch, err := json.Marshal([]map[string]string{{"op": "remove", "path": Pointer(path)}})
	if err != nil {
		return err
	}
	if err := l.Root.Patch(patch); err != nil {
		return err
	}
	parent, _ = l.objectAt(path[:len(path)-1])
	if n := len(parent.Members); wasLast && n > 0 && !trailing {
		last := &parent.Members[n-1].Value
		if last.AfterExtra != nil {
			parent.AfterExtra = append(append(hujson.Extra(nil), last.AfterExtra...), parent.AfterExtra...)
			last.AfterExtra = nil
		}
	}
	if len(parent.Members) == 0 && isBlank(parent.AfterExtra) {
		parent.AfterExtra = nil
	}
	return nil
}

// objectAt walks path from the top (ObjectAt).
func (l *Layout) objectAt(path []string) (*hujson.Object, error) { return ObjectAt(l.Top(), path) }

// ObjectAt walks path from obj; a missing or null member gives nil, a
// member that is not an object an error.
func ObjectAt(obj *hujson.Object, path []string) (*hujson.Object, error) {
	for i, k := range path {
		v := ValueOf(obj, k)
		if v == nil {
			return nil, nil
		}
		o, ok := v.Value.(*hujson.Object)
		if !ok {
			if lit, isLit := v.Value.(hujson.Literal); isLit && lit.Kind() == 'n' {
				return nil, nil
			}
			return nil, fmt.Errorf("%s is not an object", strings.Join(path[:i+1], "."))
		}
		obj = o
	}
	return obj, nil
}

func isBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// MemberIndent is the indentation of member i of obj, whose own line is
// indented by parent: the whitespace after the last newline before the
// member's name, or parent plus one unit for a compact object.
func MemberIndent(obj *hujson.Object, i int, parent, unit string) string {
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

// SetMember adds or replaces obj's member name, obj's own line being
// indented by parent: with v rendered as JSON at the member's
// indentation, or with the parsed value raw as it is. A new member follows
// the layout of its siblings.
func (l *Layout) SetMember(obj *hujson.Object, parent, name string, v any, raw *hujson.Value) error {
	compact := false
	ind := parent + l.Unit
	like := len(obj.Members) - 1 // the member whose layout to follow
	if i := MemberIndex(obj, name); i >= 0 {
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
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if !compact {
			enc.SetIndent(ind, l.Unit)
		}
		if err := enc.Encode(v); err != nil {
			return err
		}
		var err error
		if nv, err = hujson.Parse(bytes.TrimRight(b.Bytes(), "\n")); err != nil {
			return err
		}
		nv.BeforeExtra, nv.AfterExtra = nil, nil
	}
	if i := MemberIndex(obj, name); i >= 0 {
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

// IndentUnit guesses one level of a file's indentation: a tab, or the
// smallest indentation by spaces; two spaces when the file has none.
func IndentUnit(data []byte) string {
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

// keepLayout returns the document updated (what Object.MarshalJSON wrote
// after an edit of old) written into old's layout: old's bytes wherever
// updated has the same value, and the members it adds or changes at
// their siblings' indentation; members it drops are taken out. A member
// that stays keeps its place, so keys an edit moved to the end keep their
// old place. It returns updated itself when old is blank, is not an
// object hujson reads, has a name twice in one object, or when the result
// would not mean exactly what updated means, or would not be plain JSON
// where old was.
func keepLayout(old, updated []byte) []byte {
	if isBlank(old) {
		return updated
	}
	l, err := ParseLayout(old)
	if err != nil {
		return updated
	}
	want, err := ParseObject(updated)
	if err != nil {
		return updated
	}
	if err := l.sync(l.Top(), nil, "", want); err != nil {
		return updated
	}
	out := l.Bytes()
	var a, b any
	if json.Unmarshal(out, &a) != nil || json.Unmarshal(updated, &b) != nil || !reflect.DeepEqual(a, b) {
		return updated
	}
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

// sync makes obj (at path, its line indented by indent) hold want's
// members, touching only what differs.
func (l *Layout) sync(obj *hujson.Object, path []string, indent string, want *Object) error {
	if n, ok := Duplicate(obj); ok {
		return fmt.Errorf("%q appears twice", n)
	}
	for i := len(obj.Members) - 1; i >= 0; i-- {
		name := Name(obj.Members[i])
		if _, ok := want.Get(name); !ok {
			if err := l.Remove(append(append([]string(nil), path...), name)); err != nil {
				return err
			}
		}
	}
	for _, m := range want.Members {
		i := MemberIndex(obj, m.Key)
		if i >= 0 {
			cur := &obj.Members[i].Value
			if sub, ok := cur.Value.(*hujson.Object); ok && bytes.HasPrefix(bytes.TrimSpace(m.Value), []byte("{")) {
				wsub, err := ParseObject(m.Value)
				if err != nil {
					return err
				}
				if err := l.sync(sub, append(append([]string(nil), path...), m.Key), MemberIndent(obj, i, indent, l.Unit), wsub); err != nil {
					return err
				}
				continue
			}
			var w any
			if json.Unmarshal(m.Value, &w) != nil {
				return fmt.Errorf("%q: not JSON", m.Key)
			}
			if reflect.DeepEqual(Decode(*cur), w) {
				continue
			}
		}
		if err := l.SetMember(obj, indent, m.Key, json.RawMessage(m.Value), nil); err != nil {
			return err
		}
	}
	return nil
}
