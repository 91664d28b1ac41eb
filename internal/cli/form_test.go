package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// Keys as a terminal sends them.
const (
	keyEnter = "\r"
	keyDown  = "\x1b[B"
	keyEsc   = "\x1b"
	keyCtrlC = "\x03"
	keyCtrlU = "\x15" // delete to the start of the line
)

// formWait bounds each wait for the form to show something: generous, for
// a loaded machine.
const formWait = 60 * time.Second

// term is the CLI running in a pseudo-terminal.
type term struct {
	t    *testing.T
	pty  *os.File
	cmd  *exec.Cmd
	done chan struct{} // closed when the output is read to its end

	mu   sync.Mutex
	out  bytes.Buffer // everything the CLI wrote
	seen int          // how much of the plain text waits have consumed
}

// startTerm runs the CLI with home in a 120x40 xterm.
func startTerm(t *testing.T, home string, args ...string) *term {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "SWITCHBOARD_CLI_RUN=1", "SWITCHBOARD_HOME="+home, "TERM=xterm-256color", "NO_COLOR=")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, pty: f, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(tm.done)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			// Answer the colour queries as a terminal would (a dark
			// background, the cursor at the top), or the CLI waits
			// seconds for the answer.
			for _, q := range []string{"10", "11"} {
				if bytes.Contains(buf[:n], []byte("\x1b]"+q+";?")) {
					io.WriteString(f, "\x1b]"+q+";rgb:0000/0000/0000\x1b\\\x1b[1;1R") //nolint:errcheck // the CLI waits and goes on without it
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-tm.done
		f.Close()
	})
	return tm
}

// ansi matches terminal control sequences.
var ansi = regexp.MustCompile(`\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78MDEc]`)

// plain is the output so far with the control sequences taken out.
func (tm *term) plain() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return ansi.ReplaceAllString(tm.out.String(), "")
}

// raw is the output so far, as written.
func (tm *term) raw() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

// waitFor waits until text shows after what earlier waits saw.
func (tm *term) waitFor(text string) {
	tm.t.Helper()
	deadline := time.Now().Add(formWait)
	for {
		p := tm.plain()
		tm.mu.Lock()
		from := min(tm.seen, len(p))
		if i := strings.Index(p[from:], text); i >= 0 {
			tm.seen = from + i + len(text)
			tm.mu.Unlock()
			// The program reads keys once it has drawn; let it settle.
			time.Sleep(150 * time.Millisecond)
			return
		}
		tm.mu.Unlock()
		select {
		case <-tm.done:
			tm.t.Fatalf("the CLI ended before showing %q:\n%s", text, tm.plain())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("no %q after %v:\n%s", text, formWait, tm.plain())
		}
	}
}

// send types s.
func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.pty, s); err != nil {
		tm.t.Fatal(err)
	}
}

// focus waits until the field shown as title has the focus: the form
// draws a bar before it.
func (tm *term) focus(title string) {
	tm.t.Helper()
	tm.waitFor("┃ " + title)
}

// typeField types s into the field shown as title, once it has the focus,
// and presses Enter.
func (tm *term) typeField(title, s string) {
	tm.t.Helper()
	tm.focus(title)
	tm.send(s)
	time.Sleep(100 * time.Millisecond)
	tm.send(keyEnter)
}

// exit waits for the CLI to end and returns its exit code.
func (tm *term) exit() int {
	tm.t.Helper()
	ch := make(chan error, 1)
	go func() { ch <- tm.cmd.Wait() }()
	select {
	case err := <-ch:
		<-tm.done
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			tm.t.Fatal(err)
		}
		return 0
	case <-time.After(formWait):
		tm.t.Fatalf("the CLI did not end:\n%s", tm.plain())
		return -1
	}
}

// serverJSON is a server's entry in config.json.
type serverJSON struct {
	Type    string            `json:"type"`
	URL     string            `json:"url"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Headers map[string]string `json:"headers"`
	Trust   string            `json:"trust"`
}

func readServers(t *testing.T, home string) map[string]serverJSON {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]serverJSON `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("config.json: %v\n%s", err, b)
	}
	return cfg.MCPServers
}

// bearerServer serves the test server over Streamable HTTP on 127.0.0.1,
// answering only requests with the bearer token.
func bearerServer(t *testing.T, token string) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testkit.NewServer() }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// TestFormAddStdio: the form adds a command with its environment; the
// values are masked while typed and kept in creds.json.
func TestFormAddStdio(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	exe, _ := os.Executable()
	const s1, s2 = "sek-ret-111aaa", "x2-secret-bbb"
	tm := startTerm(t, home, "add")
	tm.focus("Transport")
	tm.send(keyDown)
	time.Sleep(100 * time.Millisecond)
	tm.send(keyEnter)
	tm.typeField("Command", exe+" demo-server")
	tm.focus("Name")
	tm.waitFor("blank: cli-test") // the suggestion, from the command
	tm.send("local" + keyEnter)
	tm.typeField("Environment variable 1", "API_KEY")
	tm.typeField("Value of API_KEY", s1)
	tm.typeField("Environment variable 2", "OTHER_TOKEN")
	tm.typeField("Value of OTHER_TOKEN", s2)
	tm.typeField("Environment variable 3", "LEVEL")
	tm.typeField("Value of LEVEL", "debug")
	tm.typeField("Environment variable 4", "")
	tm.focus("Save?")
	tm.send(keyEnter) // Save is the default
	if code := tm.exit(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.plain())
	}
	if !strings.Contains(tm.plain(), "OTHER_TOKEN") {
		t.Errorf("the variable's name was not shown as typed:\n%s", tm.plain())
	}
	s := readServers(t, home)["local"]
	if s.Command != exe || len(s.Args) != 1 || s.Args[0] != "demo-server" {
		t.Errorf("command %q %q", s.Command, s.Args)
	}
	// Secrets by config's one rule, named as import names them; the
	// rest as written.
	if s.Env["API_KEY"] != "${cred:API_KEY}" || s.Env["OTHER_TOKEN"] != "${cred:OTHER_TOKEN}" || s.Env["LEVEL"] != "debug" {
		t.Errorf("env %v", s.Env)
	}
	c := credsFile(t, home)
	if c["API_KEY"] != s1 || c["OTHER_TOKEN"] != s2 {
		t.Errorf("creds.json: %v", c)
	}
	for _, secret := range []string{s1, s2} {
		if strings.Contains(tm.raw(), secret) {
			t.Errorf("the terminal showed %q:\n%s", secret, tm.plain())
		}
		noSecret(t, home, secret)
	}
}

// TestFormAddHTTP: a save the server refuses keeps the form open with the
// error and the values; corrected, it saves the token to creds.json.
func TestFormAddHTTP(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	const token, wrong = "tok-right-4242", "tok-wrong-0000"
	url := bearerServer(t, token)
	tm := startTerm(t, home, "add")
	tm.focus("Transport")
	tm.send(keyEnter)
	tm.typeField("URL", url)
	tm.typeField("Name", "web")
	tm.typeField("Bearer token", wrong)
	tm.focus("Header name")
	tm.send(keyEnter)
	tm.focus("Header value")
	tm.send(keyEnter)
	tm.focus("Trust this server?")
	tm.send("y")
	tm.focus("Save?")
	tm.send("y")

	tm.waitFor("Not saved")
	tm.waitFor(`server "web": connect: auth_failure: HTTP 401`) // as it is, no markup
	if _, err := os.Stat(filepath.Join(home, "creds.json")); err == nil {
		t.Error("creds.json written for a failed save")
	}
	if _, err := os.Stat(filepath.Join(home, "config.json")); err == nil {
		t.Error("config.json written for a failed save")
	}
	// The values are kept: Enter goes through them to the token.
	tm.focus("Transport")
	tm.send(keyEnter)
	tm.focus("URL")
	tm.send(keyEnter)
	tm.focus("Name")
	tm.send(keyEnter)
	tm.focus("Bearer token")
	tm.send(keyCtrlU)
	tm.send(token + keyEnter)
	tm.focus("Header name")
	tm.send(keyEnter)
	tm.focus("Header value")
	tm.send(keyEnter)
	tm.focus("Trust this server?")
	tm.send(keyEnter)
	tm.focus("Save?")
	tm.send("y")
	if code := tm.exit(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.plain())
	}
	s := readServers(t, home)["web"]
	if s.URL != url || s.Trust != "trusted" || s.Headers["Authorization"] != "Bearer ${cred:web.bearer.token}" {
		t.Errorf("server %+v", s)
	}
	if c := credsFile(t, home); c["web.bearer.token"] != token {
		t.Errorf("creds.json: %v", c)
	}
	for _, secret := range []string{token, wrong} {
		if strings.Contains(tm.raw(), secret) {
			t.Errorf("the terminal showed %q:\n%s", secret, tm.plain())
		}
		noSecret(t, home, secret)
	}
	get := runHome(t, home, "get", "web", "--json")
	if get.code != 0 || !strings.Contains(get.stdout, `"state": "ready"`) {
		t.Errorf("get: exit %d\n%s%s", get.code, get.stdout, get.stderr)
	}
}

// TestFormCancel: Ctrl-C and Esc leave the form with exit 130 and nothing
// written.
func TestFormCancel(t *testing.T) {
	t.Parallel()
	for _, k := range []struct{ name, key string }{{"ctrl-c", keyCtrlC}, {"esc", keyEsc}} {
		t.Run(k.name, func(t *testing.T) {
			home := t.TempDir()
			tm := startTerm(t, home, "add")
			tm.focus("Transport")
			tm.send(keyEnter)
			tm.typeField("URL", "http://127.0.0.1:1/mcp")
			tm.focus("Name")
			tm.send(k.key)
			if code := tm.exit(); code != 130 {
				t.Errorf("exit %d, want 130:\n%s", code, tm.plain())
			}
			if !strings.Contains(tm.plain(), "nothing was written") {
				t.Errorf("no word of it:\n%s", tm.plain())
			}
			entries, _ := os.ReadDir(home)
			for _, e := range entries {
				if e.Name() == "config.json" || e.Name() == "creds.json" {
					t.Errorf("%s written", e.Name())
				}
			}
		})
	}
}

// TestFormEdit: edit reopens a server; a blank secret keeps the stored
// one, "-" removes it, and a new value replaces it; each save is checked.
func TestFormEdit(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	exe, _ := os.Executable()
	const s1, s2, s3 = "first-secret-aaa", "second-secret-bbb", "third-secret-ccc"
	add := runHome(t, home, "add", "local", "--env", "KEEP_TOKEN="+s1, "--env", "DROP_TOKEN="+s2, "--", exe, "demo-server")
	if add.code != 0 {
		t.Fatalf("add: exit %d\n%s", add.code, add.stderr)
	}

	// Blank keeps both.
	tm := startTerm(t, home, "edit", "local")
	tm.waitFor(`Edit server "local"`)
	tm.focus("Transport")
	tm.send(keyEnter)
	tm.typeField("Command", "") // unchanged
	tm.focus("Environment variable 1")
	tm.waitFor("stored: KEEP_TOKEN, DROP_TOKEN")
	tm.send(keyEnter)
	tm.focus("Save?")
	tm.send("y")
	if code := tm.exit(); code != 0 {
		t.Fatalf("edit: exit %d:\n%s", code, tm.plain())
	}
	s := readServers(t, home)["local"]
	if len(s.Env) != 2 || s.Command != exe {
		t.Errorf("after a blank edit: %+v", s)
	}
	if c := credsFile(t, home); c["KEEP_TOKEN"] != s1 || c["DROP_TOKEN"] != s2 {
		t.Errorf("creds.json after a blank edit: %v", c)
	}

	// "-" removes one; a value replaces the other.
	tm = startTerm(t, home, "edit", "local")
	tm.focus("Transport")
	tm.send(keyEnter)
	tm.typeField("Command", "")
	tm.focus("Environment variable 1")
	tm.waitFor("stored: KEEP_TOKEN, DROP_TOKEN")
	tm.send("DROP_TOKEN" + keyEnter)
	tm.typeField("Value of DROP_TOKEN", "-")
	tm.typeField("Environment variable 2", "KEEP_TOKEN")
	tm.typeField("Value of KEEP_TOKEN", s3)
	tm.typeField("Environment variable 3", "")
	tm.focus("Save?")
	tm.send("y")
	if code := tm.exit(); code != 0 {
		t.Fatalf("edit: exit %d:\n%s", code, tm.plain())
	}
	s = readServers(t, home)["local"]
	if len(s.Env) != 1 || s.Env["KEEP_TOKEN"] != "${cred:KEEP_TOKEN}" {
		t.Errorf("env after an edit: %v", s.Env)
	}
	c := credsFile(t, home)
	if _, ok := c["DROP_TOKEN"]; ok || c["KEEP_TOKEN"] != s3 {
		t.Errorf("creds.json after an edit: %v", c)
	}
	for _, secret := range []string{s1, s2, s3} {
		if strings.Contains(tm.raw(), secret) {
			t.Errorf("the terminal showed %q", secret)
		}
		noSecret(t, home, secret)
	}
}

// TestFormEditBearer: a blank token keeps the stored one and "-" removes
// it; without it the server refuses, and the form says so.
func TestFormEditBearer(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	const token = "tok-edit-5151"
	url := bearerServer(t, token)
	tm := startTerm(t, home, "add")
	tm.focus("Transport")
	tm.send(keyEnter)
	tm.typeField("URL", url)
	tm.typeField("Name", "web")
	tm.typeField("Bearer token", token)
	tm.typeField("Header name", "X-Extra")
	tm.typeField("Header value", "hv-secret-77")
	tm.focus("Trust this server?")
	tm.send("y")
	tm.focus("Save?")
	tm.send("y")
	if code := tm.exit(); code != 0 {
		t.Fatalf("add: exit %d:\n%s", code, tm.plain())
	}

	edit := func(bearer, hdrValue string, wantFail bool) {
		t.Helper()
		tm := startTerm(t, home, "edit", "web")
		tm.focus("Transport")
		tm.send(keyEnter)
		tm.typeField("URL", "")
		tm.focus("Bearer token")
		tm.waitFor(storedHint)
		tm.send(bearer + keyEnter)
		tm.typeField("Header name", "")
		tm.typeField("Header value", hdrValue)
		tm.focus("Trust this server?")
		tm.send(keyEnter)
		tm.focus("Save?")
		tm.send("y")
		if wantFail {
			tm.waitFor("Not saved")
			tm.waitFor(`server "web": connect: auth_failure: HTTP 401`) // as it is, no markup
			tm.send(keyCtrlC)
			if code := tm.exit(); code != 130 {
				t.Errorf("exit %d, want 130", code)
			}
			return
		}
		if code := tm.exit(); code != 0 {
			t.Fatalf("edit: exit %d:\n%s", code, tm.plain())
		}
	}
	edit("", "", false) // both kept
	s := readServers(t, home)["web"]
	if s.Headers["Authorization"] != "Bearer ${cred:web.bearer.token}" || s.Headers["X-Extra"] != "${cred:web.header.X-Extra}" {
		t.Errorf("headers after a blank edit: %v", s.Headers)
	}
	edit("", "-", false) // the header removed
	s = readServers(t, home)["web"]
	if _, ok := s.Headers["X-Extra"]; ok || s.Headers["Authorization"] == "" {
		t.Errorf("headers after removing one: %v", s.Headers)
	}
	if c := credsFile(t, home); c["web.bearer.token"] != token || c["web.header.X-Extra"] != "" {
		t.Errorf("creds.json: %v", c)
	}
	before, _ := os.ReadFile(filepath.Join(home, "config.json"))
	edit("-", "", true) // without its token the server refuses: not saved
	if after, _ := os.ReadFile(filepath.Join(home, "config.json")); !bytes.Equal(before, after) {
		t.Errorf("config.json changed by a failed edit:\n%s", after)
	}
	if c := credsFile(t, home); c["web.bearer.token"] != token {
		t.Errorf("the token went with a failed edit: %v", c)
	}
	noSecret(t, home, token)
}

// storedHint is what the form shows for a stored secret.
const storedHint = "(stored; blank keeps it, - removes it)"

// TestFormNeedsTerminal: without a terminal, add with no arguments and
// edit are usage errors, and nothing is written.
func TestFormNeedsTerminal(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, args := range [][]string{{"add"}, {"edit", "x"}} {
		r := runHome(t, home, args...)
		if r.code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
	if r := runHome(t, home, "edit", "x"); !strings.Contains(r.stderr, "at a terminal") {
		t.Errorf("edit: %s", r.stderr)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("written: %v", entries)
	}
}
