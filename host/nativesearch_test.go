package host_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestProviderNativeDeferred: with deferred tools, the anthropic and
// openai-responses formats write the provider's own deferred loading:
// its tool search tool first, every tool given, the deferred ones marked
// (grouped by server into namespaces for OpenAI), Switchboard's search
// built-ins left out, and a deferred tool's call resolved. Formats
// without a native search keep Switchboard's tool_search.
func TestProviderNativeDeferred(t *testing.T) {
	t.Parallel()
	h := openWith(t, parseDoc(t, map[string]any{
		"context":    map[string]any{"deferTools": true, "alwaysInclude": []string{"s__echo"}},
		"mcpServers": map[string]any{"s": child(t, testkit.ModeServer, nil)},
	}), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})

	type tool struct {
		Type, Name   string
		DeferLoading bool `json:"defer_loading"`
		Tools        []tool
	}
	decode := func(p *host.ProviderTools) []tool {
		t.Helper()
		var out []tool
		if err := json.Unmarshal(p.JSON(), &out); err != nil {
			t.Fatalf("%s: %v\n%s", p.Format, err, p.JSON())
		}
		return out
	}
	find := func(ts []tool, name string) *tool {
		for i := range ts {
			if ts[i].Name == name {
				return &ts[i]
			}
		}
		return nil
	}

	p, err := h.ProviderTools("anthropic")
	if err != nil {
		t.Fatal(err)
	}
	a := decode(p)
	if a[0].Type != "tool_search_tool_bm25_20251119" {
		t.Errorf("anthropic: first tool %+v, want its tool search tool", a[0])
	}
	if big := find(a, "s__big"); big == nil || !big.DeferLoading {
		t.Errorf("anthropic: s__big %+v, want it given with defer_loading", big)
	}
	if echo := find(a, "s__echo"); echo == nil || echo.DeferLoading {
		t.Errorf("anthropic: s__echo %+v, want it listed, not deferred (alwaysInclude)", echo)
	}
	if find(a, host.ToolSearch) != nil || find(a, host.DescribeTool) != nil {
		t.Errorf("anthropic: Switchboard's search given beside the native one")
	}
	if name, _, err := p.Resolve("s__big", json.RawMessage(`{"bytes":2}`)); err != nil || name != "s__big" {
		t.Errorf("Resolve of a deferred tool: %q, %v", name, err)
	}

	p, err = h.ProviderTools("openai-responses")
	if err != nil {
		t.Fatal(err)
	}
	o := decode(p)
	if o[0].Type != "tool_search" {
		t.Errorf("openai-responses: first tool %+v, want tool_search", o[0])
	}
	ns := find(o, "s")
	if ns == nil || ns.Type != "namespace" || find(ns.Tools, "s__big") == nil || !find(ns.Tools, "s__big").DeferLoading || find(ns.Tools, "s__echo") != nil {
		t.Errorf("openai-responses: namespace s %+v, want the deferred tools of s, deferred", ns)
	}
	if echo := find(o, "s__echo"); echo == nil || echo.Type != "function" {
		t.Errorf("openai-responses: s__echo %+v, want a listed function", echo)
	}

	p, err = h.ProviderTools("openai")
	if err != nil {
		t.Fatal(err)
	}
	var chat []struct{ Function struct{ Name string } }
	if err := json.Unmarshal(p.JSON(), &chat); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, c := range chat {
		names = append(names, c.Function.Name)
	}
	if !slices.Contains(names, host.ToolSearch) || slices.Contains(names, "s__big") {
		t.Errorf("openai: %v, want Switchboard's tool_search and no deferred tool", names)
	}
}
