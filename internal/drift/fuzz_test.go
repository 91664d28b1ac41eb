package drift

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzDefinition checks, for a tool decoded from any JSON, that Definition
// works, gives valid JSON and is idempotent (the definition, decoded back
// into a tool, has the same definition), and that Diff of it is safe for a
// terminal. The same bytes are also tried as a raw schema, which may be
// rejected but must then be stable too.
func FuzzDefinition(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"name":"search","title":"Web search","description":"Search.\nTen results.","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`,
		`{"name":"n","inputSchema":{"maximum":1.0,"minimum":-0,"big":123456789012345678901234567890,"e":1e400}}`,
		`{"name":"d","inputSchema":{"type":"object","type":"string"}}`,
		`{"name":"x\u001b[2J","description":"\u202e\udb40\udc41 <b>&amp;</b> \\x1b","annotations":{}}`,
		`{"name":"a","annotations":{"destructiveHint":true,"idempotentHint":false,"title":""},"_meta":{"k":1},"icons":[{"src":"x"}]}`,
		`{"name":"s","inputSchema":"not a schema","outputSchema":[1,[2,{}]]}`,
		`{"name":"s","inputSchema":null,"outputSchema":{}}`,
		"{\"description\":\"\xff\xfe\"}",
	} {
		f.Add([]byte(s))
	}
	other := func(t *testing.T) []byte {
		def, err := Definition(searchTool())
		if err != nil {
			t.Fatal(err)
		}
		return def
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tool mcp.Tool
		if json.Unmarshal(data, &tool) == nil {
			def, err := Definition(&tool)
			if err != nil {
				t.Fatalf("Definition of decoded %q: %v", data, err)
			}
			if !json.Valid(def) {
				t.Fatalf("Definition of %q = %q: not valid JSON", data, def)
			}
			var again mcp.Tool
			if err := json.Unmarshal(def, &again); err != nil {
				t.Fatalf("decoding Definition %q: %v", def, err)
			}
			def2, err := Definition(&again)
			if err != nil || !bytes.Equal(def, def2) {
				t.Fatalf("Definition not idempotent on %q:\n%s\n%s, %v", data, def, def2, err)
			}
			assertPrintable(t, Diff(Change{Tool: tool.Name, Old: other(t), New: def}))
			assertPrintable(t, Diff(Change{Tool: tool.Name, Old: def}))
		}

		raw := &mcp.Tool{Name: "raw", InputSchema: json.RawMessage(data)}
		if def, err := Definition(raw); err == nil {
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(def, &fields); err != nil {
				t.Fatalf("Definition with schema %q = %q: %v", data, def, err)
			}
			raw.InputSchema = fields["inputSchema"] // a nil RawMessage marshals as null
			def2, err := Definition(raw)
			if err != nil || !bytes.Equal(def, def2) {
				t.Fatalf("Definition not idempotent on schema %q:\n%s\n%s, %v", data, def, def2, err)
			}
		}
		assertPrintable(t, Diff(Change{Tool: "x", Old: data, New: other(t)}))
		assertPrintable(t, Diff(Change{Old: data, New: InstructionsDefinition(string(data))}))
	})
}
