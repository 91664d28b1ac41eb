package profile

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// This file holds a minimal JSON tree that keeps the key order of objects,
// so that a converted schema lists its properties in the order the server
// chose (models read them in that order) and the output is deterministic
// without sorting. A value is one of: nil, bool, json.Number, string,
// []any, *object.

// maxDecodeDepth bounds the nesting the decoder accepts. Schemas reaching
// this package were capped by internal/schema (32 by default); the bound
// is only there so that arbitrary input cannot exhaust the stack.
const maxDecodeDepth = 512

// object is a JSON object that remembers the order of its keys. Setting a
// key it has replaces the value in place.
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

func (o *object) has(k string) bool {
	_, ok := o.vals[k]
	return ok
}

// set adds k at the end, or replaces its value in place.
func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// setFirst puts k first (moving it if present).
func (o *object) setFirst(k string, v any) {
	o.del(k)
	o.keys = append([]string{k}, o.keys...)
	o.vals[k] = v
}

func (o *object) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, kk := range o.keys {
		if kk == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

func (o *object) len() int { return len(o.keys) }

// clone copies o one level deep: values are shared.
func (o *object) clone() *object {
	c := &object{keys: append([]string(nil), o.keys...), vals: make(map[string]any, len(o.vals))}
	for k, v := range o.vals {
		c.vals[k] = v
	}
	return c
}

func (o *object) str(k string) string {
	s, _ := o.vals[k].(string)
	return s
}

// decode parses one JSON value with jsonscan.Parse, keeping object key
// order and numbers as written. A key repeated in one object is an error.
func decode(b []byte) (any, error) {
	t, err := jsonscan.Parse(b)
	if err != nil {
		return nil, err
	}
	return fromTree(t, 0)
}

func fromTree(t *jsonscan.Node, depth int) (any, error) {
	switch t.Kind {
	case jsonscan.KindObject, jsonscan.KindArray:
		if depth >= maxDecodeDepth {
			return nil, fmt.Errorf("JSON nested deeper than %d", maxDecodeDepth)
		}
	}
	switch t.Kind {
	case jsonscan.KindObject:
		o := newObject()
		for _, f := range t.Fields {
			v, err := fromTree(f.Value, depth+1)
			if err != nil {
				return nil, err
			}
			o.set(f.Key, v)
		}
		return o, nil
	case jsonscan.KindArray:
		a := make([]any, 0, len(t.Elems))
		for _, e := range t.Elems {
			v, err := fromTree(e, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	case jsonscan.KindString:
		return t.Str, nil
	case jsonscan.KindNumber:
		return json.Number(t.Str), nil
	case jsonscan.KindBool:
		return t.Bool, nil
	}
	return nil, nil
}

// encode writes v as compact JSON. HTML characters are not escaped: the
// output is for APIs and people, not for embedding in HTML.
func encode(v any) []byte {
	var b bytes.Buffer
	writeValue(&b, v)
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case json.Number:
		b.WriteString(string(v))
	case string:
		writeString(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, e)
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, e)
		}
		b.WriteByte(']')
	case *object:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeValue(b, v.vals[k])
		}
		b.WriteByte('}')
	case json.RawMessage:
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			b.WriteString("null")
			return
		}
		b.Write(c.Bytes())
	default:
		// Not produced by decode; a bug in this package if reached.
		panic(fmt.Sprintf("profile: cannot encode %T", v))
	}
}

func writeString(b *bytes.Buffer, s string) {
	e := json.NewEncoder(b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)         // a string always encodes
	b.Truncate(b.Len() - 1) // the newline Encode adds
}
