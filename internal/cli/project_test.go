package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// runIn runs the CLI in the working directory dir with the home home.
func runIn(t *testing.T, dir, home string, args ...string) result {
	t.Helper()
	return runWith(t, cli.Env{Args: args, LookupEnv: homeEnv(home), Version: "1.2.3", Dir: dir})
}

// writeProject writes v as dir's .mcp.json.
func writeProject(t *testing.T, dir string, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

// starts counts the starts the sleeper server recorded in mark.
func starts(t *testing.T, mark string) int {
	t.Helper()
	data, err := os.ReadFile(mark)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "start")
}

// TestProjectTrust: a server from the working directory's .mcp.json never
// starts (no process is spawned) until trust-project has approved the
// file's exact content; then it starts; a changed file is untrusted
// again; --no-project leaves the file unread.
func TestProjectTrust(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	dir, home := t.TempDir(), t.TempDir()
	mark := filepath.Join(t.TempDir(), "starts")
	env := testkit.ChildEnv(testkit.ModeSleeper)
	env[testkit.MarkVar] = mark
	project := map[string]any{"mcpServers": map[string]any{
		"proj": map[string]any{"command": exe, "args": []string{"a b"}, "env": env, "sandbox": "report"},
	}}
	data := writeProject(t, dir, project)
	abs, _ := filepath.Abs(filepath.Join(dir, ".mcp.json"))
	reason := `server "proj": it comes from ` + abs + `, which is not trusted yet: run 'switchboard trust-project' in its directory to review and trust it`

	r := runIn(t, dir, home, "servers")
	if r.code != 0 || !strings.Contains(r.stdout, "untrusted") || !strings.Contains(r.stdout, "project: "+abs) || !strings.Contains(r.stdout, "demo") {
		t.Errorf("servers: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = runIn(t, dir, home, "call", "proj__echo", "text=x", "--json")
	if r.code != 3 || !strings.Contains(r.stdout, `"code": "unavailable"`) || !strings.Contains(r.stdout, "trust-project") {
		t.Errorf("call before trust: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = runIn(t, dir, home, "tools")
	if r.code != 0 || !strings.Contains(r.stderr, `warning: server "proj" is misconfigured and not started: it comes from `+abs) {
		t.Errorf("tools before trust: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = runIn(t, dir, home, "trust-project", "--show")
	if r.code != 0 || !strings.Contains(r.stdout, abs+" (sha256 ") || !strings.Contains(r.stdout, ": not trusted") ||
		!strings.Contains(r.stdout, "proj: runs "+exe+` "a b"`) || !strings.Contains(r.stdout, "env "+testkit.MarkVar+"=[redacted]") {
		t.Errorf("trust-project --show: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = runIn(t, dir, home, "trust-project") // stdin is not a terminal
	if r.code != 2 || !strings.Contains(r.stderr, "not trusted: review the servers above, then confirm at a terminal or pass --yes") {
		t.Errorf("trust-project without a terminal: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if n := starts(t, mark); n != 0 {
		t.Fatalf("the project server started %d times before it was trusted", n)
	}
	if r := runIn(t, dir, home, "servers", "--json"); !strings.Contains(r.stdout, `"lastError": `+mustJSON(t, reason)) {
		t.Errorf("servers --json before trust does not give the reason %q:\n%s", reason, r.stdout)
	}

	r = runIn(t, dir, home, "trust-project", "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, "trusted "+abs) {
		t.Fatalf("trust-project --yes: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = runIn(t, dir, home, "call", "proj__echo", "text=trusted")
	if r.code != 0 || r.stdout != "trusted\n" {
		t.Errorf("call after trust: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	after := starts(t, mark)
	if after == 0 {
		t.Fatal("the trusted project server never started")
	}
	if r := runIn(t, dir, home, "trust-project"); r.code != 0 || !strings.Contains(r.stdout, "already trusted") {
		t.Errorf("trust-project when trusted: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	// One byte more and the file is untrusted again.
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, dir, home, "call", "proj__echo", "text=x")
	if r.code != 3 || !strings.Contains(r.stderr, "not trusted yet") {
		t.Errorf("call after a change: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if r := runIn(t, dir, home, "trust-project", "--show"); !strings.Contains(r.stdout, "CHANGED since it was trusted") {
		t.Errorf("trust-project --show after a change:\n%s", r.stdout)
	}
	if n := starts(t, mark); n != after {
		t.Errorf("the changed project's server started: %d starts, want %d", n, after)
	}

	// --no-project: the file is not read at all.
	r = runIn(t, dir, home, "servers", "--no-project")
	if r.code != 0 || strings.Contains(r.stdout, "proj") {
		t.Errorf("servers --no-project: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestProjectFileErrors: the project file is decoded strictly, and its
// errors name it; a malformed one is left out with a warning and the
// user's servers go on; trust-project refuses it; a server the user
// configuration has wins, with a warning.
func TestProjectFileErrors(t *testing.T) {
	t.Parallel()
	dir, home := t.TempDir(), t.TempDir()
	abs, _ := filepath.Abs(filepath.Join(dir, ".mcp.json"))
	writeProject(t, dir, map[string]any{"mcpServers": map[string]any{"x": map[string]any{"comand": "npx"}}})
	r := runIn(t, dir, home, "servers")
	if r.code != 0 || !strings.Contains(r.stdout, "demo") || strings.Contains(r.stdout, "project:") ||
		!strings.Contains(r.stderr, "warning: the project file's servers are left out: "+abs+`: $.mcpServers.x.comand: unknown field "comand" (did you mean "command"?)`) {
		t.Errorf("servers with a bad project file: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = runIn(t, dir, home, "trust-project", "--yes")
	if r.code != 2 || !strings.Contains(r.stderr, abs+`: $.mcpServers.x.comand`) {
		t.Errorf("trust-project with a bad project file: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	writeProject(t, dir, map[string]any{"mcpServers": map[string]any{}, "policy": map[string]any{}})
	if r := runIn(t, dir, home, "servers"); r.code != 0 || !strings.Contains(r.stderr, abs+`: $.policy: "policy" is not read from a project file`) {
		t.Errorf("servers with policy in the project file: exit %d\nstderr: %s", r.code, r.stderr)
	}
	// The project's "demo" loses to the user's (here the embedded default's).
	writeProject(t, dir, map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"command": "evil"}}})
	r = runIn(t, dir, home, "call", "demo__echo", "text=mine")
	if r.code != 0 || r.stdout != "mine\n" || !strings.Contains(r.stderr, `warning: server "demo" in `+abs+` is ignored: the user configuration has a server of that name`) {
		t.Errorf("call with a clashing project server: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if r := runIn(t, t.TempDir(), home, "trust-project"); r.code != 2 || !strings.Contains(r.stderr, "there is no .mcp.json in ") {
		t.Errorf("trust-project without a file: exit %d\nstderr: %s", r.code, r.stderr)
	}
}

// TestServeWatchTrustProject: a running serve --watch starts a project
// server once trust-project has approved its file, without a restart.
func TestServeWatchTrustProject(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	dir, home := t.TempDir(), t.TempDir()
	writeProject(t, dir, map[string]any{"mcpServers": map[string]any{
		"proj": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer)},
	}})
	ctx := t.Context()
	g := startGateway(t, nil, dir, "--home", home, "--watch")
	stderr := g.stderr
	cs := g.session(t, nil)
	has := func(name string) bool { return lists(ctx, cs, name) }
	// serve answers at once; the embedded default's demo server joins when
	// it has started (list_changed).
	if !proc.Eventually(15*time.Second, func() bool { return has("demo__echo") }) || has("proj__echo") {
		t.Fatalf("before trust: demo__echo %t, proj__echo %t (want true, false)", has("demo__echo"), has("proj__echo"))
	}
	if r := runIn(t, dir, home, "trust-project", "--yes"); r.code != 0 {
		t.Fatalf("trust-project --yes: exit %d\n%s", r.code, r.stderr)
	}
	if !proc.Eventually(15*time.Second, func() bool { return has("proj__echo") }) {
		t.Fatalf("the trusted project server never appeared:\n%s", stderr.String())
	}
}

// TestServeLeavesOutAMalformedProject: serve in a directory whose
// untrusted .mcp.json names a server with a space starts anyway, serves
// the user's servers, and warns that the project's are left out.
func TestServeLeavesOutAMalformedProject(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	dir, home := t.TempDir(), t.TempDir()
	writeProject(t, dir, map[string]any{"mcpServers": map[string]any{
		"my server": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer)},
	}})
	g := startGateway(t, nil, dir, "--home", home)
	cs := g.session(t, nil)
	// serve does not wait for its servers: demo joins when it is ready.
	if !proc.Eventually(15*time.Second, func() bool { return lists(t.Context(), cs, "demo__echo") }) {
		t.Errorf("demo__echo is not listed")
	}
	abs, _ := filepath.Abs(filepath.Join(dir, ".mcp.json"))
	if !strings.Contains(g.stderr.String(), "warning: the project file's servers are left out: "+abs) {
		t.Errorf("no warning naming the project file:\n%s", g.stderr.String())
	}
}
