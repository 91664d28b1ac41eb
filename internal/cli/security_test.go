package cli_test

import (
	"strings"
	"testing"
	"time"
)

// TestPolicyAndRaw: the policy reaches the CLI (a denied tool exits 3 with
// the stable code, in the JSON error with --json; a call needing confirmation needs --yes when no terminal
// can ask) and tools --raw shows what a server sent, escaped. The server
// takes longer to start than a command waits for it (as any server may on
// a busy machine): each command waits for it because it needs it.
func TestPolicyAndRaw(t *testing.T) {
	t.Parallel()
	good := slowServer(time.Second)
	path := writeConfig(t, map[string]any{
		"policy":     map[string]any{"rules": []any{map[string]any{"deny": "good:crash"}}, "confirm": "always"},
		"mcpServers": map[string]any{"good": good},
	})
	r := run(t, "call", "good__crash", "--config", path, "--json")
	if r.code != 3 || !strings.Contains(r.stdout, `"code": "policy_blocked"`) || !strings.Contains(r.stdout, `denied by rule 0`) {
		t.Errorf("denied call: exit %d, stdout %s", r.code, r.stdout)
	}
	r = run(t, "call", "good__echo", "text=hi", "--config", path)
	if r.code != 3 || !strings.Contains(r.stderr, "pass --yes") {
		t.Errorf("unconfirmed call: exit %d, stderr %s", r.code, r.stderr)
	}
	r = run(t, "call", "good__echo", "text=hi", "--yes", "--config", path)
	if r.code != 0 || r.stdout != "hi\n" {
		t.Errorf("confirmed call: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "tools", "good:echo", "--raw", "--config", path)
	if r.code != 0 || !strings.Contains(r.stdout, `"name": "echo"`) {
		t.Errorf("tools --raw: exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "servers", "--config", path)
	if r.code != 0 || !strings.Contains(r.stdout, "untrusted") {
		t.Errorf("servers: trust column missing: %s", r.stdout)
	}
}
