package host

import (
	"encoding/json"
	"sort"
	"strings"
)

// argShape describes a call's arguments by their keys and JSON types,
// never their values: {"path":"string","recursive":"boolean"}. It is what
// the audit log keeps.
func argShape(args json.RawMessage) string {
	if len(args) == 0 {
		return "{}"
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return "(not an object)"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.WriteString(`"` + jsonType(m[k]) + `"`)
	}
	b.WriteByte('}')
	return b.String()
}

func jsonType(v json.RawMessage) string {
	for _, c := range v {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return "object"
		case '[':
			return "array"
		case '"':
			return "string"
		case 't', 'f':
			return "boolean"
		case 'n':
			return "null"
		}
		return "number"
	}
	return "null"
}
