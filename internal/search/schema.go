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
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			break
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		params = append(params, Param{Name: name, Description: truncate(describe(raw, maxAltDepth), maxParamDescBytes)})
	}
	return params
}

// maxAltDepth bounds how deep describe looks into a property's
// alternatives.
const maxAltDepth = 2

// describe returns the description of the schema raw: its "description",
// else its "title", else, depth levels down at most, the first description
// of the schemas it stands for, its "anyOf", "oneOf" and "allOf"
// alternatives in order and then its "items". Generated schemas put an
// optional or nullable property's description on one of its alternatives
// ({"anyOf": [{"description": "The page that contains the comment", ...},
// {"type": "null"}]}). Properties of a nested object are not its
// description. A schema that is not an object has none.
func describe(raw json.RawMessage, depth int) string {
	var prop struct {
		Description, Title  json.RawMessage
		AnyOf, OneOf, AllOf []json.RawMessage
		Items               json.RawMessage
	}
	if json.Unmarshal(raw, &prop) != nil {
		// Not an object, or an alternative list that is not an array:
		// its description and title may still be there.
		var plain struct{ Description, Title json.RawMessage }
		if json.Unmarshal(raw, &plain) != nil {
			return ""
		}
		prop.Description, prop.Title = plain.Description, plain.Title
	}
	if d := jsonString(prop.Description); d != "" {
		return d
	}
	if d := jsonString(prop.Title); d != "" {
		return d
	}
	if depth == 0 {
		return ""
	}
	for _, alts := range [][]json.RawMessage{prop.AnyOf, prop.OneOf, prop.AllOf, {prop.Items}} {
		for _, a := range alts {
			if len(a) == 0 {
				continue
			}
			if d := describe(a, depth-1); d != "" {
				return d
			}
		}
	}
	return ""
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
