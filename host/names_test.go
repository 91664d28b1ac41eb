package host_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestServerNamesWithColons runs real servers "gh" and "gh:sub" side by
// side with no prefix configured: "gh:sub" gets the derived prefix
// "gh_sub", and each server's tools answer by model-facing name and by
// canonical ID.
func TestServerNamesWithColons(t *testing.T) {
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
