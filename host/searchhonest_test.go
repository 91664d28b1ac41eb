package host_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestSearchHonest: tool_search puts a tool named in the request first,
// and says so, naming what it searches, when little of the request is in
// any tool (TestWithoutFill: nor does it pad an answer with tools that
// share no word with the request).
func TestSearchHonest(t *testing.T) {
	t.Parallel()
	h := openWith(t, parseDoc(t, map[string]any{
		"context":    map[string]any{"deferTools": true},
		"mcpServers": map[string]any{"s": child(t, testkit.ModeServer, nil)},
	}), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})

	res := call(t, h, host.ToolSearch, `{"query":"something large","k":5}`)
	got, _ := searched(t, res)
	if len(got) != 1 || got[0] != "s__big" {
		t.Fatalf("search for something large: %v, want s__big alone", got)
	}
	if strings.Contains(res.Text, "Little of the request") {
		t.Errorf("a request a tool answers got the hint:\n%s", res.Text)
	}

	res = call(t, h, host.ToolSearch, `{"query":"please run s__crash for me","k":5}`)
	if got, _ := searched(t, res); len(got) == 0 || got[0] != "s__crash" {
		t.Errorf("a tool named in the request: %v, want it first", got)
	}

	res = call(t, h, host.ToolSearch, `{"query":"order a margherita pizza for dinner","k":5}`)
	got, _ = searched(t, res)

	if !strings.Contains(res.Text, "Little of the request is in any tool here. This searches") || !strings.Contains(res.Text, "of s") {
		t.Errorf("a request no tool answers: no hint naming the server:\n%s", res.Text)
	}
	if slices.Contains(got, "s__big") {
		t.Errorf("a request no tool answers was padded with %v", got)
	}
}
