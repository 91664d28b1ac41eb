package host_test

import (
	"slices"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestContextBudget: where a profile or a named client says how large its
// model's context window is, and the tools listed for it would take more
// than context.toolsShare of it, its servers' tools are deferred behind
// tool_search; a server whose own "deferTools" is false stays listed, and
// a caller whose window is large enough, or unknown, sees every tool.
func TestContextBudget(t *testing.T) {
	t.Parallel()
	h := openWith(t, parseDoc(t, map[string]any{
		"mcpServers": map[string]any{
			"s":    child(t, testkit.ModeServer, nil),
			"keep": child(t, testkit.ModeServer, map[string]any{"deferTools": false}),
		},
		"profiles": map[string]any{
			"small": map[string]any{"contextWindow": 8000},
			"large": map[string]any{"contextWindow": 1_000_000},
		},
		"clients": map[string]any{
			"phone": map[string]any{"tokenEnv": "SB_TEST_PHONE_TOKEN", "contextWindow": 8000},
		},
	}), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})

	names := func(c host.Caller) []string {
		var out []string
		for _, tool := range h.View(c).Tools() {
			out = append(out, tool.Name)
		}
		return out
	}
	for _, tc := range []struct {
		caller host.Caller
		over   bool
	}{
		{host.Caller{}, false},
		{host.Caller{Profile: "large"}, false},
		{host.Caller{Profile: "small"}, true},
		{host.Caller{Client: "phone"}, true},
		{host.Caller{Client: "phone", Profile: "large"}, false}, // the profile's window counts first
	} {
		got := names(tc.caller)
		if !slices.Contains(got, "keep__echo") {
			t.Errorf("%+v: a server with deferTools false left out: %v", tc.caller, got)
		}
		if over := !slices.Contains(got, "s__echo"); over != tc.over {
			t.Errorf("%+v: deferred = %v, want %v: %v", tc.caller, over, tc.over, got)
		}
		if hasSearch := slices.Contains(got, host.ToolSearch); hasSearch != tc.over {
			t.Errorf("%+v: tool_search listed = %v, want %v", tc.caller, hasSearch, tc.over)
		}
	}
	// The caller's search finds a deferred tool, marked as one.
	hits, err := h.View(host.Caller{Profile: "small"}).Search(t.Context(), "a large text result", 3)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(hits, func(tool host.Tool) bool { return tool.Name == "s__big" })
	if i < 0 || !hits[i].Deferred {
		t.Errorf("search over budget: %+v, want s__big found and deferred", hits)
	}
}
