package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// testServer is a stdio server entry running the test binary in mode.
func testServer(mode string) map[string]any {
	exe, _ := os.Executable()
	return map[string]any{"command": exe, "env": testkit.ChildEnv(mode)}
}

// slowServer is a stdio server entry that sleeps for delay before it
// becomes the testkit server, as a server that npx must first download.
func slowServer(delay time.Duration) map[string]any {
	exe, _ := os.Executable()
	return map[string]any{
		"command": "/bin/sh",
		"args":    []string{"-c", fmt.Sprintf("sleep %g; exec \"$0\"", delay.Seconds()), exe},
		"env":     testkit.ChildEnv(testkit.ModeServer),
	}
}

// firstWrite is a buffer that notes when it was first written to.
type firstWrite struct {
	bytes.Buffer
	at time.Time
}

func (w *firstWrite) Write(p []byte) (int, error) {
	if w.at.IsZero() {
		w.at = time.Now()
	}
	return w.Buffer.Write(p)
}

// runTerm runs the CLI with config path, a fresh home, the wait for its
// servers of production (commandWait), and stderr taken for a terminal or
// not; it returns the result and how long the run took to answer (its
// first output; stopping the servers comes after).
func runTerm(t *testing.T, path string, terminal bool, args ...string) (result, time.Duration) {
	t.Helper()
	var out firstWrite
	start := time.Now()
	r := runWith(t, cli.Env{
		Args:        append(args, "--config", path, "--home", t.TempDir()),
		Stdout:      &out,
		LookupEnv:   func(string) (string, bool) { return "", false },
		Version:     "test",
		IsTerminal:  func(io.Writer) bool { return terminal },
		StartupWait: commandWait,
	})
	r.stdout = out.String()
	return r, out.at.Sub(start)
}

// TestCommandsDoNotWaitForAHungServer: next to a server that hangs at
// start-up (startupTimeoutMs 60 s), tools, call and servers answer with
// what is ready or known from the saved catalogue, and name the server
// still starting: they did not wait for its start-up timeout. The good
// server starts slower than a command waits (as any may on a busy
// machine): its tools are known from its catalogue, and a call waits for
// it.
func TestCommandsDoNotWaitForAHungServer(t *testing.T) {
	t.Parallel()
	good := slowServer(time.Second)
	home := t.TempDir()
	alone := writeConfig(t, map[string]any{"mcpServers": map[string]any{"good": good}})
	hang := testServer(testkit.ModeHang)
	hang["startupTimeoutMs"] = 60000 // far more than the three commands give it in all
	both := writeConfig(t, map[string]any{"mcpServers": map[string]any{"good": good, "hang": hang}})
	cmd := func(path string, args ...string) result {
		return runWith(t, cli.Env{
			Args:       append(args, "--config", path, "--home", home),
			LookupEnv:  func(string) (string, bool) { return "", false },
			Version:    "test",
			IsTerminal: func(io.Writer) bool { return false },
			// What a command does with a server still starting.
			StartupWait: commandWait,
		})
	}
	if r := cmd(alone, "tools", "--refresh"); r.code != 0 || !strings.Contains(r.stdout, "good__echo") {
		t.Fatalf("discovering good: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// hang was written into the file by hand: it is held until approved.
	if r := cmd(both, "servers"); r.code != 0 || !strings.Contains(r.stdout, "held") {
		t.Fatalf("hang added by hand: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r := cmd(both, "approve", "hang"); r.code != 0 {
		t.Fatalf("approve hang: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, tc := range []struct {
		args   []string
		stdout []string
		stderr []string
	}{
		{[]string{"tools"}, []string{"good__echo"}, []string{`server "hang" is still starting`}},
		{[]string{"call", "good:echo", "text=hi"}, []string{"hi"}, []string{`server "hang" is still starting`}},
		{[]string{"servers"}, []string{"hang", "starting"}, nil},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			r := cmd(both, tc.args...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
				}
			}
			for _, w := range tc.stderr {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

// TestCallWaitsForItsServer: a call to a tool of a server still starting
// waits for it; on a terminal a wait over a second shows its progress in
// place, and elsewhere nothing is printed.
func TestCallWaitsForItsServer(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{"slowpoke": slowServer(2500 * time.Millisecond)}})
	progress := regexp.MustCompile(`\r\x1b\[Kwaiting for slowpoke [1-9][0-9]*s/10s`)
	for _, terminal := range []bool{true, false} {
		t.Run(fmt.Sprintf("terminal=%v", terminal), func(t *testing.T) {
			t.Parallel()
			r, _ := runTerm(t, path, terminal, "call", "slowpoke__echo", "text=late")
			if r.code != 0 || strings.TrimSpace(r.stdout) != "late" {
				t.Fatalf("exit %d, stdout %q\nstderr:\n%q", r.code, r.stdout, r.stderr)
			}
			if got := progress.MatchString(r.stderr); got != terminal {
				t.Errorf("progress shown = %v on terminal = %v:\n%q", got, terminal, r.stderr)
			}
			if terminal && !strings.HasSuffix(r.stderr, "\r\x1b[K") {
				t.Errorf("the progress line was not erased at the end:\n%q", r.stderr)
			}
			if !terminal && strings.Contains(r.stderr, "waiting for") {
				t.Errorf("progress printed to something that is not a terminal:\n%q", r.stderr)
			}
		})
	}
}

// gatedServer is a stdio server entry that waits until the file gate
// exists before it becomes the testkit server: a server still starting
// for as long as a test wants (its startupTimeoutMs is ten minutes).
func gatedServer(gate string) map[string]any {
	exe, _ := os.Executable()
	return map[string]any{
		"command":          "/bin/sh",
		"args":             []string{"-c", `while [ ! -e "$1" ]; do sleep 0.05; done; exec "$0"`, exe, gate},
		"env":              testkit.ChildEnv(testkit.ModeServer),
		"startupTimeoutMs": 600000,
	}
}

// TestServeAnswersAtOnce: serve listens and answers initialize and
// tools/list while a server is still starting; a call to that server's
// tool waits for it; the server joins and the client is sent
// notifications/tools/list_changed.
func TestServeAnswersAtOnce(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "gate")
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"good":     testServer(testkit.ModeServer),
		"slowpoke": gatedServer(gate),
	}})
	ctx := t.Context()
	g := startGatewayWait(t, commandWait, nil, "", "--home", t.TempDir(), "--config", path)
	stderr := g.stderr
	if !regexp.MustCompile(`[12] starting: they join when ready`).MatchString(stderr.String()) {
		t.Errorf("the banner does not say a server is starting:\n%s", stderr.String())
	}
	changed := make(chan struct{}, 16)
	cs := g.session(t, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	names := func() string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		return strings.Join(out, " ")
	}
	// good joins when it is ready, however long that takes on a busy
	// machine; slowpoke cannot before its gate opens.
	var first string
	if !proc.Eventually(time.Minute, func() bool { first = names(); return strings.Contains(first, "good__echo") }) {
		t.Fatalf("good's tools not listed: %s", first)
	}
	if strings.Contains(first, "slowpoke__") {
		t.Errorf("tools before the slow server joined: %s; want good's only", first)
	}
	// A call to a tool of the server still starting waits for it.
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	call := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slowpoke__echo", Arguments: map[string]any{"text": "late"}})
		call <- answer{res, err}
	}()
	for len(changed) > 0 { // good's joining
		<-changed
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if a := <-call; a.err != nil || a.res.IsError || len(a.res.Content) != 1 || a.res.Content[0].(*mcp.TextContent).Text != "late" {
		t.Errorf("call to the starting server's tool: %+v, %v", a.res, a.err)
	}
	select {
	case <-changed:
	case <-time.After(time.Minute):
		t.Fatalf("no notifications/tools/list_changed when the slow server joined:\n%s", stderr.String())
	}
	if !proc.Eventually(time.Minute, func() bool { return strings.Contains(names(), "slowpoke__echo") }) {
		t.Errorf("slowpoke's tools not listed after list_changed: %s", names())
	}
	cs.Close()
	if c := g.stop(); c != 0 {
		t.Errorf("exit %d\n%s", c, stderr.String())
	}
}

// TestServeToldOfToolsThatJoinLater: a client that connects while every
// server is still starting (serve has no tool yet) is sent
// notifications/tools/list_changed when one joins.
func TestServeToldOfToolsThatJoinLater(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "gate")
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{"late": gatedServer(gate)}})
	g := startGatewayWait(t, commandWait, nil, "", "--home", t.TempDir(), "--config", path)
	changed := make(chan struct{}, 16)
	cs := g.session(t, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	if res, err := cs.ListTools(t.Context(), nil); err != nil || len(res.Tools) != 0 {
		t.Fatalf("tools/list before late joined: %v, %v; want none", res, err)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(time.Minute):
		t.Fatalf("no notifications/tools/list_changed when late joined:\n%s", g.stderr.String())
	}
	if !lists(t.Context(), cs, "late__echo") {
		t.Errorf("late's tools not listed after list_changed")
	}
}
