package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaFor infers the JSON Schema of t (pointers dereferenced) with
// jsonschema-go, which takes property names from json tags and
// descriptions from `jsonschema:"…"` tags, and adds descriptions from
// `description:"…"` tags.
func schemaFor(t reflect.Type) (*jsonschema.Schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		return nil, err
	}
	describe(t, s, map[reflect.Type]bool{})
	return s, nil
}

// describe copies `description:"…"` struct tags into the schema's
// property descriptions, where jsonschema-go left none.
func describe(t reflect.Type, s *jsonschema.Schema, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
		if s != nil && s.Items != nil && t.Kind() != reflect.Pointer {
			s = s.Items
		}
	}
	if s == nil || t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("json"); ok {
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" {
				continue
			}
			if n != "" {
				name = n
			}
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if _, ok := f.Tag.Lookup("json"); !ok {
				describe(f.Type, s, seen)
				continue
			}
		}
		p := s.Properties[name]
		if p == nil {
			continue
		}
		if d := f.Tag.Get("description"); d != "" && p.Description == "" {
			p.Description = d
		}
		describe(f.Type, p, seen)
	}
}

// schemaType returns the JSON type a schema names ("" for none or many).
func schemaType(s *jsonschema.Schema) string {
	if s == nil {
		return ""
	}
	if s.Type != "" {
		return s.Type
	}
	var nonNull []string
	for _, t := range s.Types {
		if t != "null" {
			nonNull = append(nonNull, t)
		}
	}
	if len(nonNull) == 1 {
		return nonNull[0]
	}
	return ""
}

// wrapResult returns the advertised output schema for a result schema: an
// object schema as it is, anything else as {"result": schema}, since MCP
// requires structuredContent (and so the output schema) to be an object.
func wrapResult(s *jsonschema.Schema) (*jsonschema.Schema, bool) {
	if schemaType(s) == "object" {
		return s, false
	}
	return &jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{"result": s},
		Required:   []string{"result"},
	}, true
}

// stringArgs turns string values (URI template variables, prompt
// arguments) into a JSON object of the types s declares for them, so that
// {id} can fill an int field. A value that does not parse as its declared
// type is an invalid-params error.
func stringArgs(s *jsonschema.Schema, vals map[string]string) (map[string]any, error) {
	out := make(map[string]any, len(vals))
	for k, v := range vals {
		var p *jsonschema.Schema
		if s != nil {
			p = s.Properties[k]
		}
		switch schemaType(p) {
		case "integer":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, InvalidParams("%s: %q is not an integer", k, v)
			}
			out[k] = n
		case "number":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, InvalidParams("%s: %q is not a number", k, v)
			}
			out[k] = f
		case "boolean":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, InvalidParams("%s: %q is not a boolean", k, v)
			}
			out[k] = b
		default:
			out[k] = v
		}
	}
	return out, nil
}

// decodeInto validates v (a JSON value as decoded into any) against rs,
// applying defaults first, and unmarshals it into a new T.
func decodeInto[T any](rs *jsonschema.Resolved, v any) (T, error) {
	var zero T
	if rs != nil {
		if m, ok := v.(map[string]any); ok {
			if err := rs.ApplyDefaults(&m); err != nil {
				return zero, err
			}
			v = m
		}
		if err := rs.Validate(v); err != nil {
			return zero, err
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return zero, err
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		return zero, err
	}
	return out, nil
}

// resolve resolves a schema given as a *jsonschema.Schema, JSON bytes or
// any value that marshals to a schema.
func resolve(schema any) (*jsonschema.Schema, *jsonschema.Resolved, error) {
	var s *jsonschema.Schema
	switch x := schema.(type) {
	case *jsonschema.Schema:
		s = x
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return nil, nil, err
		}
		s = new(jsonschema.Schema)
		if err := json.Unmarshal(b, s); err != nil {
			return nil, nil, err
		}
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return nil, nil, err
	}
	return s, rs, nil
}

// marshalJSON marshals v without escaping <, > and &, which tool results
// carry to models verbatim.
func marshalJSON(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// SnakeCase turns a Go identifier into snake case: GetWeather and
// getWeather become get_weather, HTTPServer becomes http_server.
func SnakeCase(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]))
			nextLower := i > 0 && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])
			if (prevLower || nextLower) && b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkName reports whether name is a valid tool or prompt name (SEP-986:
// 1 to 128 of A-Z a-z 0-9 _ - .).
func checkName(name string) error {
	if name == "" || len(name) > 128 {
		return fmt.Errorf("name %q must be 1 to 128 characters long", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("name %q may only contain A-Z, a-z, 0-9, _, - and .", name)
		}
	}
	return nil
}
