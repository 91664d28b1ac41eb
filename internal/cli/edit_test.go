package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/peers"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// runIn runs the CLI with home as Switchboard's home and the working
// directory unchanged.
func runHome(t *testing.T, home string, args ...string) result {
	t.Helper()
	return runWith(t, cli.Env{Args: args, LookupEnv: homeEnv(home), Version: "test"})
}

// noSecret fails when any output of rs or the configuration file holds
// secret.
func noSecret(t *testing.T, home, secret string, rs ...result) {
	t.Helper()
	for _, r := range rs {
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("a command printed the secret:\n%s\n%s", r.stdout, r.stderr)
		}
	}
	for _, f := range []string{"config.json", "config.json.bak"} {
		if b, _ := os.ReadFile(filepath.Join(home, f)); bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the secret:\n%s", f, b)
		}
	}
}

// credsFile returns creds.json's credentials, checking its mode.
func credsFile(t *testing.T, home string) map[string]string {
	t.Helper()
	path := filepath.Join(home, "creds.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("creds.json: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("creds.json mode %04o, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("creds.json: %v\n%s", err, b)
	}
	return m
}

// TestAddStdio: add checks a stdio server, keeps the secret --env values
// in creds.json and references in config.json, and the server then works
// with the credential expanded (the test server's mode is a credential).
func TestAddStdio(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	exe, _ := os.Executable()
	const secret = "hunter2-secret-value"
	add := runHome(t, home, "add", "kit", "--env", testkit.ModeVar+"="+testkit.ModeServer, "--env", "API_KEY="+secret, "--", exe)
	if add.code != 0 {
		t.Fatalf("add: exit %d\n%s%s", add.code, add.stdout, add.stderr)
	}
	if !strings.Contains(add.stderr, `server "kit" works`) {
		t.Errorf("add did not say it checked the server:\n%s", add.stderr)
	}
	got := credsFile(t, home)
	// The rule of config.SecretEnv, as import applies it: the secret-named
	// API_KEY is kept under its own name; the mode variable is no secret.
	want := map[string]string{"API_KEY": secret}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("creds.json (-want +got):\n%s", diff)
	}
	cfgText, _ := os.ReadFile(filepath.Join(home, "config.json"))
	if !strings.Contains(string(cfgText), `"API_KEY": "${cred:API_KEY}"`) {
		t.Errorf("config.json does not reference the credential:\n%s", cfgText)
	}
	call := runHome(t, home, "call", "kit__echo", "text=hi")
	if call.code != 0 || !strings.Contains(call.stdout, "hi") {
		t.Fatalf("call: exit %d\n%s%s", call.code, call.stdout, call.stderr)
	}
	get := runHome(t, home, "get", "kit")
	getJSON := runHome(t, home, "get", "kit", "--json")
	list := runHome(t, home, "list", "--check", "-v")
	listJSON := runHome(t, home, "servers", "--json", "-v")
	for _, r := range []result{get, getJSON, list, listJSON} {
		if r.code != 0 {
			t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	for _, w := range []string{"state:        ready", "API_KEY=${cred:API_KEY}", "kit__echo", "protocol:"} {
		if !strings.Contains(get.stdout, w) {
			t.Errorf("get lacks %q:\n%s", w, get.stdout)
		}
	}
	var d struct {
		Config struct {
			Env map[string]string `json:"env"`
		} `json:"config"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
		Tools []string `json:"tools"`
	}
	if err := json.Unmarshal([]byte(getJSON.stdout), &d); err != nil || d.Status.State != "ready" || d.Config.Env["API_KEY"] != "${cred:API_KEY}" || len(d.Tools) == 0 {
		t.Errorf("get --json: %v %+v\n%s", err, d, getJSON.stdout)
	}
	noSecret(t, home, secret, add, call, get, getJSON, list, listJSON)
}

// TestAddShellLine: a command written as in a shell is split with its
// quotes honoured, and the name is suggested from the command.
func TestAddShellLine(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	exe, _ := os.Executable()
	dir := filepath.Join(t.TempDir(), "my docs")
	os.Mkdir(dir, 0o700)
	r := runHome(t, home, "add", "--no-verify", "--", fmt.Sprintf("%s demo-server %q", exe, dir))
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	b, _ := os.ReadFile(filepath.Join(home, "config.json"))
	json.Unmarshal(b, &cfg)
	s, ok := cfg.MCPServers["cli-test"] // the test binary's name, cleaned
	if !ok || s.Command != exe || !cmp.Equal(s.Args, []string{"demo-server", dir}) {
		t.Errorf("config.json:\n%s", b)
	}
	if !strings.Contains(r.stderr, "--no-verify") {
		t.Errorf("no warning for --no-verify:\n%s", r.stderr)
	}
	// After "--" the words are the command's, flags included, as they are.
	r = runHome(t, home, "add", "dash", "--", exe, "demo-server", "-v", "--json", "${X}")
	if r.code != 0 || strings.HasPrefix(r.stdout, "{") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	b, _ = os.ReadFile(filepath.Join(home, "config.json"))
	json.Unmarshal(b, &cfg)
	if got := cfg.MCPServers["dash"].Args; !cmp.Equal(got, []string{"demo-server", "-v", "--json", "$${X}"}) {
		t.Errorf("args %q\n%s", got, b)
	}
}

// httpServer serves the test server over Streamable HTTP on 127.0.0.1,
// answering only requests with header X-Api-Key: key.
func httpServer(t *testing.T, key string) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testkit.NewServer() }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != key {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// TestAddHTTP: add checks an HTTP server with its header, keeps the
// header's value in creds.json, and names the server from the URL; a
// server that refuses the check writes nothing (exit 3, the file unchanged
// byte for byte); --no-verify saves anyway.
func TestAddHTTP(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	const key = "k-secret-123456"
	url := httpServer(t, key)
	orig := "{\"$schema\": \"x\", \"policy\": {\"default\": \"allow\", \"confirm\": \"destructive\"},\n  \"mcpServers\": {}}\n"
	path := filepath.Join(home, "config.json")
	os.WriteFile(path, []byte(orig), 0o600)

	// A server on this machine must be trusted to be reached.
	bad := runHome(t, home, "add", "web", url, "--trust", "--header", "X-Api-Key: wrong-key-000")
	if bad.code != 3 || !strings.Contains(bad.stderr, "nothing was written") {
		t.Errorf("add with a refused header: exit %d, want 3\n%s", bad.code, bad.stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != orig {
		t.Errorf("config.json changed:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(home, "creds.json")); err == nil {
		t.Error("creds.json written for a failed add")
	}

	add := runHome(t, home, "add", url, "--trust", "--header", "X-Api-Key: "+key)
	if add.code != 0 {
		t.Fatalf("add: exit %d\n%s", add.code, add.stderr)
	}
	b, _ := os.ReadFile(path)
	// The file keeps its own layout; the new server follows its siblings'.
	want := `{"$schema": "x", "policy": {"default": "allow", "confirm": "destructive"},
  "mcpServers": {
    "mcp": {
      "url": "` + url + `",
      "headers": {
        "X-Api-Key": "${cred:mcp.header.X-Api-Key}"
      },
      "trust": "trusted"
    }
  }}
`
	if string(b) != want {
		t.Errorf("config.json:\n%s\nwant\n%s", b, want)
	}
	if bak, _ := os.ReadFile(path + ".bak"); string(bak) != orig {
		t.Errorf("config.json.bak = %s, want the old file", bak)
	}
	if c := credsFile(t, home); c["mcp.header.X-Api-Key"] != key {
		t.Errorf("creds.json lacks the header's value")
	}
	get := runHome(t, home, "get", "mcp", "--json")
	if get.code != 0 || !strings.Contains(get.stdout, `"state": "ready"`) {
		t.Errorf("get: exit %d\n%s%s", get.code, get.stdout, get.stderr)
	}
	noSecret(t, home, key, add, get, bad)

	nv := runHome(t, home, "add", "web", url, "--no-verify", "--transport", "sse")
	if nv.code != 0 || !strings.Contains(nv.stderr, "without checking") {
		t.Errorf("--no-verify: exit %d\n%s", nv.code, nv.stderr)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"type": "sse"`) {
		t.Errorf("the sse server is not saved:\n%s", b)
	}
	check := runHome(t, home, "list", "--check")
	if check.code != 3 || !strings.Contains(check.stderr, `server "web"`) {
		t.Errorf("list --check with a broken server: exit %d, want 3\n%s", check.code, check.stderr)
	}
}

// TestAddFailsWritesNothing: a server that cannot start is not saved,
// nor are its credentials.
func TestAddFailsWritesNothing(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	exe, _ := os.Executable()
	orig := `{"mcpServers": {"demo": {"command": "` + exe + `", "args": ["demo-server"]}}, "policy": {}}`
	path := filepath.Join(home, "config.json")
	os.WriteFile(path, []byte(orig), 0o600)
	for _, args := range [][]string{
		{"add", "bad", "--env", "K=secret-zz", "--", filepath.Join(home, "no-such-program")},
		{"add", "exits", "--env", testkit.ModeVar + "=" + testkit.ModeExit, "--", exe},
		{"add-json", "bad2", `{"command": "/no/such/program", "env": {"K": "secret-zz"}}`},
	} {
		r := runHome(t, home, args...)
		if r.code != 3 {
			t.Errorf("%q: exit %d, want 3\n%s", args, r.code, r.stderr)
		}
		if b, _ := os.ReadFile(path); string(b) != orig {
			t.Errorf("%q: config.json changed:\n%s", args, b)
		}
		if _, err := os.Stat(filepath.Join(home, "creds.json")); err == nil {
			t.Errorf("%q: creds.json written", args)
		}
		noSecret(t, home, "secret-zz", r)
	}
	dup := runHome(t, home, "add", "DEMO", "--", exe, "demo-server")
	if dup.code != 2 || !strings.Contains(dup.stderr, "already has a server") {
		t.Errorf("a name taken: exit %d\n%s", dup.code, dup.stderr)
	}
}

// TestCredsReadableRefused: a creds.json others may read is refused,
// by the editing commands and by loading.
func TestCredsReadableRefused(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	exe, _ := os.Executable()
	path := filepath.Join(home, "creds.json")
	os.WriteFile(path, []byte(`{"x": "leaked-value"}`), 0o600)
	os.Chmod(path, 0o644)
	os.WriteFile(filepath.Join(home, "config.json"), []byte(`{"mcpServers": {"d0": {"command": "`+exe+`", "args": ["demo-server"]}}}`), 0o600)
	for _, args := range [][]string{
		{"add", "d", "--env", "K=v", "--", exe, "demo-server"},
		{"servers"},
	} {
		r := runHome(t, home, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "chmod 600") {
			t.Errorf("%q: exit %d, want 2 and advice\n%s", args, r.code, r.stderr)
		}
		noSecret(t, home, "leaked-value", r)
	}
}

// TestConcurrentAdds: two adds at once both land.
func TestConcurrentAdds(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	exe, _ := os.Executable()
	var wg sync.WaitGroup
	rs := make([]result, 4)
	for i := range rs {
		wg.Go(func() {
			rs[i] = runHome(t, home, "add", fmt.Sprint("s", i), "--env", fmt.Sprintf("API_KEY=v%d", i), "--", exe, "demo-server")
		})
	}
	wg.Wait()
	for i, r := range rs {
		if r.code != 0 {
			t.Errorf("add %d: exit %d\n%s", i, r.code, r.stderr)
		}
	}
	b, _ := os.ReadFile(filepath.Join(home, "config.json"))
	var cfg struct {
		MCPServers map[string]any `json:"mcpServers"`
	}
	json.Unmarshal(b, &cfg)
	if len(cfg.MCPServers) != len(rs) {
		t.Errorf("%d servers saved, want %d:\n%s", len(cfg.MCPServers), len(rs), b)
	}
	// Four values of API_KEY: one name each, none overwritten.
	c := credsFile(t, home)
	values := map[string]bool{}
	for _, v := range c {
		values[v] = true
	}
	if len(c) != len(rs) || len(values) != len(rs) {
		t.Errorf("credentials %v, want %d distinct", c, len(rs))
	}
}

// TestRemoveEnableDisable: disable and enable (which checks first), and
// remove, which takes the server's credentials with it.
func TestRemoveEnableDisable(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	exe, _ := os.Executable()
	path := filepath.Join(home, "config.json")
	mustRun := func(args ...string) result {
		t.Helper()
		r := runHome(t, home, args...)
		if r.code != 0 {
			t.Fatalf("%q: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return r
	}
	mustRun("add", "demo", "--env", "K_TOKEN=val-one", "--", exe, "demo-server")
	mustRun("add", "broken", "--disabled", "--no-verify", "--", filepath.Join(home, "nothing-here"))
	if r := mustRun("list", "--check"); !strings.Contains(r.stdout, "disabled") {
		t.Errorf("list:\n%s", r.stdout)
	}
	before, _ := os.ReadFile(path)
	if r := runHome(t, home, "enable", "broken"); r.code != 3 {
		t.Errorf("enable broken: exit %d, want 3\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, before) {
		t.Errorf("a refused enable changed the file:\n%s", b)
	}
	mustRun("disable", "demo")
	if r := mustRun("get", "demo"); !strings.Contains(r.stdout, "enabled:      false") || !strings.Contains(r.stdout, "state:        disabled") {
		t.Errorf("get after disable:\n%s", r.stdout)
	}
	mustRun("enable", "demo")
	if r := mustRun("get", "demo"); !strings.Contains(r.stdout, "state:        ready") {
		t.Errorf("get after enable:\n%s", r.stdout)
	}
	mustRun("remove", "demo")
	if c := credsFile(t, home); len(c) != 0 {
		t.Errorf("the removed server's credentials stay: %v", c)
	}
	if r := runHome(t, home, "remove", "demo"); r.code != 2 || !strings.Contains(r.stderr, `no server "demo"`) {
		t.Errorf("remove again: exit %d\n%s", r.code, r.stderr)
	}
	if r := runHome(t, home, "get", "nope"); r.code != 2 {
		t.Errorf("get nope: exit %d", r.code)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), `"demo"`) || !strings.Contains(string(b), `"broken"`) {
		t.Errorf("config.json after remove:\n%s", b)
	}
}

// TestAddNPMPeer: add a real npm server written as a shell line; its
// name is suggested from the package.
func TestAddNPMPeer(t *testing.T) {
	t.Parallel()
	node, script := peers.Script(t, peers.Memory)
	home := t.TempDir()
	// The script path is what npx would run; the name comes from the
	// package directory, as for "npx -y @modelcontextprotocol/server-memory".
	r := runHome(t, home, "add", "--", node+" '"+script+"'")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	g := runHome(t, home, "get", "memory", "--json")
	if g.code != 0 || !strings.Contains(g.stdout, `"state": "ready"`) {
		t.Errorf("get: exit %d\n%s%s", g.code, g.stdout, g.stderr)
	}
}

// TestSplitCommand: shell words, with no shell.
func TestSplitCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{`npx -y @scope/pkg "/srv/my docs"`, []string{"npx", "-y", "@scope/pkg", "/srv/my docs"}, false},
		{`a 'b c' d\ e "f\"g"`, []string{"a", "b c", "d e", `f"g`}, false},
		{`srv --token $TOKEN --dir "${DIR}/x"`, []string{"srv", "--token", "${TOKEN}", "--dir", "${DIR}/x"}, false},
		{`srv ~/data`, []string{"srv", "${HOME}/data"}, false},
		{`srv '${LITERAL}' '$x'`, []string{"srv", "$${LITERAL}", "$x"}, false},
		{`srv ""`, []string{"srv", ""}, false},
		{`srv $(rm -rf /)`, nil, true},
		{"srv `id`", nil, true},
		{`srv >(tee log)`, nil, true},
		{`srv <(cat x)`, nil, true},
		{`srv "unterminated`, nil, true},
		{`srv; rm x`, nil, true},
	}
	for _, tt := range tests {
		got, err := cli.SplitCommand(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("SplitCommand(%q) error %v, want error %v", tt.in, err, tt.err)
			continue
		}
		if !tt.err && !cmp.Equal(got, tt.want) {
			t.Errorf("SplitCommand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzSplitCommand: SplitCommand never panics, and a plain word list
// (no shell syntax) splits into its words.
func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{`npx -y @scope/pkg "/srv/my docs"`, `a 'b' "c" \d`, `$X ${Y:-z} ~`, "x $(y)", `{a,b}`} {
		f.Add(s)
	}
	plain := regexp.MustCompile(`^[A-Za-z0-9_./@:+=,-]+$`)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := cli.SplitCommand(s)
		if err != nil {
			return
		}
		// The shell separates words by space, tab and newline only.
		words := strings.FieldsFunc(s, func(c rune) bool { return c == ' ' || c == '\t' || c == '\n' })
		for _, w := range words {
			if !plain.MatchString(w) {
				return
			}
		}
		if len(words) == 0 {
			if len(got) != 0 {
				t.Errorf("SplitCommand(%q) = %q, want no words", s, got)
			}
			return
		}
		if !cmp.Equal(got, words) {
			t.Errorf("SplitCommand(%q) = %q, want %q", s, got, words)
		}
	})
}

// TestSuggestName: names from a URL's host or a command's package.
func TestSuggestName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url  string
		argv []string
		want string
	}{
		{"https://mcp.github.com/x", nil, "github"},
		{"https://api.githubcopilot.com/mcp/", nil, "githubcopilot"},
		{"https://mcp.linear.app/sse", nil, "linear"},
		{"https://example.com/mcp", nil, "example"},
		{"http://127.0.0.1:9000/mcp", nil, "mcp"},
		{"http://localhost:9000/", nil, "local"},
		{"", []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"}, "filesystem"},
		{"", []string{"npx", "-y", "@upstash/context7-mcp@latest"}, "context7"},
		{"", []string{"uvx", "mcp-server-fetch"}, "fetch"},
		{"", []string{"docker", "run", "-i", "--rm", "ghcr.io/github/github-mcp-server"}, "github"},
		{"", []string{"/usr/local/bin/My.Server"}, "my-server"},
		{"", []string{"node", "/srv/weather/index.js"}, "weather"},
		{"", []string{"node", "/w/node_modules/@modelcontextprotocol/server-memory/dist/index.js"}, "memory"},
		{"", []string{"node", "/home/me/weather-server/build/index.js", "--port", "3"}, "weather"},
		{"", []string{"node", "--no-warnings", "./dist/cli.mjs"}, "cli"},
		{"", []string{"python3", "/srv/mcp-server-time/main.py"}, "time"},
		{"", []string{"node", "/srv/tools/github.js"}, "github"},
		{"", []string{"!!!"}, "server"},
	}
	for _, tt := range tests {
		if got := cli.SuggestName(tt.url, tt.argv); got != tt.want {
			t.Errorf("SuggestName(%q, %q) = %q, want %q", tt.url, tt.argv, got, tt.want)
		}
	}
}

// TestServeSeesAdd: a running serve (no flag) picks up a server added by
// `switchboard add`, and its connected client is told the tools changed.
func TestServeSeesAdd(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	exe, _ := os.Executable()
	ctx := t.Context()
	g := startGateway(t, map[string]string{"SWITCHBOARD_HOME": home}, "")
	stderr := g.stderr
	changed := make(chan struct{}, 8)
	cs := g.session(t, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	if r := runHome(t, home, "add", "added", "--env", "K=secret-in-serve", "--", exe, "demo-server"); r.code != 0 {
		t.Fatalf("add: exit %d\n%s", r.code, r.stderr)
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatalf("no tools/list_changed:\n%s", stderr.String())
	}
	has := func() bool { return lists(ctx, cs, "added__echo") }
	if !proc.Eventually(10*time.Second, has) {
		t.Fatalf("added__echo not listed:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "secret-in-serve") {
		t.Errorf("serve printed the credential:\n%s", stderr.String())
	}
	if c := g.stop(); c != 0 {
		t.Errorf("serve exit %d", c)
	}
}

// TestAddScopeProject: --scope project writes .mcp.json in the working
// directory, and leaves the home's configuration alone; its credentials
// still go to the home's creds.json.
func TestAddScopeProject(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	t.Chdir(dir)
	exe, _ := os.Executable()
	r := runHome(t, home, "add", "proj", "--scope", "project", "--env", "TOKEN=proj-secret-1", "--", exe, "demo-server")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".mcp.json"))
	if err != nil || !strings.Contains(string(b), `"proj"`) || strings.Contains(string(b), "proj-secret-1") {
		t.Errorf(".mcp.json: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(home, "config.json")); err == nil {
		t.Error("the home's config.json was written")
	}
	if c := credsFile(t, home); c["TOKEN"] != "proj-secret-1" {
		t.Errorf("creds.json: %v", c)
	}
	// disable and enable change the same file.
	if r := runHome(t, home, "disable", "proj", "--scope", "project"); r.code != 0 {
		t.Errorf("disable --scope project: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".mcp.json")); !strings.Contains(string(b), `"enabled": false`) {
		t.Errorf("disable --scope project left .mcp.json:\n%s", b)
	}
	if r := runHome(t, home, "enable", "proj", "--scope", "project", "--no-verify"); r.code != 0 {
		t.Errorf("enable --scope project: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".mcp.json")); strings.Contains(string(b), `"enabled": false`) {
		t.Errorf("enable --scope project left .mcp.json:\n%s", b)
	}
	if r := runHome(t, home, "remove", "proj", "--scope", "project"); r.code != 0 {
		t.Errorf("remove --scope project: exit %d\n%s", r.code, r.stderr)
	}
	if r := runHome(t, home, "add", "x", "--scope", "team", "--", exe); r.code != 2 {
		t.Errorf("--scope team: exit %d, want 2", r.code)
	}
}

// TestFailedWriteRestoresCreds: when the configuration cannot be written
// after the credentials were (its lock file cannot be opened), the
// credentials are put back as they were: a name that had a value keeps
// it, a new one is gone; by add and by import alike.
func TestFailedWriteRestoresCreds(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	home := t.TempDir()
	before := map[string]string{"K_TOKEN": "old-value", "API_KEY": "old-key", "other": "x"}
	b, _ := json.Marshal(before)
	if err := os.WriteFile(filepath.Join(home, "creds.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(home, "config.json.lock"), 0o700); err != nil {
		t.Fatal(err)
	}
	client := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	os.WriteFile(client, []byte(`{"mcpServers": {"imp": {"command": "`+exe+`", "args": ["demo-server"], "env": {"API_KEY": "sk-new-key-1234567890", "NEW_TOKEN": "tok-new-1234567890"}}}}`), 0o600)
	for _, args := range [][]string{
		{"add", "s", "--no-verify", "--env", "K_TOKEN=new-value", "--env", "J_TOKEN=new-too", "--", exe, "demo-server"},
		{"import", "--from", client, "--no-verify"},
	} {
		r := runHome(t, home, args...)
		if r.code == 0 {
			t.Fatalf("%q: exit 0 with the lock file a directory\n%s", args, r.stdout)
		}
		if diff := cmp.Diff(before, credsFile(t, home)); diff != "" {
			t.Errorf("%q: creds.json (-want +got):\n%s\n%s", args, diff, r.stderr)
		}
	}
}

// TestGetMasksArgsAndURL: get shows no literal secret from a server's
// args or from its URL's query, in text or JSON (the configuration
// refuses a URL with user information).
func TestGetMasksArgsAndURL(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	home := t.TempDir()
	cfg := `{"mcpServers": {
  "local": {"command": "` + exe + `", "args": ["demo-server", "--api-key=supersecret-1", "--token", "supersecret-2", "ghp_supersecret3abcdef"], "enabled": false},
  "remote": {"url": "http://127.0.0.1:1/mcp?token=supersecret-5&mode=fast", "enabled": false}}}`
	if err := os.WriteFile(filepath.Join(home, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"get", "local"}, {"get", "local", "--json"}, {"get", "remote"}, {"get", "remote", "--json"}} {
		r := runHome(t, home, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "[redacted]") {
			t.Errorf("%q: exit %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, "supersecret") {
			t.Errorf("%q printed a secret:\n%s", args, r.stdout)
		}
	}
	if r := runHome(t, home, "get", "remote"); !strings.Contains(r.stdout, "mode=fast") {
		t.Errorf("get remote hides more than the secrets:\n%s", r.stdout)
	}
}

// TestAddCheckWithoutStore: when the state store cannot be opened, add
// still checks the server, on a host that keeps nothing (not one that
// opens a store of its own elsewhere), manual approval and all.
func TestAddCheckWithoutStore(t *testing.T) {
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, "state.db"), 0o700); err != nil { // no SQLite file can be opened there
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	t.Setenv("SWITCHBOARD_HOME", elsewhere) // the process's, which the CLI does not read
	exe, _ := os.Executable()
	entry, _ := json.Marshal(map[string]any{"command": exe, "env": map[string]string{testkit.ModeVar: testkit.ModeServer}, "approval": "manual"})
	add := runHome(t, home, "add-json", "kit", string(entry))
	if add.code != 0 || !strings.Contains(add.stderr, `server "kit" works`) {
		t.Fatalf("add-json: exit %d\n%s%s", add.code, add.stdout, add.stderr)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "state.db")); err == nil {
		t.Errorf("the check opened a store of its own in %s", elsewhere)
	}
}
