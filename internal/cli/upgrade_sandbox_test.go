package cli_test

import (
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/cli"
)

// TestUpgradeSandboxReportsFirst: the servers of a home made before
// servers had a sandbox keep working; the first start of each after the
// upgrade runs in report mode, and, as nothing would be denied, the next
// start enforces the sandbox.
func TestUpgradeSandboxReportsFirst(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux only")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home, cache := olderHome(t, "home-7b5c3d4", exe), t.TempDir()
	env := func(k string) (string, bool) {
		switch k {
		case "SWITCHBOARD_HOME":
			return home, true
		case "XDG_CACHE_HOME":
			return cache, true
		}
		return "", false
	}
	cmd := func(args ...string) result {
		t.Helper()
		r := runWith(t, cli.Env{Args: args, LookupEnv: env, Version: "test"})
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r
	}
	sandbox := func(server string) *host.SandboxStatus {
		t.Helper()
		var d struct{ Status host.ServerStatus }
		if err := json.Unmarshal([]byte(cmd("get", server, "--json").stdout), &d); err != nil {
			t.Fatal(err)
		}
		if d.Status.State != host.StateReady || d.Status.Sandbox == nil {
			t.Fatalf("%s: %s, sandbox %+v: %s", server, d.Status.State, d.Status.Sandbox, d.Status.LastError)
		}
		return d.Status.Sandbox
	}

	// The first start since the upgrade: report mode, nothing to deny.
	for _, server := range []string{"demo", "keyed"} {
		sb := sandbox(server)
		if sb.Mode != "report" || !sb.Upgrade || len(sb.Report) != 0 {
			t.Fatalf("%s's first start: %+v, want report mode after the upgrade, nothing denied", server, sb)
		}
		if !strings.Contains(sb.Summary, "enforced from the next start") {
			t.Errorf("%s: summary %q", server, sb.Summary)
		}
	}
	// The next: enforced, and the servers still work.
	for _, server := range []string{"demo", "keyed"} {
		if got := strings.TrimSpace(cmd("call", server+"__echo", "text=sandboxed").stdout); got != "sandboxed" {
			t.Errorf("%s__echo = %q", server, got)
		}
		if sb := sandbox(server); sb.Mode != "on" || sb.Upgrade {
			t.Errorf("%s's next start: %+v, want on", server, sb)
		}
	}
	out := cmd("servers").stdout
	if !strings.Contains(out, "SANDBOX") {
		t.Errorf("servers shows no sandbox:\n%s", out)
	}
	if out := cmd("get", "demo").stdout; !strings.Contains(out, "sandbox:") {
		t.Errorf("get shows no sandbox:\n%s", out)
	}
}
