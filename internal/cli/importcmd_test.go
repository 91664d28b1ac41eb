package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/clientconf"
)

// homes are a user's home (the clients' files) and Switchboard's home,
// both temporary.
type homes struct {
	user, sb string
	env      map[string]string // other environment variables
}

func newHomes(t *testing.T) homes {
	return homes{user: t.TempDir(), sb: t.TempDir()}
}

// runIn runs the CLI with HOME and SWITCHBOARD_HOME set to h.
func (h homes) run(t *testing.T, args ...string) result {
	t.Helper()
	return runWith(t, cli.Env{Args: args, Version: "test",
		LookupEnv: func(k string) (string, bool) {
			switch k {
			case "HOME":
				return h.user, true
			case "SWITCHBOARD_HOME":
				return h.sb, true
			}
			v, ok := h.env[k]
			return v, ok
		}})
}

// readEntry reads the gateway's entry back, with the inline secrets Read
// took out of it put back.
func readEntry(t *testing.T, client, path string) clientconf.Entry {
	t.Helper()
	c, err := clientconf.Lookup(client)
	if err != nil {
		t.Fatal(err)
	}
	res, err := clientconf.Read(c, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Servers {
		if e.Name != clientconf.DefaultName {
			continue
		}
		for _, s := range res.Secrets {
			if s.Server == e.Name {
				for k, v := range e.Headers {
					e.Headers[k] = strings.ReplaceAll(v, "${"+s.Name+"}", s.Value)
				}
			}
		}
		return e
	}
	t.Fatalf("no %s entry in %s", clientconf.DefaultName, path)
	return clientconf.Entry{}
}

func TestConnectHTTPClients(t *testing.T) {
	t.Parallel()
	tests := []struct {
		client, file string
		args         []string
		url          string
		auth         func(token string) string // the Authorization header read back
	}{
		{"cursor", ".cursor/mcp.json", nil, "http://127.0.0.1:8939/mcp", func(tok string) string { return "Bearer " + tok }},
		{"claude-code", ".claude.json", []string{"--token-env", "SB_TOKEN"}, "http://127.0.0.1:8939/mcp", func(string) string { return "Bearer ${SB_TOKEN}" }},
		{"vscode", ".config/Code/User/mcp.json", []string{"--http", "9000"}, "http://127.0.0.1:9000/mcp", func(tok string) string { return "Bearer " + tok }},
		{"windsurf", ".codeium/windsurf/mcp_config.json", []string{"--http", ":9001", "--token-env", "T"}, "http://127.0.0.1:9001/mcp", func(string) string { return "Bearer ${T}" }},
		{"gemini", ".gemini/settings.json", nil, "http://127.0.0.1:8939/mcp", func(tok string) string { return "Bearer " + tok }},
	}
	for _, tc := range tests {
		t.Run(tc.client, func(t *testing.T) {
			h := newHomes(t)
			r := h.run(t, append([]string{"connect", tc.client}, tc.args...)...)
			if r.code != 0 {
				t.Fatalf("connect: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			path := filepath.Join(h.user, tc.file)
			if !strings.Contains(r.stdout, path) {
				t.Errorf("stdout does not name the file: %q", r.stdout)
			}
			e := readEntry(t, tc.client, path)
			tok, _ := os.ReadFile(filepath.Join(h.sb, cli.TokenFile))
			if e.Transport != clientconf.HTTP || e.URL != tc.url || e.Headers["Authorization"] != tc.auth(strings.TrimSpace(string(tok))) {
				t.Errorf("entry = %+v (token %q)", e, tok)
			}
			r = h.run(t, "disconnect", tc.client)
			if r.code != 0 {
				t.Fatalf("disconnect: exit %d\n%s", r.code, r.stderr)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("the file connect created is still there: %v", err)
			}
		})
	}
}

// TestConnectClaudeDesktop connects Claude Desktop's real-looking file,
// launches the entry it wrote as Claude Desktop would, calls a tool
// through it, and disconnects back to the original bytes.
func TestConnectClaudeDesktop(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	orig, err := os.ReadFile("../clientconf/testdata/claude_desktop_config.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(h.user, ".config", "Claude", "claude_desktop_config.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := h.run(t, "connect", "claude-desktop", "--token-env", "X"); r.code != 2 || !strings.Contains(r.stderr, "stdio entry needs no token") {
		t.Errorf("--token-env with a stdio entry: exit %d %q", r.code, r.stderr)
	}
	r := h.run(t, "connect", "claude-desktop", "--json")
	if r.code != 0 {
		t.Fatalf("connect: exit %d\n%s", r.code, r.stderr)
	}
	var out struct {
		Client, File, Backup string
		Replaced             bool
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v: %q", err, r.stdout)
	}
	if out.Client != "claude-desktop" || out.File != path || out.Backup != path+clientconf.BackupSuffix || out.Replaced {
		t.Errorf("json = %+v", out)
	}
	e := readEntry(t, "claude-desktop", path)
	exe, _ := os.Executable()
	if want := []string{"serve", "--stdio", "--home", h.sb}; e.Command != exe || !cmp.Equal(e.Args, want) {
		t.Fatalf("entry = %q %q, want %q %q", e.Command, e.Args, exe, want)
	}

	cmd := exec.Command(e.Command, e.Args...)
	cmd.Env = append(os.Environ(), "SWITCHBOARD_CLI_RUN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-desktop", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("launching the entry: %v\n%s", err, stderr.String())
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "from claude desktop"}})
	if err != nil || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "from claude desktop" {
		t.Errorf("echo = %+v, %v", res, err)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}

	if r := h.run(t, "disconnect", "claude-desktop"); r.code != 0 {
		t.Fatalf("disconnect: exit %d\n%s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
		t.Errorf("disconnect did not restore the file:\n%s", cmp.Diff(string(orig), string(got)))
	}
}

func TestConnectPrint(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	r := h.run(t, "connect", "--print", "vscode", "--token-env", "SB_TOKEN")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	want := "# VS Code: " + filepath.Join(h.user, ".config/Code/User/mcp.json") + "\n" +
		"{\n  \"switchboard\": {\n    \"type\": \"http\",\n    \"url\": \"http://127.0.0.1:8939/mcp\",\n" +
		"    \"headers\": {\n      \"Authorization\": \"Bearer ${env:SB_TOKEN}\"\n    }\n  }\n}\n"
	if diff := cmp.Diff(want, r.stdout); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if entries, _ := os.ReadDir(h.user); len(entries) != 0 {
		t.Errorf("--print wrote into the home: %v", entries)
	}
}

func TestConnectErrors(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	bad := filepath.Join(h.user, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"mcpServers": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"connect"}, 2, "usage: switchboard connect"},
		{[]string{"connect", "cusror"}, 2, `did you mean "cursor"?`},
		{[]string{"connect", "cursor", "--file", bad}, 2, "bad.json"},
		{[]string{"disconnect", "cursor"}, 2, "does not exist"},
		{[]string{"connect", "cursor", "--http", "nope"}, 2, "--http nope"},
	}
	for _, tc := range tests {
		r := h.run(t, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
}

// TestConnectTokenPrivate: connect --print never prints the gateway's
// token (it is masked, and the output says where it is kept); connect
// writing the token into a client's file leaves that file mode 0600 and
// says so, while an entry that refers to a variable leaves its mode alone.
func TestConnectTokenPrivate(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	path := filepath.Join(h.user, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func() {
		t.Helper()
		if err := os.WriteFile(path, []byte(`{"mcpServers": {}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write()
	// The first connect generates the token; --print reads it.
	if r := h.run(t, "connect", "cursor", "--token-env", "SB"); r.code != 0 || strings.Contains(r.stdout, "0600") {
		t.Fatalf("connect --token-env: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("connect --token-env: mode %04o, want 0644 (no secret in it)", fi.Mode().Perm())
	}
	h.run(t, "disconnect", "cursor")
	write()
	r := h.run(t, "connect", "cursor")
	if r.code != 0 || !strings.Contains(r.stdout, "mode 0600") {
		t.Fatalf("connect: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("connect: %s mode %04o, want 0600: it holds the token", path, fi.Mode().Perm())
	}
	tok, err := os.ReadFile(filepath.Join(h.sb, cli.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(tok))
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), token) {
		t.Fatalf("the file lacks the token:\n%s", b)
	}
	for _, args := range [][]string{{"connect", "cursor", "--print"}, {"connect", "cursor", "--print", "--json"}, {"connect", "vscode", "--print"}} {
		r := h.run(t, args...)
		if r.code != 0 || strings.Contains(r.stdout+r.stderr, token) {
			t.Errorf("%q: exit %d, printed the token:\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "[redacted]") || !strings.Contains(r.stdout, filepath.Join(h.sb, cli.TokenFile)) {
			t.Errorf("%q: the masked entry, or where the token is, is missing:\n%s", args, r.stdout)
		}
	}
}
