package host_test

import (
	"encoding/json"
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
		map[string]any{"context": map[string]any{"deferTools": true}}, nil)
	r.mustReady(t, "hostile")
	var held *host.Tool
	for _, tl := range r.Search("add numbers", 5) {
		if tl.Name == "hostile__add_numbers" {
			held = &tl
		}
	}
	if held == nil {
		t.Fatalf("search for the held add_numbers: %+v", r.Search("add numbers", 5))
	}
	if !held.Held || held.Server != "hostile" || held.ID != "hostile:add_numbers" || held.Description != "" || held.Title != "" || held.InputSchema != nil {
		t.Errorf("held tool in search: %+v, want names only and Held", *held)
	}
	res := r.call(t, host.ToolSearch, `{"query":"add numbers"}`)
	var out struct {
		Tools []struct{ Name string } `json:"tools"`
		Held  []struct {
			Name, Server, Status string
		} `json:"held"`
	}
	structured(t, res, &out)
	if len(out.Held) != 1 || out.Held[0].Name != "hostile__add_numbers" || out.Held[0].Server != "hostile" || out.Held[0].Status != host.HeldStatus {
		t.Errorf("tool_search held = %+v", out.Held)
	}
	for _, tl := range out.Tools {
		if tl.Name == "hostile__add_numbers" {
			t.Errorf("tool_search gives the held tool as a tool")
		}
	}
	raw, _ := json.Marshal(res)
	for _, leak := range []string{"id_rsa", "sidenote", "approve", "onInjection"} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("tool_search's result holds %q: %s", leak, raw)
		}
	}
	// A request that names no held tool shows none.
	for _, tl := range r.Search("echo text", 5) {
		if tl.Held {
			t.Errorf("search for echo shows held %s", tl.Name)
		}
	}
}
