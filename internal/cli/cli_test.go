package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/demo"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

func TestMain(m *testing.M) {
	launcher.MaybeRunShim()
	testkit.MaybeRunChild()
	hostile.MaybeRunChild()
	serveJournalled()
	serveDrifting()
	if os.Getenv("SWITCHBOARD_CLI_RUN") == "1" {
		// Run as the switchboard binary (for `serve --stdio`), with at
		// most SWITCHBOARD_TEST_NOFILE open files when that is set.
		lowerNofile(os.Getenv("SWITCHBOARD_TEST_NOFILE"))
		// SWITCHBOARD_TEST_WAIT, when set, is its Env's StartupWait.
		exe, _ := os.Executable()
		wait, _ := time.ParseDuration(os.Getenv(testWaitVar))
		os.Exit(cli.Run(context.Background(), cli.Env{
			Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Executable: exe, Version: "test",
			StartupWait: wait,
		}))
	}
	if len(os.Args) > 1 && os.Args[1] == "demo-server" {
		if err := demo.ServeStdio(context.Background(), "test"); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The sandbox's private directories of the servers started here go
	// to a directory of this run, not the user's cache.
	userCacheHome = os.Getenv("XDG_CACHE_HOME")
	cache, err := os.MkdirTemp("", "switchboard-test-cache-")
	if err == nil {
		os.Setenv("XDG_CACHE_HOME", cache)
	}
	testkit.WaitingParallel()
	code := pgtest.Main(m)
	os.RemoveAll(cache)
	os.Exit(code)
}

// userCacheHome is $XDG_CACHE_HOME as this test binary found it, before
// TestMain pointed it at a directory of this run.
var userCacheHome string

// testWait is how long the tests' runs wait for the servers they start
// (cli.Env.StartupWait) unless a test sets its own: long enough for any
// server of theirs to start on a busy machine, so that what a command
// lists does not depend on the machine's load. host.Open returns as soon
// as the servers are ready or have failed, so nobody waits that long.
const testWait = time.Minute

// commandWait is what a command waits for its servers in production
// (cli.Env.StartupWait zero): the tests of what a command does with a
// server still starting set it.
const commandWait = 600 * time.Millisecond

// testWaitVar names the environment variable that sets the StartupWait of
// the CLI run as a subprocess (SWITCHBOARD_CLI_RUN), as a Go duration.
const testWaitVar = "SWITCHBOARD_TEST_WAIT"

type result struct {
	code           int
	stdout, stderr string
}

// run runs the CLI with a fresh, empty home (so the embedded default
// applies unless --config is given).
func run(t *testing.T, args ...string) result {
	t.Helper()
	return runWith(t, cli.Env{Args: args, Stdin: strings.NewReader(`{"text":"from stdin"}`),
		LookupEnv: homeEnv(t.TempDir()), Version: "1.2.3"})
}

// runWith runs the CLI in this process with e, its Executable this test
// binary and, unless e sets them, its stdout and stderr captured and its
// StartupWait testWait; it returns the exit code and what was captured.
func runWith(t testing.TB, e cli.Env) result {
	t.Helper()
	if e.StartupWait == 0 {
		e.StartupWait = testWait
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e.Executable = exe
	var out, errb bytes.Buffer
	if e.Stdout == nil {
		e.Stdout = &out
	}
	if e.Stderr == nil {
		e.Stderr = &errb
	}
	code := cli.Run(context.Background(), e)
	return result{code, out.String(), errb.String()}
}

// homeEnv is an environment holding only SWITCHBOARD_HOME, home.
func homeEnv(home string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if k == "SWITCHBOARD_HOME" {
			return home, true
		}
		return "", false
	}
}

// writeConfig writes v as a configuration file. A stdio server that says
// nothing of its sandbox runs in report mode: the tests' servers read and
// write files in temporary directories beside the tests' Switchboard
// homes, which no grant may open (the sandbox's own tests are
// upgrade_sandbox_test.go and those of internal/launcher and host).
func writeConfig(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if json.Unmarshal(data, &doc) == nil {
		for _, key := range []string{"mcpServers", "servers"} {
			servers, _ := doc[key].(map[string]any)
			for _, s := range servers {
				if m, ok := s.(map[string]any); ok && m["command"] != nil && m["sandbox"] == nil {
					m["sandbox"] = "report"
				}
			}
		}
		if data, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    string // substring of stdout
		wantErr    string // substring of stderr
		notWantOut string
	}{
		{"tools", []string{"tools"}, 0, "demo__echo", "", ""},
		{"describe", []string{"tools", "demo:add"}, 0, `"a"`, "", ""},
		{"call key=value", []string{"call", "demo__echo", "text=hi there"}, 0, "hi there\n", "", ""},
		{"search before discovery", []string{"search", "add", "two", "numbers", "-k", "1"}, 0, "", `server "demo" has not been discovered yet`, "demo__add"},
		{"call string stays string", []string{"call", "demo__echo", "text=123"}, 0, "123\n", "", ""},
		{"call numbers", []string{"call", "demo__add", "a=2", "b=40"}, 0, `{"sum":42}`, "", ""},
		{"call JSON", []string{"call", "demo:echo", `{"text":"json"}`}, 0, "json\n", "", ""},
		{"call stdin", []string{"call", "demo__echo", "-"}, 0, "from stdin\n", "", ""},
		{"call flags after args", []string{"call", "demo__echo", "text=x", "--json"}, 0, `"isError": false`, "", ""},
		{"tool error exits 1", []string{"call", "demo__fail"}, 1, "always fails", "returned an error result", ""},
		{"unknown tool suggests", []string{"call", "demo__ecoh"}, 2, "", `did you mean "demo__echo"`, ""},
		{"names are escaped", []string{"call", "demo__\x1b[31mecho"}, 2, "", `demo__\x1b[31mecho`, ""},
		{"bad argument", []string{"call", "demo__echo", "text"}, 2, "", "not key=value", ""},
		{"bad JSON", []string{"call", "demo__echo", "{nope"}, 2, "", "one JSON object", ""},
		{"servers", []string{"servers"}, 0, "2026-07-28", "", ""},
		{"servers json", []string{"servers", "--json"}, 0, `"state": "ready"`, "", ""},
		{"resources", []string{"resources"}, 0, "demo:demo://readme", "", ""},
		{"templates", []string{"templates"}, 0, "demo:demo://notes/{id}", "", ""},
		{"read", []string{"read", "demo:demo://notes/welcome"}, 0, "welcome", "", ""},
		{"read bare URI", []string{"read", "demo://notes/welcome"}, 0, "welcome", "", ""},
		{"read bare listed URI", []string{"read", "demo://readme"}, 0, "demo", "", ""},
		{"read unknown server", []string{"read", "dmo:x://y"}, 2, "", `did you mean server "demo"`, ""},
		{"prompts", []string{"prompts"}, 0, "code [language]", "", ""},
		{"prompt", []string{"prompt", "demo:review", "code=x := 1", "language=go"}, 0, "user: ", "", ""},
		{"capability tool", []string{"call", "mcp_list_resources", "server=demo"}, 0, `"id":"demo:demo://readme"`, "", ""},
		{"capability tool reads", []string{"call", "mcp_read_resource", "id=demo:demo://notes/welcome"}, 0, "welcome", "", ""},
		{"tokens", []string{"servers", "--tokens"}, 0, "(switchboard built-in)", "", ""},
		{"tokens json", []string{"servers", "--tokens", "--json"}, 0, `"listedTokens"`, "", ""},
		{"format openai", []string{"tools", "--format", "openai"}, 0, `"type": "function"`, "", ""},
		{"format gemini", []string{"tools", "--format", "gemini"}, 0, `"functionDeclarations"`, "", ""},
		{"format anthropic", []string{"tools", "--format", "anthropic"}, 0, `"input_schema"`, "", ""},
		{"format unknown", []string{"tools", "--format", "openia"}, 2, "", `unknown format "openia"`, ""},
		{"version", []string{"version"}, 0, "switchboard 1.2.3", "", ""},
		{"flags before command", []string{"--json", "--home", "/nonexistent-home", "version"}, 0, `"version": "1.2.3"`, "", ""},
		{"unknown command", []string{"tool"}, 2, "", `did you mean "tools"`, ""},
		{"no command", nil, 2, "", "Usage", ""},
		{"help", []string{"help"}, 0, "Commands:", "", ""},
		{"too many args", []string{"read", "a", "b"}, 2, "", "usage: switchboard read", ""},
		{"serve stdio and http", []string{"serve", "--stdio", "--http", "127.0.0.1:0"}, 2, "", "not both", ""},
		{"serve unset token env", []string{"serve", "--http", "127.0.0.1:0", "--token-env", "SWITCHBOARD_TEST_UNSET"}, 2, "", "not set", ""},
		{"serve pprof to the network", []string{"serve", "--http", "127.0.0.1:0", "--pprof", "0.0.0.0:6060"}, 2, "", "loopback address only", ""},
		{"serve negative drain delay", []string{"serve", "--http", "127.0.0.1:0", "--drain-delay", "-1s"}, 2, "", "--drain-delay must not be negative", ""},
		{"serve no idle timeout", []string{"serve", "--http", "127.0.0.1:0", "--idle-timeout", "0s"}, 2, "", "--idle-timeout and --body-timeout must be positive", ""},
		{"serve no pending connections", []string{"serve", "--http", "127.0.0.1:0", "--max-pending-conns", "0"}, 2, "", "--max-pending-conns must be positive", ""},
		{"serve no sessions", []string{"serve", "--http", "127.0.0.1:0", "--max-sessions-per-client", "0"}, 2, "", "--max-sessions and --max-sessions-per-client must be positive", ""},
		{"serve no-auth to the network", []string{"serve", "--http", "127.0.0.1:0", "--no-auth", "--allow-host", "example.com"}, 2, "", "refusing", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, tt.args...)
			if r.code != tt.wantCode || !strings.Contains(r.stdout, tt.wantOut) || !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("switchboard %q: exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, r.code, tt.wantCode, r.stdout, r.stderr)
			}
		})
	}
}

func TestConfigErrorExits2(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{"x": map[string]any{"comand": "y"}}})
	r := run(t, "tools", "--config", path)
	if r.code != 2 || !strings.Contains(r.stderr, `$.mcpServers.x.comand`) || !strings.Contains(r.stderr, path) {
		t.Errorf("exit %d, stderr %s", r.code, r.stderr)
	}
	r = run(t, "tools", "--config", filepath.Join(t.TempDir(), "missing.json"))
	if r.code != 2 {
		t.Errorf("missing --config file: exit %d, stderr %s", r.code, r.stderr)
	}
}

// TestUpstreamFailures: a server that cannot start is a warning for other
// commands and exit 3 for a call that needs it; a crash mid-call is exit 3
// with the unknown-outcome advice.
func TestUpstreamFailures(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"good":   map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer)},
		"broken": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeExit)},
	}})
	r := run(t, "tools", "--config", path)
	if r.code != 0 || !strings.Contains(r.stdout, "good__echo") || !strings.Contains(r.stderr, `warning: server "broken" is unavailable`) {
		t.Errorf("tools: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "call", "broken:echo", "--config", path)
	if r.code != 3 || !strings.Contains(r.stderr, "unavailable") {
		t.Errorf("call on broken server: exit %d, stderr %s", r.code, r.stderr)
	}
	r = run(t, "call", "good__crash", "--config", path)
	if r.code != 3 || !strings.Contains(r.stderr, "may or may not have run") {
		t.Errorf("crash mid-call: exit %d, stderr %s", r.code, r.stderr)
	}
	r = run(t, "servers", "-v", "--config", path)
	if r.code != 0 || !strings.Contains(r.stdout, "cannot open database") || strings.Contains(r.stdout, "\x1b") {
		t.Errorf("servers -v should show the escaped stderr tail: %q", r.stdout)
	}
}

// TestServeStdio runs `switchboard serve --stdio` as a real subprocess on the
// embedded default and talks to it with go-sdk's client in both eras.
func TestServeStdio(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"", "2025-11-25"} {
		cmd := exec.Command(exe, "serve", "--stdio", "--home", t.TempDir())
		cmd.Env = append(os.Environ(), "SWITCHBOARD_CLI_RUN=1", testWaitVar+"="+testWait.String())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		var opts *mcp.ClientSessionOptions
		if version != "" {
			opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
		}
		ctx := context.Background()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, opts)
		if err != nil {
			t.Fatalf("connect: %v\n%s", err, stderr.String())
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "through the gateway"}})
		if err != nil || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "through the gateway" {
			t.Errorf("era %q: echo = %+v, %v", version, res, err)
		}
		if err := cs.Close(); err != nil {
			t.Logf("close: %v", err)
		}
		if !strings.Contains(stderr.String(), "serving 6 tools from 1 server, plus 5 built-in (1 of 1 server ready) on stdio\n  config: embedded default (no ") {
			t.Errorf("stderr = %q", stderr.String())
		}
	}
}

// TestServeStdioEnv runs `serve --stdio` in this process: the protocol
// goes over the Env's stdin and stdout, not the process's, and closing
// stdin ends it cleanly.
func TestServeStdioEnv(t *testing.T) {
	t.Parallel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	t.Cleanup(func() { inW.Close(); outR.Close() }) // serve ends however the test does
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	env := cli.Env{Args: []string{"serve", "--stdio", "--home", t.TempDir()},
		Stdin: inR, Stdout: outW, Stderr: &stderr, LookupEnv: homeEnv(t.TempDir()),
		Executable: exe, StartupWait: testWait}
	done := make(chan int, 1)
	go func() {
		code := cli.Run(context.Background(), env)
		outW.Close()
		done <- code
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
		&mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect over the Env's stdin and stdout: %v", err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "over the Env"}})
	if err != nil || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "over the Env" {
		t.Errorf("echo = %+v, %v", res, err)
	}
	cs.Close() // closes inW: serve sees the end of its stdin
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve --stdio: exit %d after stdin closed\n%s", code, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("serve --stdio still running a minute after its stdin closed")
	}
}

// TestServeHTTP is the main job end to end: `switchboard serve --http` on
// the embedded default prints how to connect, a client connects with the
// printed token and calls a tool, and a cancel stops it cleanly.
func TestServeHTTP(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	ctx := t.Context()
	g := startGateway(t, nil, "", "--home", home, "--pprof", "127.0.0.1:0")
	url, token := g.url, g.token
	stderr := g.stderr
	if p := regexp.MustCompile(`runtime profiles at (http://\S+)`).FindStringSubmatch(stderr.String()); p == nil {
		t.Errorf("banner lacks the profiles' address:\n%s", stderr.String())
	} else if resp, err := http.Get(p[1] + "goroutine?debug=1"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("profiles at %s: %v %v", p[1], resp, err)
	} else {
		resp.Body.Close()
	}
	if !strings.Contains(stderr.String(), "claude mcp add --transport http switchboard "+url+` --header "Authorization: Bearer `+token+`"`) {
		t.Errorf("banner lacks the Claude Code command:\n%s", stderr.String())
	}
	cs := g.session(t, nil)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__add", Arguments: map[string]any{"a": 2, "b": 40}})
	if err != nil || res.StructuredContent == nil {
		t.Errorf("add: %+v, %v", res, err)
	}
	cs.Close()
	if c := g.stop(); c != 0 {
		t.Errorf("exit %d\n%s", c, stderr.String())
	}
}

type headerRT struct{ k, v string }

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.k, h.v)
	return http.DefaultTransport.RoundTrip(r)
}
