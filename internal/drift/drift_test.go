package drift

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func ptr[T any](v T) *T { return &v }

// searchTool returns a fresh copy of a typical tool.
func searchTool() *mcp.Tool {
	return &mcp.Tool{
		Name:         "search",
		Title:        "Web search",
		Description:  "Search the web.\nReturns up to ten results.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what to look for"}},"required":["query"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"results":{"type":"array"}}}`),
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)},
	}
}

func mustDefinition(t *testing.T, tool *mcp.Tool) []byte {
	t.Helper()
	def, err := Definition(tool)
	if err != nil {
		t.Fatalf("Definition(%q): %v", tool.Name, err)
	}
	return def
}

func TestDefinitionCanonical(t *testing.T) {
	got := string(mustDefinition(t, searchTool()))
	want := `{"annotations":{"openWorldHint":true,"readOnlyHint":true},` +
		`"description":"Search the web.\nReturns up to ten results.",` +
		`"inputSchema":{"properties":{"query":{"description":"what to look for","type":"string"}},"required":["query"],"type":"object"},` +
		`"name":"search",` +
		`"outputSchema":{"properties":{"results":{"type":"array"}},"type":"object"},` +
		`"title":"Web search"}`
	if got != want {
		t.Errorf("Definition =\n%s\nwant\n%s", got, want)
	}
}

// TestDefinitionEqual lists pairs of tools that must have equal definitions.
func TestDefinitionEqual(t *testing.T) {
	tests := []struct {
		name string
		a, b func(*mcp.Tool)
	}{
		{"key order in schema",
			func(*mcp.Tool) {},
			func(t *mcp.Tool) {
				t.InputSchema = json.RawMessage(`{"required":["query"],"properties":{"query":{"description":"what to look for","type":"string"}},"type":"object"}`)
			}},
		{"whitespace in schema",
			func(*mcp.Tool) {},
			func(t *mcp.Tool) {
				t.InputSchema = json.RawMessage("{ \"type\" : \"object\",\n\t\"properties\": {\"query\": {\"type\": \"string\", \"description\": \"what to look for\"}},\r\n \"required\": [ \"query\" ] }")
			}},
		{"raw schema or decoded map",
			func(*mcp.Tool) {},
			func(t *mcp.Tool) {
				t.InputSchema = map[string]any{
					"type":       "object",
					"required":   []any{"query"},
					"properties": map[string]any{"query": map[string]any{"type": "string", "description": "what to look for"}},
				}
			}},
		{"escapes in schema strings",
			func(*mcp.Tool) {},
			func(t *mcp.Tool) {
				t.InputSchema = json.RawMessage(`{"type":"\u006fbject","properties":{"query":{"type":"string","description":"what to look for"}},"required":["query"]}`)
			}},
		{"annotations nil and empty",
			func(t *mcp.Tool) { t.Annotations = nil },
			func(t *mcp.Tool) { t.Annotations = &mcp.ToolAnnotations{} }},
		{"annotations nil and all-default plain bools",
			func(t *mcp.Tool) { t.Annotations = nil },
			func(t *mcp.Tool) { t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: false, IdempotentHint: false} }},
		{"null output schema",
			func(t *mcp.Tool) { t.OutputSchema = nil },
			func(t *mcp.Tool) { t.OutputSchema = json.RawMessage(`null`) }},
		{"typed nil schema",
			func(t *mcp.Tool) { t.OutputSchema = nil },
			func(t *mcp.Tool) { t.OutputSchema = map[string]any(nil) }},
		{"_meta and icons ignored",
			func(*mcp.Tool) {},
			func(t *mcp.Tool) {
				t.Meta = mcp.Meta{"trace": "abc"}
				t.Icons = []mcp.Icon{{Source: "https://example.com/i.png"}}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := searchTool(), searchTool()
			tt.a(a)
			tt.b(b)
			da, db := mustDefinition(t, a), mustDefinition(t, b)
			if string(da) != string(db) || Hash(da) != Hash(db) {
				t.Errorf("definitions differ:\n%s\n%s", da, db)
			}
		})
	}
}

// TestDefinitionDiffers changes one thing at a time; each must change the
// hash.
func TestDefinitionDiffers(t *testing.T) {
	tests := []struct {
		name   string
		change func(*mcp.Tool)
	}{
		{"name", func(t *mcp.Tool) { t.Name = "search2" }},
		{"title", func(t *mcp.Tool) { t.Title = "Search" }},
		{"title removed", func(t *mcp.Tool) { t.Title = "" }},
		{"description", func(t *mcp.Tool) { t.Description += " Also reads ~/.ssh." }},
		{"description whitespace", func(t *mcp.Tool) { t.Description += " " }},
		{"input schema property", func(t *mcp.Tool) {
			t.InputSchema = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what to look for"},"notes":{"type":"string"}},"required":["query"]}`)
		}},
		{"input schema removed", func(t *mcp.Tool) { t.InputSchema = nil }},
		{"input schema array order", func(t *mcp.Tool) {
			t.InputSchema = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what to look for"}},"required":["query","x"]}`)
		}},
		{"output schema", func(t *mcp.Tool) { t.OutputSchema = json.RawMessage(`{"type":"object"}`) }},
		{"output schema removed", func(t *mcp.Tool) { t.OutputSchema = nil }},
		{"annotations removed", func(t *mcp.Tool) { t.Annotations = nil }},
		{"readOnlyHint", func(t *mcp.Tool) { t.Annotations.ReadOnlyHint = false }},
		{"idempotentHint", func(t *mcp.Tool) { t.Annotations.IdempotentHint = true }},
		{"destructiveHint set", func(t *mcp.Tool) { t.Annotations.DestructiveHint = ptr(false) }},
		{"destructiveHint set to its default", func(t *mcp.Tool) { t.Annotations.DestructiveHint = ptr(true) }},
		{"openWorldHint", func(t *mcp.Tool) { t.Annotations.OpenWorldHint = ptr(false) }},
		{"openWorldHint unset", func(t *mcp.Tool) { t.Annotations.OpenWorldHint = nil }},
		{"annotations title", func(t *mcp.Tool) { t.Annotations.Title = "Search" }},
	}
	base := mustDefinition(t, searchTool())
	seen := map[string]string{Hash(base): "base"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := searchTool()
			tt.change(tool)
			h := Hash(mustDefinition(t, tool))
			if other, ok := seen[h]; ok {
				t.Errorf("same hash as %q: %s", other, h)
			}
			seen[h] = tt.name
		})
	}
}

func TestDefinitionNumbers(t *testing.T) {
	def := func(schema string) string {
		t.Helper()
		tool := &mcp.Tool{Name: "n", InputSchema: json.RawMessage(schema)}
		return string(mustDefinition(t, tool))
	}
	// Numbers are kept as written: 1.0 and 1 are different definitions
	// (see Definition), and big or precise numbers lose nothing.
	if a, b := def(`{"maximum":1.0}`), def(`{"maximum":1}`); a == b {
		t.Errorf("1.0 and 1 give the same definition %s", a)
	}
	for _, n := range []string{"1.0", "1e3", "1E+3", "-0", "123456789012345678901234567890", "0.1000000000000000055511151231257827"} {
		want := `{"inputSchema":{"maximum":` + n + `},"name":"n"}`
		if got := def(`{"maximum": ` + n + ` }`); got != want {
			t.Errorf("number %s: got %s, want %s", n, got, want)
		}
	}
}

func TestDefinitionStrings(t *testing.T) {
	tool := &mcp.Tool{
		Name:        "s",
		Description: "a<b & \x1b[2J \u2028 \xff",
		InputSchema: json.RawMessage(`{"description":"<\u003c>"}`),
	}
	got := string(mustDefinition(t, tool))
	want := `{"description":"a\u003cb \u0026 \u001b[2J \u2028 \ufffd","inputSchema":{"description":"\u003c\u003c\u003e"},"name":"s"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestDefinitionErrors(t *testing.T) {
	tests := []struct {
		name string
		tool *mcp.Tool
		want string
	}{
		{"nil tool", nil, "nil tool"},
		{"duplicate key", &mcp.Tool{Name: "d", InputSchema: json.RawMessage(`{"type":"object","type":"string"}`)}, `duplicate object key "type"`},
		{"duplicate key by escape", &mcp.Tool{Name: "d", OutputSchema: json.RawMessage(`{"a":{"x":1,"\u0078":2}}`)}, `duplicate object key "x"`},
		{"invalid JSON", &mcp.Tool{Name: "d", InputSchema: json.RawMessage(`{"type":`)}, "inputSchema"},
		{"not marshalable", &mcp.Tool{Name: "d", InputSchema: func() {}}, "inputSchema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, err := Definition(tt.tool)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Definition = %s, %v; want an error containing %q", def, err, tt.want)
			}
		})
	}
}

func TestInstructionsDefinition(t *testing.T) {
	for s, want := range map[string]string{
		"":                        `""`,
		"Use search first.\n<ok>": `"Use search first.\n\u003cok\u003e"`,
	} {
		if got := string(InstructionsDefinition(s)); got != want {
			t.Errorf("InstructionsDefinition(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestHash(t *testing.T) {
	// SHA-256 of the empty string.
	const want = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	if got := Hash(nil); got != want {
		t.Errorf("Hash(nil) = %s, want %s", got, want)
	}
}

func TestCompare(t *testing.T) {
	a, b, c := []byte(`{"name":"a"}`), []byte(`{"name":"b"}`), []byte(`{"description":"x","name":"c"}`)
	b2 := []byte(`{"description":"now different","name":"b"}`)
	instr, instr2 := InstructionsDefinition("old"), InstructionsDefinition("new")
	tests := []struct {
		name            string
		pinned, current map[string][]byte
		want            []Change
	}{
		{"both empty", nil, nil, nil},
		{"unchanged", map[string][]byte{"a": a, "b": b}, map[string][]byte{"b": b, "a": append([]byte(nil), a...)}, nil},
		{"added", map[string][]byte{"a": a}, map[string][]byte{"a": a, "c": c}, []Change{{Tool: "c", New: c}}},
		{"removed", map[string][]byte{"a": a, "b": b}, map[string][]byte{"a": a}, []Change{{Tool: "b", Old: b}}},
		{"changed", map[string][]byte{"a": a, "b": b}, map[string][]byte{"a": a, "b": b2}, []Change{{Tool: "b", Old: b, New: b2}}},
		{"nil counts as absent", map[string][]byte{"a": a, "z": nil}, map[string][]byte{"a": a, "y": nil}, nil},
		{"all at once, sorted, instructions first",
			map[string][]byte{"": instr, "a": a, "b": b, "z": a},
			map[string][]byte{"": instr2, "c": c, "b": b2, "z": a},
			[]Change{{Tool: "", Old: instr, New: instr2}, {Tool: "a", Old: a}, {Tool: "b", Old: b, New: b2}, {Tool: "c", New: c}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(tt.pinned, tt.current)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Compare (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPromptAndTemplateDefinition(t *testing.T) {
	p := &mcp.Prompt{Name: "p", Description: "d", Meta: mcp.Meta{"x": 1}, Arguments: []*mcp.PromptArgument{{Name: "a", Required: true}}}
	got, err := PromptDefinition(p)
	if err != nil || string(got) != `{"arguments":[{"name":"a","required":true}],"description":"d","name":"p"}` {
		t.Errorf("PromptDefinition = %s, %v", got, err)
	}
	tt := &mcp.ResourceTemplate{Name: "t", URITemplate: "x://{id}", MIMEType: "text/plain", Meta: mcp.Meta{"y": 2}}
	got, err = TemplateDefinition(tt)
	if err != nil || string(got) != `{"mimeType":"text/plain","name":"t","uriTemplate":"x://{id}"}` {
		t.Errorf("TemplateDefinition = %s, %v", got, err)
	}
}
