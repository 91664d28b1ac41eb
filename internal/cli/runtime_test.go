package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestRuntimeChecked: a server whose runtime is missing or too old fails
// with what to install and a stable code, not a spawn error; one whose
// runtime fits starts (a fake node on the server's PATH that runs the test
// server).
func TestRuntimeChecked(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	empty := t.TempDir()
	bin := t.TempDir()
	// A node that reports its version, and otherwise runs the test server.
	fake := func(name, version string) string {
		dir := filepath.Join(bin, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo " + version + "; exit 0; fi\nexec '" + exe + "'\n"
		if err := os.WriteFile(filepath.Join(dir, "node"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	oldDir, newDir := fake("old", "v18.19.0"), fake("new", "v22.3.0")
	env := func(path string) map[string]string {
		e := testkit.ChildEnv(testkit.ModeServer)
		e["PATH"] = path
		return e
	}
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"gone": map[string]any{"command": "npx", "args": []string{"-y", "@scope/server"}, "env": env(empty)},
		"old":  map[string]any{"command": "node", "env": env(oldDir), "runtime": map[string]string{"node": ">=20"}},
		"new":  map[string]any{"command": "node", "env": env(newDir), "runtime": map[string]string{"node": ">=20"}},
	}})

	r := run(t, "call", "gone__echo", "text=x", "--json", "--config", path)
	if r.code != 3 || !strings.Contains(r.stdout, `"code": "runtime_missing"`) || !strings.Contains(r.stdout, `Node.js is not installed: \"npx\" not found in PATH`) ||
		!strings.Contains(r.stdout, "https://nodejs.org") || !strings.Contains(r.stdout, `"retryable": false`) {
		t.Errorf("call gone__echo: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "call", "old__echo", "text=x", "--json", "--config", path)
	if r.code != 3 || !strings.Contains(r.stdout, `"code": "runtime_too_old"`) || !strings.Contains(r.stdout, "needs node >=20, found 18.19.0") {
		t.Errorf("call old__echo: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "call", "new__echo", "text=fits", "--config", path)
	if r.code != 0 || r.stdout != "fits\n" {
		t.Errorf("call new__echo: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "servers", "--config", path)
	if !strings.Contains(r.stdout, "runtime_missing") && !strings.Contains(r.stdout, "Node.js is not installed") {
		t.Errorf("servers does not say why gone failed:\n%s", r.stdout)
	}
}
