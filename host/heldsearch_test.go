package host_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
)

// TestSearchShowsHeldToolsByNameOnly: a tool held for an injection
// pattern is found by search when the request names it, marked held for
// review, with its model-facing name and server and nothing of its
// (poisoned) definition; tool_search lists it apart from the tools it
// gives, without saying how to release it.
func TestSearchShowsHeldToolsByNameOnly(t *testing.T) {
	t.Parallel()
	// Deferred tools: tool_search is listed.
	r := openHostile(t, map[string]any{"hostile": hostileServer(t, hostile.ModePoison, nil, nil)},
		map[string]any{"context": map[string]any{"deferTools": true}, "profiles": map[string]any{"good": map[string]any{"servers": []string{"good"}}}}, nil)
	r.mustReady(t, "hostile")
	var held *host.Tool
	for _, tl := range r.SearchWords("add numbers", 5) {
		if tl.Name == "hostile__add_numbers" {
			held = &tl
		}
	}
	if held == nil {
		t.Fatalf("search for the held add_numbers: %+v", r.SearchWords("add numbers", 5))
	}
	if !held.Held || held.Server != "hostile" || held.ID != "hostile:add_numbers" || held.Description != "" || held.Title != "" || held.InputSchema != nil {
		t.Errorf("held tool in search: %+v, want names only and Held", *held)
	}
	res := r.call(t, host.ToolSearch, `{"query":"add numbers"}`)
	found, heldNames := searched(t, res)
	if len(heldNames) != 1 || heldNames[0] != "hostile__add_numbers (server hostile)" {
		t.Errorf("tool_search held = %q", heldNames)
	}
	if slices.Contains(found, "hostile__add_numbers") {
		t.Errorf("tool_search gives the held tool as a tool")
	}
	raw, _ := json.Marshal(res)
	for _, leak := range []string{"id_rsa", "sidenote", "approve", "onInjection"} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("tool_search's result holds %q: %s", leak, raw)
		}
	}
	// A caller whose profile leaves the hostile server out is not told of
	// its held tools, by name or otherwise.
	v := r.View(host.Caller{Profile: "good"})
	for _, tl := range func() []host.Tool { hits, _ := v.Search(t.Context(), "add numbers", 5); return hits }() {
		if tl.Server == "hostile" {
			t.Errorf("the profile's search shows %s of a server outside it", tl.Name)
		}
	}
	out, err := v.Call(t.Context(), host.ToolSearch, json.RawMessage(`{"query":"add numbers"}`), nil)
	if err != nil || strings.Contains(out.Text, "hostile") {
		t.Errorf("the profile's tool_search names the hostile server: %v %v", out, err)
	}
	// A request that names no held tool shows none.
	for _, tl := range r.SearchWords("echo text", 5) {
		if tl.Held {
			t.Errorf("search for echo shows held %s", tl.Name)
		}
	}
}
