package cli_test

import (
	"os"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
)

// TestInjectionHeldAndApproved: an untrusted server's poisoned tools are
// held back (not listed; a call is refused with held_injection), the CLI
// warns about them once per command without -v and keeps info findings
// for servers -v, and `switchboard approve server:tool` releases that one
// tool, in the state.db of the home.
func TestInjectionHeldAndApproved(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	home := t.TempDir()
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"hostile": map[string]any{"command": exe, "env": hostile.ChildEnv(hostile.ModePoison)},
	}})
	with := func(args ...string) []string { return append(args, "--config", path, "--home", home) }
	const heldLine = `warning: [high] server "hostile": tool "add_numbers": held: held back`

	r := run(t, with("tools")...)
	if r.code != 0 || strings.Contains(r.stdout, "hostile__add_numbers") || !strings.Contains(r.stdout, "hostile__ok_echo") {
		t.Fatalf("tools: exit %d, stdout %s, stderr %s; want ok_echo listed and add_numbers held back", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stderr, heldLine); n != 1 {
		t.Errorf("tools: the hold is warned about %d times, want once:\n%s", n, r.stderr)
	}
	if flaggedLines(r.stderr, "add_numbers") == 0 {
		t.Errorf("tools: no flagged warning:\n%s", r.stderr)
	}
	// The instructions are cut to their cap: an info finding, not printed.
	if strings.Contains(r.stderr, "[info]") || strings.Contains(r.stderr, "truncated") {
		t.Errorf("tools: an info finding is printed without -v:\n%s", r.stderr)
	}

	// With -v the host's log says it, once; the warnings are not repeated.
	r = run(t, with("tools", "-v")...)
	if n := strings.Count(r.stderr, `msg="server metadata: held" server=hostile item="tool \"add_numbers\""`); n != 1 || strings.Contains(r.stderr, "warning: [") {
		t.Errorf("tools -v: the hold is logged %d times (want once), warnings not repeated:\n%s", n, r.stderr)
	}

	r = run(t, with("call", "hostile__add_numbers", "a=1", "b=2")...)
	if r.code != 3 || !strings.Contains(r.stderr, "held_injection") || !strings.Contains(r.stderr, "switchboard approve hostile:add_numbers") {
		t.Errorf("call of the held tool: exit %d, stdout %s, stderr %s; want held_injection naming the approve command", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stderr, heldLine); n != 1 {
		t.Errorf("call: the hold is warned about %d times, want once:\n%s", n, r.stderr)
	}

	r = run(t, with("servers")...)
	if n := strings.Count(r.stderr, heldLine); r.code != 0 || n != 1 || !strings.Contains(r.stdout, "hostile:add_numbers: held back, its metadata matches an injection pattern") {
		t.Errorf("servers: exit %d, %d warnings; stdout %s\nstderr %s", r.code, n, r.stdout, r.stderr)
	}
	r = run(t, with("servers", "-v")...)
	if !strings.Contains(r.stdout, `finding: [info] server "hostile": truncated: instructions`) || !strings.Contains(r.stdout, "held (injection pattern): add_numbers") {
		t.Errorf("servers -v: the findings lack their severity or the hold:\n%s", r.stdout)
	}
	if strings.Contains(r.stderr, "warning: [") {
		t.Errorf("servers -v: findings printed twice (stdout and stderr):\n%s", r.stderr)
	}
	r = run(t, with("servers", "--json")...)
	if !strings.Contains(r.stdout, `"severity": "high"`) || !strings.Contains(r.stdout, `"heldInjection": [`) {
		t.Errorf("servers --json lacks severities or heldInjection:\n%s", r.stdout)
	}

	r = run(t, with("tools", "hostile:add_numbers", "--raw")...)
	if r.code != 0 || !strings.Contains(r.stdout, "id_rsa") {
		t.Errorf("tools --raw of the held tool: exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, with("diff", "hostile:add_numbers")...)
	if r.code != 0 || !strings.Contains(r.stdout, "== hostile:add_numbers (held: its metadata matches an injection pattern)") || !strings.Contains(r.stdout, "id_rsa") {
		t.Errorf("diff: exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, with("approve", "hostile:add_numbers")...)
	if r.code != 0 || !strings.Contains(r.stdout, "approved hostile:add_numbers (held: its metadata matches an injection pattern)") {
		t.Fatalf("approve: exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, with("call", "hostile__add_numbers", "a=1", "b=2")...)
	if r.code != 0 || r.stdout != "3\n" {
		t.Errorf("call of the approved tool: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, heldLine) || !strings.Contains(r.stderr, `tool "summarize": held: held back`) {
		t.Errorf("after approving add_numbers: stderr %s; want only the other tools held", r.stderr)
	}
}

// flaggedLines counts the warning lines that flag tool among others (a line
// per server, kind and detail, naming the tools it concerns).
func flaggedLines(stderr, tool string) int {
	n := 0
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, `warning: [warn] server "hostile": `) && strings.Contains(line, "flagged: ") && strings.Contains(line, `tool "`+tool+`"`) {
			n++
		}
	}
	return n
}

// TestInjectionFlagOnly: under "onInjection": "flag", or for a trusted
// server, the poisoned tools are listed and callable; the flags are still
// printed once, without -v.
func TestInjectionFlagOnly(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	for name, doc := range map[string]map[string]any{
		"flag": {"security": map[string]any{"onInjection": "flag"}, "mcpServers": map[string]any{
			"hostile": map[string]any{"command": exe, "env": hostile.ChildEnv(hostile.ModePoison)}}},
		"trusted": {"mcpServers": map[string]any{
			"hostile": map[string]any{"command": exe, "env": hostile.ChildEnv(hostile.ModePoison), "trust": "trusted"}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, doc)
			r := run(t, "call", "hostile__add_numbers", "a=1", "b=2", "--config", path)
			if r.code != 0 || r.stdout != "3\n" {
				t.Errorf("call: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
			}
			if n := flaggedLines(r.stderr, "add_numbers"); n == 0 || strings.Contains(r.stderr, "held") {
				t.Errorf("call: %d flagged warnings, stderr %s; want them, and no hold", n, r.stderr)
			}
		})
	}
}

// TestServeLogsFindings: serve logs the warnings once at start-up, without
// -v, and not the info findings.
func TestServeLogsFindings(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"hostile": map[string]any{"command": exe, "env": hostile.ChildEnv(hostile.ModePoison)},
	}})
	r := serve(t, nil, "--http", "127.0.0.1:0", "--config", path)
	if r.code != 0 {
		t.Fatalf("serve: exit %d, stderr %s", r.code, r.stderr)
	}
	held := `msg="server metadata: held" server=hostile item="tool \"add_numbers\""`
	if n := strings.Count(r.stderr, held); n != 1 {
		t.Errorf("the hold is logged %d times, want once:\n%s", n, r.stderr)
	}
	if strings.Contains(r.stderr, "truncated") {
		t.Errorf("an info finding is logged without -v:\n%s", r.stderr)
	}
}

// TestWarningOncePerChange: the warnings of one server, kind and detail
// are one line (two servers offering the same six tools make one line
// each, not twelve); a later command does not print them again but
// counts them, and a change prints what is new.
func TestWarningOncePerChange(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	home := t.TempDir()
	demo := map[string]any{"command": exe, "args": []string{"demo-server"}}
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{"m1": demo, "m2": demo}})
	with := func(args ...string) []string { return append(args, "--config", path, "--home", home) }
	const m1 = `warning: [warn] server "m1": shadowing: server(s) m2 offer a tool of the same name (6: tool "add", `

	r := run(t, with("tools")...)
	if r.code != 0 || strings.Count(r.stderr, "warning: ") != 2 || !strings.Contains(r.stderr, m1) {
		t.Fatalf("tools: exit %d, want two warning lines, one of them %q:\n%s", r.code, m1, r.stderr)
	}
	r = run(t, with("servers")...)
	if r.code != 0 || strings.Contains(r.stderr, "warning: ") || !strings.Contains(r.stderr, "2 warnings shown before, unchanged") {
		t.Errorf("servers: exit %d, want the warnings counted, not printed again:\n%s", r.code, r.stderr)
	}

	if r := run(t, "add", "m3", "--config", path, "--home", home, "--", exe, "demo-server"); r.code != 0 {
		t.Fatalf("add m3: exit %d\n%s", r.code, r.stderr)
	}
	r = run(t, with("tools")...)
	if n := strings.Count(r.stderr, "warning: "); r.code != 0 || n != 3 || !strings.Contains(r.stderr, "offer a tool of the same name") {
		t.Errorf("tools after a change: exit %d, %d warning lines, want 3 (each server's line changed):\n%s", r.code, n, r.stderr)
	}
}
