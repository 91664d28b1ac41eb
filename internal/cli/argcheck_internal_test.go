package cli

import (
	"encoding/json"
	"testing"
)

// FuzzCheckArgs: schemas come from servers and arguments from the
// command line; no pair may panic the check, and a refusal always says why.
func FuzzCheckArgs(f *testing.F) {
	f.Add(`{"a":1}`, `{"type":"object","properties":{"a":{"type":"number"}},"required":["a"],"additionalProperties":false}`)
	f.Add(`{"x":"y"}`, `{"type":"object","properties":{"x":{"$ref":"#/$defs/missing"}}}`)
	f.Add(`{}`, `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`)
	f.Add(`{"a":[1,{"b":null}]}`, `{"type":"object","properties":{"a":{"type":["array","null"],"items":{"anyOf":[{"type":"integer"},{"type":"object"}]}}}}`)
	f.Add(`{"a":1}`, `true`)
	f.Add(`{"a":1}`, `{"type":"object","patternProperties":{"^x":{}},"additionalProperties":{"type":"string"}}`)
	f.Fuzz(func(t *testing.T, args, schema string) {
		if !json.Valid([]byte(args)) {
			return
		}
		c := checkArgs(json.RawMessage(args), json.RawMessage(schema))
		for _, p := range c.problems {
			if p == "" {
				t.Fatalf("empty problem for %s against %s", args, schema)
			}
		}
	})
}
