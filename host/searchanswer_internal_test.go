package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/search"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/tokens"
)

// TestSearchAnswerTokens: over the dev set's 45 real servers and every
// request written for it, what a k=5 tool_search answer costs a model
// (internal/tokens' estimate, all parts counted): the full definitions in
// the text and again as structuredContent, as tool_search answered before,
// against the compact answer. The compact one stays within 1,500 tokens for
// every request; the figures go in docs/PERFORMANCE.md.
func TestSearchAnswerTokens(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "internal", "search", "testdata", "devset")
	ix := search.New()
	tools := map[string]Tool{}
	for _, tf := range testkit.ToolFiles(t, filepath.Join(dir, "tools")) {
		for _, tt := range tf.Tools {
			name := tf.Server + "__" + tt.Name
			tools[name] = Tool{Name: name, Server: tf.Server, Title: tt.Title, Description: tt.Description, InputSchema: json.RawMessage(tt.InputSchema)}
			ix.Upsert(search.Doc{ID: name, Name: name, Title: tt.Title, Description: tt.Description, Params: search.ParamsFromSchema(tt.InputSchema)})
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "queries_*.json"))
	var queries []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var qs []struct{ Query string }
		if err := json.Unmarshal(b, &qs); err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			queries = append(queries, q.Query)
		}
	}
	if len(queries) < 100 {
		t.Fatalf("%d requests in the dev set", len(queries))
	}
	var before, after []int
	for _, q := range queries {
		var hits []Tool
		var defs []definition
		for _, h := range ix.Search(q, 5) {
			hits = append(hits, tools[h.ID])
			defs = append(defs, tools[h.ID].definition())
		}
		old, err := jsonResult(map[string]any{"tools": defs})
		if err != nil {
			t.Fatal(err)
		}
		now, err := textResult(searchAnswer(q, "", hits, len(tools)))
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, tokens.Estimate(old))
		after = append(after, tokens.Estimate(now))
	}
	stats := func(xs []int) (median, p90, most int) {
		s := slices.Sorted(slices.Values(xs))
		return s[len(s)/2], s[len(s)*9/10], s[len(s)-1]
	}
	bm, b90, bx := stats(before)
	am, a90, ax := stats(after)
	t.Logf("%d requests over %d tools: k=5 answer tokens, median / p90 / max: full definitions twice %d / %d / %d; compact %d / %d / %d",
		len(queries), len(tools), bm, b90, bx, am, a90, ax)
	if ax > 1500 {
		t.Errorf("a compact k=5 answer costs %d tokens, over 1,500", ax)
	}
	desc := searchDescription("the 219 tools of github (26), filesystem (14), notion (19), slack (8), jira (31), linear (22), postgres (9), memory (9) and 4 more servers (tool_servers lists them)")
	t.Logf("tool_search's description with eight servers named: %d tokens", tokens.EstimateString(desc))
	if !strings.Contains(desc, "Searches the 219 tools") {
		t.Errorf("description: %s", desc)
	}
}

func TestSignature(t *testing.T) {
	t.Parallel()
	tests := []struct {
		schema, sig, notes string
	}{
		{`{"type":"object"}`, `f()`, ``},
		{`{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string","description":"the a"}},"required":["b"]}`,
			`f(b: integer, a?: string)`, `a: the a`},
		{`{"type":"object","properties":{"mode":{"enum":["r","w","x","y","z","q"]},"tags":{"type":"array","items":{"type":"string"}}}}`,
			`f(mode?: "r"|"w"|"x"|"y"|"z"|…, tags?: string[])`, ``},
		{`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"number"}]},"ids":{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}}`,
			`f(ids?: (string|integer)[], v?: string|number)`, ``},
		{`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"number"},"deep":{"type":"object","properties":{"y":{}}}},"required":["x"]}}}`,
			`f(o?: {x: number, deep?: object})`, ``},
		{`{"type":"object","properties":{"n":{"type":["string","null"],"description":"line one\n  line two"}}}`,
			`f(n?: string)`, `n: line one line two`},
		{`not json`, `f(…)`, ``},
	}
	for _, tt := range tests {
		sig, notes := signature("f", json.RawMessage(tt.schema))
		if sig != tt.sig || notes != tt.notes {
			t.Errorf("%s:\n got %q, %q\nwant %q, %q", tt.schema, sig, notes, tt.sig, tt.notes)
		}
	}
	// A schema with many parameters is cut, and says so.
	var props []string
	for i := range 60 {
		props = append(props, `"param_number_`+string(rune('a'+i%26))+string(rune('a'+i/26))+`":{"type":"string"}`)
	}
	sig, _ := signature("f", json.RawMessage(`{"type":"object","properties":{`+strings.Join(props, ",")+`}}`))
	if len(sig) > maxSignature+10 || !strings.HasSuffix(sig, ", …)") {
		t.Errorf("a long signature: %d bytes, %q", len(sig), sig)
	}
}
