package cli_test

import (
	"os"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestMissingVariable: a server whose configuration references a variable
// that is not set is reported, with the variable and the field, by
// servers, warned about once by the other commands and by serve, and its
// calls fail as unavailable; the other server works and serve starts.
func TestMissingVariable(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	ghEnv := testkit.ChildEnv(testkit.ModeServer)
	ghEnv["GITHUB_TOKEN"] = "${GITHUB_TOKEN}"
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"gh": map[string]any{"command": exe, "env": ghEnv},
		"ok": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer)},
	}})
	const reason = "${GITHUB_TOKEN} is not set (env.GITHUB_TOKEN)"
	const warning = `warning: server "gh" is misconfigured and not started: ` + reason

	r := run(t, "servers", "--config", path)
	if r.code != 0 || !strings.Contains(r.stdout, "misconfigured") || !strings.Contains(r.stdout, reason) {
		t.Errorf("servers: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "servers", "--json", "--config", path)
	if r.code != 0 || !strings.Contains(r.stdout, `"state": "misconfigured"`) || !strings.Contains(r.stdout, `"lastError": "server \"gh\": `+reason+`"`) {
		t.Errorf("servers --json: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "call", "ok__echo", "text=served", "--config", path)
	if r.code != 0 || r.stdout != "served\n" || strings.Count(r.stderr, warning) != 1 {
		t.Errorf("call ok__echo: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "call", "gh__echo", "text=x", "--config", path)
	if r.code != 3 || !strings.Contains(r.stderr, "unavailable") || !strings.Contains(r.stderr, reason) {
		t.Errorf("call gh__echo: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	s := serve(t, nil, "--http", "127.0.0.1:0", "--config", path)
	if s.code != 0 || !strings.Contains(s.stderr, "endpoint: http://127.0.0.1:") || !strings.Contains(s.stderr, "(1 of 2 servers ready)") || strings.Count(s.stderr, warning) != 1 {
		t.Errorf("serve: exit %d\nstderr: %s", s.code, s.stderr)
	}
}
