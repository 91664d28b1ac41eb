package profile

import (
	"encoding/json"
	"testing"
)

var fuzzSeeds = []string{
	`{}`, `true`, `false`, `null`, `[]`, `"x"`, `1`,
	`{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`,
	`{"type":"object","properties":{"a-b":{"type":"array"},"$c":{"type":"object"}}}`,
	`{"properties":{"n":{"$ref":"#"}}}`,
	`{"type":"object","properties":{"t":{"$ref":"#/$defs/t"}},"$defs":{"t":{"type":"object","properties":{"c":{"type":"array","items":{"$ref":"#/$defs/t"}}}}}}`,
	`{"allOf":[{"$ref":"#/definitions/a"},{"properties":{"b":true}}],"definitions":{"a":{"properties":{"a":false}}}}`,
	`{"anyOf":[{"type":"object","properties":{"x":{}}},{"type":"null"},true],"oneOf":[{"const":1},{"enum":["a",null]}]}`,
	`{"type":["object","null"],"properties":{"e":{"enum":[1,"a",null,{"k":[]}]},"f":{"type":"string","format":"uuid"}}}`,
	`{"type":"object","properties":{"x":{"type":"array","items":[{"type":"string"},{"$ref":"#/properties/x"}],"prefixItems":5}}}`,
	`{"type":"object","properties":{"m":{"type":"integer","minimum":1e400,"maxLength":-1,"minItems":1.5}},"dependencies":{"a":["b"],"c":{"$ref":"#"}}}`,
	`{"type":"object","properties":{"": {"$ref":"#/properties/%7E0~1"}, "~/":{"type":"boolean"}}}`,
	`{"type":"object","additionalProperties":{"$ref":"#/additionalProperties"}}`,
}

// FuzzSchema: whatever JSON a schema is, converting it must not panic,
// and an output must pass the provider's checker; Resolve must not panic
// on the converted tool either.
func FuzzSchema(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), []byte(`{"a":"{}","b":[1]}`))
	}
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		if !json.Valid(schema) {
			return
		}
		tools := []Tool{{Name: "fuzz.tool", InputSchema: schema}}
		for _, format := range []Format{OpenAI, OpenAIResponses, Anthropic, Gemini} {
			res, err := Convert(format, tools)
			if err != nil {
				// Only JSON the decoder refuses (nesting past
				// maxDecodeDepth, a repeated key) may fail.
				continue
			}
			if errs := checkTools(format, res.Tools); len(errs) > 0 {
				t.Fatalf("%s: schema %s converts to %s:\n%s", format, schema, res.Tools[0], errsString(errs))
			}
			again, _ := Convert(format, tools)
			if string(again.Tools[0]) != string(res.Tools[0]) {
				t.Fatalf("%s: not deterministic", format)
			}
			name, _ := res.Mapping.Name("fuzz.tool")
			orig, _, err := res.Mapping.Resolve(name, args)
			if err == nil && orig != "fuzz.tool" {
				t.Fatalf("%s: Resolve → %q", format, orig)
			}
		}
	})
}

// FuzzNames: any set of names converts to valid, unique names that
// resolve back.
func FuzzNames(f *testing.F) {
	f.Add("a", "b", "c")
	f.Add("a.b", "a:b", "a_b")
	f.Add("検索", "🔍", "")
	f.Add("1", "-", "_")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if a == b || b == c || a == c {
			return
		}
		tools := []Tool{{Name: a}, {Name: b}, {Name: c}}
		for _, format := range Formats() {
			res, err := Convert(format, tools)
			if err != nil {
				t.Fatal(err)
			}
			if format != MCP {
				if errs := checkTools(format, res.Tools); len(errs) > 0 {
					t.Fatalf("%s: %s", format, errsString(errs))
				}
			}
			for _, tool := range tools {
				n, _ := res.Mapping.Name(tool.Name)
				if orig, _, err := res.Mapping.Resolve(n, nil); err != nil || orig != tool.Name {
					t.Fatalf("%s: %q → %q → %q, %v", format, tool.Name, n, orig, err)
				}
			}
		}
	})
}
