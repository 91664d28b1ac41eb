package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/cli"
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
		"sandbox": map[string]any{"write": []string{filepath.Dir(mark)}},
	}
}

// TestSearchStartsNoServer: search reads the saved catalogues and starts
// no server, neither one that was never discovered nor one that was.
func TestSearchStartsNoServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good, hang := filepath.Join(dir, "good"), filepath.Join(dir, "hang")
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"good": markedServer(testkit.ModeServer, good),
		"hang": markedServer(testkit.ModeHang, hang),
	}})
	home := t.TempDir()
	cmd := func(args ...string) result { // hang is waited for as long as in production
		return runWith(t, cli.Env{Args: append(args, "--config", path, "--home", home), LookupEnv: homeEnv(t.TempDir()),
			Version: "1.2.3", StartupWait: commandWait})
	}
	r := cmd("search", "echo", "the", "text")
	if r.code != 0 || strings.Contains(r.stdout, "good__echo") {
		t.Errorf("search before any discovery: exit %d, stdout %q, stderr %q; want no match", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, `server "good" has not been discovered yet`) {
		t.Errorf("search does not say that good's tools were not searched:\n%s", r.stderr)
	}
	if n, m := starts(t, good), starts(t, hang); n != 0 || m != 0 {
		t.Errorf("search started good %d and hang %d times; want none", n, m)
	}
	if r = cmd("call", "good__echo", "text=hi"); r.code != 0 { // waits for good, whose catalogue is saved
		t.Fatalf("call good__echo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
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
	t.Parallel()
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
	t.Parallel()
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

// firstTools starts `switchboard serve --stdio` on home (with config, if
// not ""), and returns the names its first tools/list answers with, and
// how long after the start it answered.
func firstTools(t *testing.T, home, config string) ([]string, time.Duration) {
	t.Helper()
	exe, _ := os.Executable()
	args := []string{"serve", "--stdio", "--home", home}
	if config != "" {
		args = append(args, "--config", config)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "SWITCHBOARD_CLI_RUN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx := t.Context()
	start := time.Now()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v\n%s", err, stderr.String())
	}
	took := time.Since(start)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names, took
}

// TestServeStdioFirstList: the first tools/list of a fresh serve --stdio
// has the tools of a server that takes a moment to start (it waits a
// second for it, but not for one that hangs: a machine too busy to start
// it within the second answers after it), and those of a slow server
// whose catalogue add's check saved (it is not waited for).
func TestServeStdioFirstList(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"quick": slowServer(300 * time.Millisecond),
		"hang":  testServer(testkit.ModeHang),
	}})
	if got, took := firstTools(t, t.TempDir(), path); !slices.Contains(got, "quick__echo") && took < time.Second {
		t.Errorf("first tools/list = %v, %v after the start; want quick's tools, or a wait of a second for them", got, took)
	}

	home := t.TempDir()
	slow, _ := json.Marshal(slowServer(3 * time.Second))
	if r := run(t, "add-json", "slow", string(slow), "--home", home); r.code != 0 {
		t.Fatalf("add-json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got, _ := firstTools(t, home, ""); !slices.Contains(got, "slow__echo") {
		t.Errorf("first tools/list after add = %v; want slow's tools, from the catalogue the check saved", got)
	}
}

// TestHungServerFailsAcrossCommands: a server that hangs at start-up is
// reported failing once the commands that stopped it sooner gave it its
// startupTimeoutMs in all (each gives it at least the 0.6 s it waits),
// and is then not started again before its next probe.
func TestHungServerFailsAcrossCommands(t *testing.T) {
	t.Parallel()
	mark := filepath.Join(t.TempDir(), "hang")
	hang := markedServer(testkit.ModeHang, mark)
	hang["startupTimeoutMs"] = 1500
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{"hang": hang}})
	home := t.TempDir()
	run := func(t *testing.T, args ...string) result { // each waits for hang as long as in production
		return runWith(t, cli.Env{Args: args, LookupEnv: homeEnv(t.TempDir()), Version: "1.2.3", StartupWait: commandWait})
	}
	for range 3 {
		if r := run(t, "servers", "--config", path, "--home", home); r.code != 0 {
			t.Fatalf("servers: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	started := starts(t, mark)
	r := run(t, "servers", "--config", path, "--home", home, "--json")
	if !strings.Contains(r.stdout, `"state": "failed"`) || !strings.Contains(r.stdout, "did not finish starting within 1.5s (startupTimeoutMs)") {
		t.Errorf("after three commands: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, "tools", "--config", path, "--home", home); !strings.Contains(r.stderr, `server "hang" is unavailable: did not finish starting`) {
		t.Errorf("tools does not warn of the failed server:\n%s", r.stderr)
	}
	if n := starts(t, mark); n != started {
		t.Errorf("the failed server was started %d more times before its next probe", n-started)
	}
}

// TestCheckStartsTheServer: enable checks that the server starts even
// when a catalogue of it is saved.
func TestCheckStartsTheServer(t *testing.T) {
	t.Parallel()
	mark := filepath.Join(t.TempDir(), "mark")
	home := t.TempDir()
	entry, _ := json.Marshal(markedServer(testkit.ModeServer, mark))
	for _, args := range [][]string{{"add-json", "one", string(entry)}, {"disable", "one"}, {"enable", "one"}} {
		if r := run(t, append(args, "--home", home)...); r.code != 0 {
			t.Fatalf("%q: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if n := starts(t, mark); n != 2 {
		t.Errorf("add-json and enable started the server %d times; want 2 (each checks it)", n)
	}
}
