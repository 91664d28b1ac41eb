package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// markedServer is a stdio server entry that appends a line to mark each
// time it is started (counted by starts), then becomes the testkit server in mode.
func markedServer(mode, mark string) map[string]any {
	exe, _ := os.Executable()
	return map[string]any{
		"command": "/bin/sh",
		"args":    []string{"-c", `echo start >> "$1"; exec "$0"`, exe, mark},
		"env":     testkit.ChildEnv(mode),
	}
}

// TestSearchStartsNoServer: search reads the saved catalogues and starts
// no server, neither one that was never discovered nor one that was.
func TestSearchStartsNoServer(t *testing.T) {
	dir := t.TempDir()
	good, hang := filepath.Join(dir, "good"), filepath.Join(dir, "hang")
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"good": markedServer(testkit.ModeServer, good),
		"hang": markedServer(testkit.ModeHang, hang),
	}})
	home := t.TempDir()
	cmd := func(args ...string) result {
		return run(t, append(args, "--config", path, "--home", home)...)
	}
	r := cmd("search", "echo", "the", "text")
	if r.code != 0 || strings.Contains(r.stdout, "good__echo") {
		t.Errorf("search before any discovery: exit %d, stdout %q, stderr %q; want no match", r.code, r.stdout, r.stderr)
	}
	if n, m := starts(t, good), starts(t, hang); n != 0 || m != 0 {
		t.Errorf("search started good %d and hang %d times; want none", n, m)
	}
	if r = cmd("tools", "good"); r.code != 0 || !strings.Contains(r.stdout, "good__echo") {
		t.Fatalf("tools good: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	startedGood, startedHang := starts(t, good), starts(t, hang)
	r = cmd("search", "echo", "the", "text")
	if r.code != 0 || !strings.Contains(r.stdout, "good__echo") {
		t.Errorf("search after discovery: exit %d, stdout %q, stderr %q; want good__echo", r.code, r.stdout, r.stderr)
	}
	if n, m := starts(t, good), starts(t, hang); n != startedGood || m != startedHang {
		t.Errorf("search started good %d and hang %d times; want none", n-startedGood, m-startedHang)
	}
}

// TestGetTouchesOneServer: get NAME starts NAME alone, and says nothing of
// the other servers, a failing one included.
func TestGetTouchesOneServer(t *testing.T) {
	dir := t.TempDir()
	one, other := filepath.Join(dir, "one"), filepath.Join(dir, "other")
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"one":   markedServer(testkit.ModeServer, one),
		"other": markedServer(testkit.ModeExit, other),
	}})
	r := run(t, "get", "one", "--config", path)
	if r.code != 0 || !strings.Contains(r.stdout, "one__echo") || !strings.Contains(r.stdout, "ready") {
		t.Fatalf("get one: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := starts(t, one); n != 1 {
		t.Errorf("get one started one %d times; want once", n)
	}
	if n := starts(t, other); n != 0 {
		t.Errorf("get one started other %d times; want never", n)
	}
	if strings.Contains(r.stderr, "other") {
		t.Errorf("get one speaks of other:\n%s", r.stderr)
	}
}

// TestImportKeepsTheCatalogue: what import's check discovered is the
// catalogue: the next tools and servers list the imported servers' tools
// without starting them.
func TestImportKeepsTheCatalogue(t *testing.T) {
	h := newHomes(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"alpha": markedServer(testkit.ModeServer, a),
		"beta":  markedServer(testkit.ModeServer, b),
	}})
	path := put(t, dir, "mcp.json", data)
	if r := h.run(t, "import", "--from", path); r.code != 0 || !strings.Contains(r.stderr, `server "alpha" works`) {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	imported := starts(t, a) + starts(t, b)
	r := h.run(t, "tools")
	if r.code != 0 || !strings.Contains(r.stdout, "alpha__echo") || !strings.Contains(r.stdout, "beta__echo") || strings.Contains(r.stderr, "starting") {
		t.Errorf("tools after import: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = h.run(t, "servers")
	if r.code != 0 || strings.Contains(r.stdout, "starting") || strings.Contains(r.stdout, "0 tools") {
		t.Errorf("servers after import: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := starts(t, a) + starts(t, b); n != imported {
		t.Errorf("tools and servers started %d servers; want none (the import's check discovered them)", n-imported)
	}
}
