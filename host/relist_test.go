package host_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// floodServer returns a ModeFlood server entry and the file in which it
// counts the tools/list requests it gets.
func floodServer(t *testing.T) (entry map[string]any, lists func() int) {
	t.Helper()
	mark := filepath.Join(t.TempDir(), "lists")
	env := testkit.ChildEnv(testkit.ModeFlood)
	env[testkit.MarkVar] = mark
	return map[string]any{"command": self(t), "env": env}, func() int {
		data, _ := os.ReadFile(mark)
		return strings.Count(string(data), "list\n")
	}
}

// TestFailedRelistKeepsTheLists: a re-listing that fails leaves the
// server's tools as they were, and they still work.
func TestFailedRelistKeepsTheLists(t *testing.T) {
	var logs syncBuf
	entry, lists := floodServer(t)
	h := openWith(t, parse(t, map[string]any{"s": entry}, nil),
		&host.Options{StopTimeout: 500 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	names := func() []string {
		var out []string
		for _, tool := range h.Tools() {
			out = append(out, tool.Name)
		}
		slices.Sort(out)
		return out
	}
	want := names()
	if !slices.Contains(want, "s__echo") {
		t.Fatalf("tools before: %v", want)
	}
	before := lists()
	call(t, h, "s__break", `{}`)
	if !proc.Eventually(10*time.Second, func() bool {
		return lists() > before && strings.Contains(logs.String(), "re-listing after list_changed failed")
	}) {
		t.Fatalf("no failed re-listing:\n%s", logs.String())
	}
	if got := names(); !slices.Equal(got, want) {
		t.Errorf("tools after a failed re-listing = %v; want %v", got, want)
	}
	if got := call(t, h, "s__echo", `{"text":"still"}`).Text; got != "still" {
		t.Errorf("echo after a failed re-listing = %q", got)
	}
}
