package host_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestServerNamesWithColons runs real servers "gh" and "gh:sub" side by
// side with no prefix configured: "gh:sub" gets the derived prefix
// "gh_sub", and each server's tools answer by model-facing name and by
// canonical ID.
func TestServerNamesWithColons(t *testing.T) {
	t.Parallel()
	h := open(t, parse(t, map[string]any{
		"gh":     child(t, testkit.ModeServer, nil),
		"gh:sub": child(t, testkit.ModeServer, nil),
	}, nil))
	ids := map[string]string{} // model-facing name -> canonical ID
	for _, tl := range h.Tools() {
		ids[tl.Name] = tl.ID
	}
	for _, tt := range []struct{ name, id, server string }{
		{"gh__echo", "gh:echo", "gh"},
		{"gh_sub__echo", "gh:sub:echo", "gh:sub"},
	} {
		if got := ids[tt.name]; got != tt.id {
			t.Errorf("tool %s has ID %q, want %q", tt.name, got, tt.id)
		}
		for _, name := range []string{tt.name, tt.id} {
			res := call(t, h, name, `{"text":"hi"}`)
			if res.Server != tt.server || res.Tool != tt.id || res.IsError || !strings.Contains(res.Text, "hi") {
				t.Errorf("Call(%s) = server %q, tool %q, isError %t, text %q; want server %q, tool %q", name, res.Server, res.Tool, res.IsError, res.Text, tt.server, tt.id)
			}
		}
	}
	if _, err := h.Call(context.Background(), "gh:sub:nope", nil, nil); err == nil {
		t.Error(`Call("gh:sub:nope") succeeded`)
	}
}

// TestResourceOwnerAndBareURIs runs real servers "memory", "memory2" and
// "test" (named after the scheme of the URIs they all offer). A URI several
// servers offer belongs to the first in server-name order ("memory", though
// "memory2:…" sorts before "memory:…" as a string), and a bare URI is read
// from it even though "test://static" also parses as an ID of server
// "test"; canonical IDs still reach each server.
func TestResourceOwnerAndBareURIs(t *testing.T) {
	t.Parallel()
	h := open(t, parse(t, map[string]any{
		"memory":  child(t, testkit.ModeServer, nil),
		"memory2": child(t, testkit.ModeServer, nil),
		"test":    child(t, testkit.ModeServer, nil),
	}, nil))
	var servers []string
	for _, r := range h.View(host.Caller{}).Resources() {
		if r.URI == "test://static" {
			servers = append(servers, r.Server)
		}
	}
	if want := []string{"memory", "memory2", "test"}; !slices.Equal(servers, want) {
		t.Errorf("servers of test://static in Resources order = %q, want %q", servers, want)
	}
	servers = nil
	for _, tm := range h.View(host.Caller{}).Templates() {
		servers = append(servers, tm.Server)
	}
	if want := []string{"memory", "memory2", "test"}; !slices.Equal(servers, want) {
		t.Errorf("template servers in Templates order = %q, want %q", servers, want)
	}
	ctx := context.Background()
	for _, tt := range []struct{ in, id, text string }{
		{"test://static", "memory:test://static", "static text"},
		{"test://items/7", "memory:test://items/7", "item 7"},
		{"memory:test://static", "memory:test://static", "static text"},
		{"memory2:test://static", "memory2:test://static", "static text"},
		{"test:test://static", "test:test://static", "static text"},
		{"test:test://items/8", "test:test://items/8", "item 8"},
	} {
		res, err := h.ReadResource(ctx, tt.in)
		if err != nil {
			t.Errorf("ReadResource(%q): %v", tt.in, err)
			continue
		}
		if res.ID != tt.id || res.Text != tt.text {
			t.Errorf("ReadResource(%q) = ID %q, text %q; want %q, %q", tt.in, res.ID, res.Text, tt.id, tt.text)
		}
	}
	// The built-in tool takes the same forms.
	if res := call(t, h, host.ReadResourceTool, `{"id":"test://static"}`); res.IsError || !strings.Contains(res.Text, "static text") {
		t.Errorf("%s test://static: isError %t, text %q", host.ReadResourceTool, res.IsError, res.Text)
	}
	if _, err := h.ReadResource(ctx, "nosuch:test://static"); err == nil {
		t.Error(`ReadResource("nosuch:test://static") succeeded`)
	}
}
