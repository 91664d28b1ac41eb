package search

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Bounds on what ParamsFromSchema returns, so that a hostile schema costs
// bounded memory in the index.
const (
	maxParams         = 256
	maxParamDescBytes = 1024
)

// ParamsFromSchema returns the names and descriptions of the top-level
// properties of a JSON Schema, in the order the schema lists them. It is
// tolerant of junk: a schema that is not a JSON object, or whose
// "properties" is not an object, yields nil, and a property whose
// "description" is not a string has none (its "title" is used when that is
// a string). The first of duplicate property names wins. At most 256
// params are returned, and descriptions are cut to 1 KiB.
func ParamsFromSchema(schema []byte) []Param {
	var top struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &top) != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var params []Param
	seen := map[string]bool{}
	for dec.More() && len(params) < maxParams {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		name, _ := tok.(string)
		var prop struct {
			Description, Title json.RawMessage
		}
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			break
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		_ = json.Unmarshal(raw, &prop) // a non-object property has neither
		desc := jsonString(prop.Description)
		if desc == "" {
			desc = jsonString(prop.Title)
		}
		params = append(params, Param{Name: name, Description: truncate(desc, maxParamDescBytes)})
	}
	return params
}

// jsonString returns raw as a string if it is a JSON string, else "".
func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// truncate cuts s to at most n bytes, at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
