package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestRefresh: a server whose tools changed behind an unchanged
// configuration is listed from its saved catalogue until --refresh
// discovers it again (tools, servers, call); a call of a tool missing from
// the saved catalogue discovers the server again by itself.
func TestRefresh(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tools, mark := filepath.Join(dir, "tools"), filepath.Join(dir, "mark")
	set := func(lines ...string) {
		if err := os.WriteFile(tools, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	starts := func() int {
		data, _ := os.ReadFile(mark)
		return strings.Count(string(data), "start\n")
	}
	env := testkit.ChildEnv(testkit.ModeListed)
	env[testkit.ToolsVar], env[testkit.MarkVar] = tools, mark
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": exe, "env": env}}})
	home := t.TempDir()
	sb := func(args ...string) result {
		t.Helper()
		return run(t, append(args, "--config", cfg, "--home", home)...)
	}

	set("echo\tEcho.")
	if r := sb("tools"); r.code != 0 || !strings.Contains(r.stdout, "s__echo") {
		t.Fatalf("first run: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	set("echo\tEcho.", "fresh\tNew.")
	if r := sb("tools"); r.code != 0 || strings.Contains(r.stdout, "s__fresh") || starts() != 1 {
		t.Fatalf("from the saved catalogue: exit %d, %d starts\nstdout: %s\nstderr: %s", r.code, starts(), r.stdout, r.stderr)
	}
	if r := sb("tools", "--refresh"); r.code != 0 || !strings.Contains(r.stdout, "s__fresh") || starts() != 2 {
		t.Fatalf("tools --refresh: exit %d, %d starts\nstdout: %s\nstderr: %s", r.code, starts(), r.stdout, r.stderr)
	}

	set("echo\tEcho.", "fresh\tNew.", "fresher\tNewer.")
	if r := sb("servers", "--refresh", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"state": "ready"`) || !strings.Contains(r.stdout, `"tools": 3`) {
		t.Fatalf("servers --refresh: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	set("echo\tEcho.", "fresh\tNew.", "fresher\tNewer.", "newest\tNewest.")
	if r := sb("call", "s__newest", "text=hi"); r.code != 0 || r.stdout != "newest: hi\n" {
		t.Fatalf("call of a tool missing from the saved catalogue: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	set("echo\tEcho.", "latest\tLatest.")
	before := starts()
	if r := sb("call", "s__latest", "text=hi", "--refresh"); r.code != 0 || r.stdout != "latest: hi\n" || starts() != before+1 {
		t.Fatalf("call --refresh: exit %d, %d starts (was %d)\nstdout: %s\nstderr: %s", r.code, starts(), before, r.stdout, r.stderr)
	}
}
