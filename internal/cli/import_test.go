package cli_test

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/clientconf"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/peers"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// The secrets of the sample files in internal/clientconf/testdata.
const (
	desktopSecret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	cursorSecret  = "sk-live-0123456789abcdef"
)

// sample reads a client's sample file as the client ships it.
func sample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../clientconf/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runnable returns the sample JSON file with each server's command
// replaced by a real one: the demo server (this test binary), or for the
// names in npm the npm memory server. Everything else (foreign keys, env,
// inline secrets) stays as the client has it.
func runnable(t *testing.T, name string, npm ...string) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(sample(t, name), &doc); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	for n, s := range doc["mcpServers"].(map[string]any) {
		srv := s.(map[string]any)
		srv["command"], srv["args"] = exe, []any{"demo-server"}
		for _, m := range npm {
			if m == n {
				node, script := peers.Script(t, peers.Memory)
				srv["command"], srv["args"] = node, []any{script}
			}
		}
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return b
}

// put writes data at rel under dir.
func put(t *testing.T, dir, rel string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sbServers reads Switchboard's config.json's servers.
func sbServers(t *testing.T, h homes) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.sb, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return doc.MCPServers
}

// snapshot is every file under the dirs, by path.
func snapshot(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				b, _ := os.ReadFile(p)
				out[p] = string(b)
			}
			return nil
		})
	}
	return out
}

const desktopFile = ".config/Claude/claude_desktop_config.json"

// TestImportClaudeDesktop: Claude Desktop's file with its foreign keys is
// imported whole: the keys only it knows are noted, every server is
// checked (demo servers and an npm server) and added, the inline token
// moves to creds.json and appears in no output nor config.json, and
// config.json stays strict.
func TestImportClaudeDesktop(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	path := put(t, h.user, desktopFile, runnable(t, "claude_desktop_config.json", "filesystem"))
	r := h.run(t, "import")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{path, "globalShortcut: a Claude Desktop setting", `server "cline-style": alwaysAllow: skipped`,
		`server "cline-style": timeout: skipped`, "credential GITHUB_PERSONAL_ACCESS_TOKEN moves to creds.json", `added server "filesystem"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	got := sbServers(t, h)
	if len(got) != 3 || got["github"]["env"].(map[string]any)["GITHUB_PERSONAL_ACCESS_TOKEN"] != "${cred:GITHUB_PERSONAL_ACCESS_TOKEN}" {
		t.Errorf("servers = %v", got)
	}
	if c := credsFile(t, h.sb); c["GITHUB_PERSONAL_ACCESS_TOKEN"] != desktopSecret {
		t.Errorf("creds.json = %v", mapKeys(c))
	}
	check := h.run(t, "servers", "--check", "--json")
	if check.code != 0 {
		t.Errorf("servers --check: exit %d\n%s%s", check.code, check.stdout, check.stderr)
	}
	noSecret(t, h.sb, desktopSecret, r, check)

	// Importing again adds nothing: every server is there already.
	again := h.run(t, "import", "--json")
	if again.code != 0 || strings.Count(again.stdout, `"status": "skipped"`) != 3 {
		t.Errorf("again: exit %d\n%s%s", again.code, again.stdout, again.stderr)
	}
	noSecret(t, h.sb, desktopSecret, again)

	// Switchboard's own file is still strict.
	cfg := filepath.Join(h.sb, "config.json")
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, bytes.Replace(b, []byte(`"command"`), []byte(`"comand"`), 1), 0o600)
	bad := h.run(t, "import")
	if bad.code != 2 || !strings.Contains(bad.stderr, `did you mean "command"?`) {
		t.Errorf("unknown field in config.json: exit %d\n%s", bad.code, bad.stderr)
	}
}

func mapKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestImportDryRun: --dry-run shows the plan (adds, skips, notes,
// credentials by name) and writes nothing anywhere.
func TestImportDryRun(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	put(t, h.user, desktopFile, sample(t, "claude_desktop_config.json"))
	put(t, h.user, ".cursor/mcp.json", sample(t, "cursor_mcp.json"))
	put(t, h.sb, "config.json", []byte(`{"mcpServers": {"notes": {"command": "x"}}}`))
	before := snapshot(t, h.user, h.sb)
	for _, args := range [][]string{{"import", "--dry-run"}, {"import", "--dry-run", "--json"}} {
		r := h.run(t, args...)
		if r.code != 0 {
			t.Fatalf("%q: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		if diff := cmp.Diff(before, snapshot(t, h.user, h.sb)); diff != "" {
			t.Fatalf("%q wrote (-before +after):\n%s", args, diff)
		}
		for _, s := range []string{desktopSecret, cursorSecret} {
			if strings.Contains(r.stdout+r.stderr, s) {
				t.Errorf("%q printed a secret:\n%s", args, r.stdout)
			}
		}
		if args[len(args)-1] == "--json" {
			if !strings.Contains(r.stdout, `"REMOTE_TOKEN"`) || !strings.Contains(r.stdout, `"dryRun": true`) {
				t.Errorf("json:\n%s", r.stdout)
			}
			continue
		}
		for _, want := range []string{`add "github"`, "credential REMOTE_TOKEN moves to creds.json",
			`skip "notes": a server named "notes" is there already: import with --prefix P`,
			`envFile: skipped`, "dry run: nothing was written"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
			}
		}
	}
}

// TestImportCursorEnv: Cursor's ${env:VAR} and the plain ${VAR} are both
// references: a server whose variable is unset fails its check (exit 3,
// nothing written); set, it is imported with ${VAR}.
func TestImportCursorEnv(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	exe, _ := os.Executable()
	file := `{"mcpServers": {
  "notes": {"command": "` + exe + `", "args": ["demo-server"], "env": {"NOTES_API_KEY": "${env:NOTES_API_KEY}"}, "envFile": "${workspaceFolder}/.env"},
  "plain": {"command": "` + exe + `", "args": ["demo-server"], "env": {"NOTES_API_KEY": "${NOTES_API_KEY}"}}
}}`
	put(t, h.user, ".cursor/mcp.json", []byte(file))
	r := h.run(t, "import", "--from", "cursor")
	if r.code != 3 || !strings.Contains(r.stderr, "NOTES_API_KEY") {
		t.Errorf("unset variable: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(h.sb, "config.json")); err == nil {
		t.Errorf("config.json written though every server failed")
	}
	h.env = map[string]string{"NOTES_API_KEY": "from-env"}
	r = h.run(t, "import", "--from", "cursor")
	if r.code != 0 || !strings.Contains(r.stdout, "envFile: skipped") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := sbServers(t, h)
	for _, n := range []string{"notes", "plain"} {
		if v := got[n]["env"].(map[string]any)["NOTES_API_KEY"]; v != "${NOTES_API_KEY}" {
			t.Errorf("%s: env = %v", n, v)
		}
	}
	if _, err := os.Stat(filepath.Join(h.sb, "creds.json")); err == nil {
		t.Errorf("creds.json written for references only")
	}
}

// TestImportCodex: Codex's TOML [mcp_servers.*] tables, with their
// foreign keys, an inline key in env, a name with a space and a disabled
// server.
func TestImportCodex(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	exe, _ := os.Executable()
	const secret = "ctx7sk-0123456789abcdef"
	file := `model = "gpt-5-codex"
approval_policy = "on-request"

[mcp_servers.docs]
command = "` + exe + `"
args = ["demo-server"]
startup_timeout_sec = 20

[mcp_servers.docs.env]
CONTEXT7_API_KEY = "` + secret + `"

[mcp_servers."local tools"]
command = "` + exe + `"
args = ["demo-server"]
enabled = false

[profiles.fast]
model = "gpt-5-mini"
`
	put(t, h.user, ".codex/config.toml", []byte(file))
	r := h.run(t, "import", "--from", "codex")
	if r.code != 0 || !strings.Contains(r.stdout, "startup_timeout_sec: skipped") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := sbServers(t, h)
	if got["docs"]["env"].(map[string]any)["CONTEXT7_API_KEY"] != "${cred:CONTEXT7_API_KEY}" || got["local-tools"]["enabled"] != false {
		t.Errorf("servers = %v", got)
	}
	if c := credsFile(t, h.sb); c["CONTEXT7_API_KEY"] != secret {
		t.Errorf("creds.json = %v", mapKeys(c))
	}
	noSecret(t, h.sb, secret, r)
}

// TestImportGeminiHTTP: Gemini's httpUrl is Streamable HTTP; a server on
// this machine needs --trust, as for add; its key header moves to
// creds.json.
func TestImportGeminiHTTP(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	const key = "gem-key-0123456789"
	url := httpServer(t, key)
	file := `{"theme": "Dracula", "selectedAuthType": "gemini-api-key",
  "mcpServers": {"web": {"httpUrl": "` + url + `", "headers": {"X-Api-Key": "` + key + `"}, "timeout": 5000}}}`
	path := put(t, h.user, ".gemini/settings.json", []byte(file))
	r := h.run(t, "import", "--from", path)
	if r.code != 3 {
		t.Errorf("an untrusted loopback server: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r2 := h.run(t, "import", "--from", "gemini", "--trust")
	if r2.code != 0 || !strings.Contains(r2.stdout, `server "web": timeout: skipped`) {
		t.Fatalf("exit %d\n%s%s", r2.code, r2.stdout, r2.stderr)
	}
	got := sbServers(t, h)["web"]
	if got["type"] != "http" || got["url"] != url || got["trust"] != "trusted" || got["headers"].(map[string]any)["X-Api-Key"] != "${cred:WEB_X_API_KEY}" {
		t.Errorf("web = %v", got)
	}
	if c := credsFile(t, h.sb); c["WEB_X_API_KEY"] != key {
		t.Errorf("creds.json = %v", mapKeys(c))
	}
	noSecret(t, h.sb, key, r, r2)
}

// TestImportVSCodeInputs: a VS Code input is a credential to prompt for:
// without a terminal or --secret the server fails, saying which; with
// --secret it is kept in creds.json.
func TestImportVSCodeInputs(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	exe, _ := os.Executable()
	file := `{
  // Inputs are prompted on first start and stored by VS Code.
  "inputs": [{"type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": true}],
  "servers": {
    "perplexity": {"type": "stdio", "command": "` + exe + `", "args": ["demo-server"],
      "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"}, "gallery": true},
  },
}`
	put(t, h.user, ".config/Code/User/mcp.json", []byte(file))
	r := h.run(t, "import", "--from", "vscode")
	if r.code != 3 || !strings.Contains(r.stderr, "--secret PERPLEXITY_KEY=VALUE") || !strings.Contains(r.stdout, "credential PERPLEXITY_KEY is asked for: Perplexity API Key") {
		t.Errorf("no value for the input: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	const secret = "pplx-0123456789abcdef"
	r = h.run(t, "import", "--from", "vscode", "--secret", "PERPLEXITY_KEY="+secret)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := sbServers(t, h)["perplexity"]["env"].(map[string]any)["PERPLEXITY_API_KEY"]; got != "${cred:PERPLEXITY_KEY}" {
		t.Errorf("env = %v", got)
	}
	if c := credsFile(t, h.sb); c["PERPLEXITY_KEY"] != secret {
		t.Errorf("creds.json = %v", mapKeys(c))
	}
	noSecret(t, h.sb, secret, r)
}

// TestImportClash: a name Switchboard has already is skipped with a note
// (no terminal to ask); --prefix renames every imported server.
func TestImportClash(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	exe, _ := os.Executable()
	put(t, h.sb, "config.json", []byte(`{"mcpServers": {"demo": {"command": "`+exe+`", "args": ["demo-server"]}}}`))
	put(t, h.user, ".cursor/mcp.json", []byte(`{"mcpServers": {
  "demo": {"command": "`+exe+`", "args": ["demo-server"], "env": {"A": "1"}},
  "other": {"command": "`+exe+`", "args": ["demo-server"]}}}`))
	r := h.run(t, "import", "--from", "cursor")
	if r.code != 0 || !strings.Contains(r.stdout, `skip "demo": a server named "demo" is there already`) {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := sbServers(t, h); len(got) != 2 || got["demo"]["env"] != nil || got["other"] == nil {
		t.Errorf("servers = %v", got)
	}
	r = h.run(t, "import", "--from", "cursor", "--prefix", "cur-")
	if r.code != 0 {
		t.Fatalf("--prefix: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := sbServers(t, h)
	if len(got) != 4 || got["cur-demo"]["env"].(map[string]any)["A"] != "1" || got["cur-other"] == nil {
		t.Errorf("servers = %v", got)
	}
}

// TestImportFailingServer: a server that does not start is reported and
// skipped, the others are imported, and the exit code is 3.
func TestImportFailingServer(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	exe, _ := os.Executable()
	missing := filepath.Join(t.TempDir(), "no-such-server")
	put(t, h.user, ".cursor/mcp.json", []byte(`{"mcpServers": {
  "good": {"command": "`+exe+`", "args": ["demo-server"]},
  "bad": {"command": "`+missing+`"}}}`))
	r := h.run(t, "import")
	if r.code != 3 || !strings.Contains(r.stderr, "bad") || !strings.Contains(r.stdout, `added server "good"`) {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := sbServers(t, h); len(got) != 1 || got["good"] == nil {
		t.Errorf("servers = %v", got)
	}
}

// TestConnectMove: connect --move imports the client's servers, each
// checked, and leaves the gateway the client's one entry; disconnect
// restores the file. A server that fails moves nothing.
// TestConnectMove: --move takes into Switchboard the client's servers that
// work and leaves the one that does not in the client's file, naming it
// and exiting 3; a second --move, once it works, moves it too; disconnect
// restores the file as it was.
func TestConnectMove(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	exe, _ := os.Executable()
	orig := runnable(t, "claude_desktop_config.json") // servers in name order: cline-style first
	bad := bytes.Replace(orig, []byte(exe), []byte(filepath.Join(t.TempDir(), "no-such-server")), 1)
	path := put(t, h.user, desktopFile, bad)
	c, _ := clientconf.Lookup("claude-desktop")
	clientNames := func() []string {
		t.Helper()
		res, err := clientconf.Read(c, path)
		if err != nil {
			t.Fatal(err)
		}
		var ns []string
		for _, e := range res.Servers {
			ns = append(ns, e.Name)
		}
		sort.Strings(ns)
		return ns
	}
	r := h.run(t, "connect", "claude-desktop", "--move")
	if r.code != 3 || !strings.Contains(r.stdout, `left "cline-style" in its own file`) || !strings.Contains(r.stdout, "moved filesystem, github") {
		t.Errorf("a failing server: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := clientNames(); !slices.Equal(got, []string{"cline-style", clientconf.DefaultName}) {
		t.Errorf("client servers after a partial move = %v", got)
	}
	if got := sbServers(t, h); len(got) != 2 || got["cline-style"] != nil {
		t.Errorf("Switchboard servers after a partial move = %v", got)
	}
	noSecret(t, h.sb, desktopSecret, r)

	// Fixed in the client's file, it moves too.
	cur, _ := os.ReadFile(path)
	var doc map[string]any
	if err := json.Unmarshal(cur, &doc); err != nil {
		t.Fatal(err)
	}
	doc["mcpServers"].(map[string]any)["cline-style"].(map[string]any)["command"] = exe
	b, _ := json.MarshalIndent(doc, "", "  ")
	put(t, h.user, desktopFile, b)
	r = h.run(t, "connect", "claude-desktop", "--move")
	if r.code != 0 || !strings.Contains(r.stdout, "moved cline-style") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := clientNames(); !slices.Equal(got, []string{clientconf.DefaultName}) {
		t.Errorf("client servers = %v", got)
	}
	if got := sbServers(t, h); len(got) != 3 || got["cline-style"] == nil {
		t.Errorf("Switchboard servers = %v", got)
	}
	if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(desktopSecret)) || !bytes.Contains(b, []byte("globalShortcut")) {
		t.Errorf("client file:\n%s", b)
	}

	if r := h.run(t, "disconnect", "claude-desktop"); r.code != 0 {
		t.Fatalf("disconnect: exit %d\n%s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, bad) {
		t.Errorf("disconnect did not restore the file:\n%s", cmp.Diff(string(bad), string(got)))
	}
}

// TestImportTerminal drives import on a real pseudo-terminal (util-linux
// script): a name clash is asked about and renamed, and a VS Code password
// input is asked for without echo and kept in creds.json.
func TestImportTerminal(t *testing.T) {
	t.Parallel()
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Fatalf("the terminal test needs util-linux script: %v", err)
	}
	h := newHomes(t)
	exe, _ := os.Executable()
	put(t, h.sb, "config.json", []byte(`{"mcpServers": {"demo": {"command": "`+exe+`", "args": ["demo-server"]}}}`))
	put(t, h.user, ".config/Code/User/mcp.json", []byte(`{
  "inputs": [{"type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": true}],
  "servers": {
    "demo": {"type": "stdio", "command": "`+exe+`", "args": ["demo-server"], "env": {"A": "1"}},
    "perplexity": {"command": "`+exe+`", "args": ["demo-server"], "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"}}
  }
}`))
	const secret = "pplx-typed-0123456789"
	cmd := exec.Command(scriptBin, "-qefc", shellWords(exe, "import", "--from", "vscode"), "/dev/null")
	cmd.Env = append(os.Environ(), "SWITCHBOARD_CLI_RUN=1", "HOME="+h.user, "SWITCHBOARD_HOME="+h.sb)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out testkit.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) //nolint:errcheck // a run already waited for
	expect := func(s string) {
		t.Helper()
		if !proc.Eventually(20*time.Second, func() bool { return strings.Contains(out.String(), s) }) {
			t.Fatalf("no %q on the terminal:\n%s", s, out.String())
		}
	}
	expect(`[r]ename to demo-vscode, [s]kip, re[p]lace? `)
	io.WriteString(stdin, "r\n")
	expect("Perplexity API Key (credential PERPLEXITY_KEY")
	io.WriteString(stdin, secret+"\n")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), secret) {
		t.Errorf("the secret was echoed:\n%s", out.String())
	}
	got := sbServers(t, h)
	if len(got) != 3 || got["demo-vscode"]["env"].(map[string]any)["A"] != "1" || got["perplexity"] == nil {
		t.Errorf("servers = %v\n%s", got, out.String())
	}
	if c := credsFile(t, h.sb); c["PERPLEXITY_KEY"] != secret {
		t.Errorf("creds.json = %v", mapKeys(c))
	}
}

// shellWords quotes words for sh -c.
func shellWords(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// TestImportSniff: a file named with --from is read as the client whose
// place or file name it has, else by its shape.
func TestImportSniff(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	dir := t.TempDir()
	tests := []struct{ rel, sample, want string }{
		{".gemini/settings.json", "gemini_settings.json", "Gemini CLI: "},
		{"copy/claude_desktop_config.json", "claude_desktop_config.json", "globalShortcut: a Claude Desktop setting"},
		{"mcp.json", "vscode_mcp.json", "VS Code: "},
		{"x.toml", "codex_config.toml", `add "figma": http: https://mcp.figma.com/mcp`},
		{"any.json", "cursor_mcp.json", "Claude Code: "}, // the widest mcpServers dialect
	}
	for _, tc := range tests {
		path := put(t, dir, tc.rel, sample(t, tc.sample))
		r := h.run(t, "import", "--dry-run", "--from", path)
		if r.code != 0 || !strings.Contains(r.stdout, tc.want) {
			t.Errorf("%s: exit %d, want %q in\n%s%s", tc.rel, r.code, tc.want, r.stdout, r.stderr)
		}
	}
	if r := h.run(t, "import", "--from", "cusror"); r.code != 2 || !strings.Contains(r.stderr, `did you mean "cursor"?`) {
		t.Errorf("a misspelt client: exit %d\n%s", r.code, r.stderr)
	}
	if r := h.run(t, "import", "--from", "cursor"); r.code != 2 || !strings.Contains(r.stderr, "no Cursor configuration found") {
		t.Errorf("no file: exit %d\n%s", r.code, r.stderr)
	}
}

// TestConnectMoveClash: a server left out for a name clash (no terminal to
// ask) stays in the client's file while the others move; with --prefix it
// moves too, and --json reports the import and the move in one object.
func TestConnectMoveClash(t *testing.T) {
	t.Parallel()
	h := newHomes(t)
	exe, _ := os.Executable()
	put(t, h.sb, "config.json", []byte(`{"mcpServers": {"github": {"command": "`+exe+`", "args": ["demo-server"]}}}`))
	orig := runnable(t, "claude_desktop_config.json") // servers in name order
	path := put(t, h.user, desktopFile, orig)
	r := h.run(t, "connect", "claude-desktop", "--move")
	if r.code != 3 || !strings.Contains(r.stdout, `skip "github"`) || !strings.Contains(r.stdout, `left "github" in its own file: a server named "github" is there already`) {
		t.Errorf("a clash: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := sbServers(t, h); len(got) != 3 || got["cline-style"] == nil || got["filesystem"] == nil {
		t.Errorf("servers after the clash = %v", got)
	}
	if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte(`"github"`)) || bytes.Contains(b, []byte(`"cline-style"`)) {
		t.Errorf("the client's file after the clash:\n%s", b)
	}
	r = h.run(t, "connect", "claude-desktop", "--move", "--prefix", "cd-", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var out struct {
		Moved  []string
		Import struct {
			Servers []struct{ Name, Status string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v: %q", err, r.stdout)
	}
	if !slices.Equal(out.Moved, []string{"github"}) || len(out.Import.Servers) != 2 || out.Import.Servers[0].Name != "cd-github" || out.Import.Servers[0].Status != "added" {
		t.Errorf("json = %+v", out)
	}
	if got := sbServers(t, h); len(got) != 4 || got["cd-github"] == nil {
		t.Errorf("servers = %v", got)
	}
	noSecret(t, h.sb, desktopSecret, r)
}
