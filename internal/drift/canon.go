package drift

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// A JSON value here is one of: object, []any, string, json.Number, bool or
// nil. Objects keep their members in a slice rather than a map so that a
// duplicate key can be seen and numbers can stay json.Number.

// member is one key and value of an object.
type member struct {
	key string
	val any
}

// object is a JSON object; canonical once sorted.
type object []member

func (o object) sort() {
	slices.SortStableFunc(o, func(a, b member) int { return strings.Compare(a.key, b.key) })
}

// get returns the value of key and whether o has it.
func (o object) get(key string) (any, bool) {
	for _, m := range o {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

// valueOf marshals v (a schema: a map, a json.RawMessage, a
// *jsonschema.Schema...) and parses the result. A v that marshals to null
// gives nil.
func valueOf(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return parse(raw)
}

// parse parses exactly one JSON value, with numbers as written and object
// keys sorted. A duplicate key is an error.
func parse(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the JSON value")
		}
		return nil, err
	}
	return v, nil
}

// parseValue parses the next value from dec. json.Decoder bounds the
// nesting depth (to 10000), so the recursion is bounded too.
func parseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err == io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	switch d {
	case '{':
		o := object{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, ok := tok.(string)
			if !ok {
				return nil, fmt.Errorf("object key %v is not a string", tok)
			}
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, member{key, v})
		}
		o.sort()
		for i := 1; i < len(o); i++ {
			if o[i].key == o[i-1].key {
				return nil, fmt.Errorf("duplicate object key %q", o[i].key)
			}
		}
		_, err := dec.Token() // '}'
		return o, err
	case '[':
		a := []any{}
		for dec.More() {
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token() // ']'
		return a, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// compact returns the canonical encoding of v.
func compact(v any) []byte {
	e := encoder{html: true}
	e.value(v, 0)
	return e.buf.Bytes()
}

// pretty returns v indented by two spaces, one member or element a line,
// with <, > and & left as they are: for people, not for hashing.
func pretty(v any) string {
	e := encoder{indent: "  "}
	e.value(v, 0)
	return e.buf.String()
}

// encoder writes a parsed JSON value.
type encoder struct {
	buf    bytes.Buffer
	indent string // "" for compact
	html   bool   // escape <, > and & as encoding/json does by default
	str    bytes.Buffer
}

func (e *encoder) newline(depth int) {
	if e.indent == "" {
		return
	}
	e.buf.WriteByte('\n')
	for range depth {
		e.buf.WriteString(e.indent)
	}
}

func (e *encoder) value(v any, depth int) {
	switch v := v.(type) {
	case nil:
		e.buf.WriteString("null")
	case bool:
		if v {
			e.buf.WriteString("true")
		} else {
			e.buf.WriteString("false")
		}
	case json.Number:
		e.buf.WriteString(string(v))
	case string:
		e.string(v)
	case []any:
		if len(v) == 0 {
			e.buf.WriteString("[]")
			return
		}
		e.buf.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				e.buf.WriteByte(',')
			}
			e.newline(depth + 1)
			e.value(x, depth+1)
		}
		e.newline(depth)
		e.buf.WriteByte(']')
	case object:
		if len(v) == 0 {
			e.buf.WriteString("{}")
			return
		}
		e.buf.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				e.buf.WriteByte(',')
			}
			e.newline(depth + 1)
			e.string(m.key)
			e.buf.WriteByte(':')
			if e.indent != "" {
				e.buf.WriteByte(' ')
			}
			e.value(m.val, depth+1)
		}
		e.newline(depth)
		e.buf.WriteByte('}')
	default:
		// Only parse and Definition build values, and they build none
		// of another type.
		panic(fmt.Sprintf("drift: unexpected JSON value type %T", v))
	}
}

// string writes s in encoding/json's encoding.
func (e *encoder) string(s string) {
	e.str.Reset()
	enc := json.NewEncoder(&e.str)
	enc.SetEscapeHTML(e.html)
	_ = enc.Encode(s) // a string always encodes
	e.buf.Write(bytes.TrimSuffix(e.str.Bytes(), []byte("\n")))
}
