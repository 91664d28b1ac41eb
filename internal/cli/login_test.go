package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/creds"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthhost"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// runLoginHome runs the CLI with home as its home and stderr to errw.
func runLoginHome(t *testing.T, home string, errw io.Writer, args ...string) (int, string) {
	t.Helper()
	// No $BROWSER, no display: the URL is printed.
	r := runWith(t, cli.Env{Args: args, Stdin: strings.NewReader(""), Stderr: errw, LookupEnv: homeEnv(home), Version: "1.2.3"})
	return r.code, r.stdout
}

// TestLoginLogout: a server that asks for OAuth is "needs login" until
// `switchboard login` (loopback listener, the URL printed where there is
// no browser, the browser leg driven over HTTP), then "ok" with its tools
// callable, across processes; `logout` forgets the grant. No output,
// --json or not, and no audit row holds a token.
func TestLoginLogout(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	home := t.TempDir()
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{"gh": map[string]any{"url": as.MCP, "trust": "trusted"}}})
	var all bytes.Buffer // every output, to look for tokens
	runAll := func(args ...string) (int, string, string) {
		t.Helper()
		var errb bytes.Buffer
		code, out := runLoginHome(t, home, &errb, append(args, "--config", cfg)...)
		all.WriteString(out + errb.String())
		return code, out, errb.String()
	}

	_, out, _ := runAll("servers")
	if !strings.Contains(out, "gh: auth: needs login (run: switchboard login gh)") {
		t.Fatalf("servers before login:\n%s", out)
	}
	code, _, errs := runAll("call", "gh__whoami")
	if code == 0 || !strings.Contains(errs, "switchboard login gh") {
		t.Fatalf("call before login: exit %d, stderr:\n%s", code, errs)
	}

	// login: read the URL it prints, and be the browser.
	r, loginErr, browsed := loginBrowsing(t, home, cfg, as)
	all.WriteString(r.out + loginErr)
	if r.code != 0 || !browsed || !strings.Contains(r.out, `logged in to "gh"`) {
		t.Fatalf("login: exit %d, browsed %v, stdout %q, stderr:\n%s", r.code, browsed, r.out, loginErr)
	}
	fi, err := os.Stat(filepath.Join(home, "creds.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("creds.json: %v, %v", fi, err)
	}

	code, out, errs = runAll("call", "gh__whoami")
	if code != 0 || !strings.Contains(out, "caller ok") {
		t.Fatalf("call after login: exit %d, %s%s", code, out, errs)
	}
	_, out, _ = runAll("servers", "--json")
	var servers []struct{ Name, Auth string }
	if err := json.Unmarshal([]byte(out), &servers); err != nil || len(servers) != 1 || servers[0].Auth != "ok" {
		t.Fatalf("servers --json after login: %v\n%s", err, out)
	}
	_, out, _ = runAll("get", "gh")
	if !strings.Contains(out, "auth:") || !strings.Contains(out, " ok\n") {
		t.Fatalf("get after login:\n%s", out)
	}
	runAll("get", "gh", "--json")
	runAll("log", "--json")

	code, out, _ = runAll("logout", "gh")
	if code != 0 || !strings.Contains(out, `logged out of "gh": 1 grant(s) forgotten`) {
		t.Fatalf("logout: exit %d, %s", code, out)
	}
	code, _, errs = runAll("call", "gh__whoami")
	if code == 0 || !strings.Contains(errs, "needs login (run: switchboard login gh)") {
		t.Fatalf("call after logout: exit %d, stderr:\n%s", code, errs)
	}

	if len(as.Issued()) == 0 {
		t.Fatal("no token was issued")
	}
	for _, tok := range as.Issued() {
		if strings.Contains(all.String(), tok) {
			t.Fatalf("a token is in the output:\n%s", all.String())
		}
	}
}

// TestLoginRefusesOtherServers: login and logout need a Streamable HTTP
// server that exists.
func TestLoginRefusesOtherServers(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{"local": map[string]any{"command": "true"}}})
	home := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"login", "local"}, "only Streamable HTTP servers log in with OAuth"},
		{[]string{"logout", "nope"}, `no server "nope"`},
		{[]string{"login"}, "usage"},
	} {
		var errb bytes.Buffer
		code, _ := runLoginHome(t, home, &errb, append(tt.args, "--config", cfg)...)
		if code != 2 || !strings.Contains(strings.ToLower(errb.String()), strings.ToLower(tt.want)) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
}

// TestAddNeedsLogin: adding a server that answers and asks for a login
// saves it and says to log in; the login that follows makes it work.
func TestAddNeedsLogin(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	home := t.TempDir()
	r := runHome(t, home, "add", "gh", as.MCP, "--trust")
	if r.code != 0 || !strings.Contains(r.stderr, "asks for a login: run 'switchboard login gh'") {
		t.Fatalf("add: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if as.Count("authorize") != 0 || as.Count("register") != 0 {
		t.Fatal("add started a login")
	}
	r = runHome(t, home, "servers")
	if !strings.Contains(r.stdout, "gh: auth: needs login (run: switchboard login gh)") {
		t.Fatalf("servers after add:\n%s%s", r.stdout, r.stderr)
	}
}

type loginRun struct {
	code int
	out  string
}

// loginBrowsing runs `switchboard login gh`, reads the URL it prints and
// follows it as a browser would; it returns the run, its stderr and
// whether the URL was followed.
func loginBrowsing(t *testing.T, home, cfg string, as *oauthtest.Server) (loginRun, string, bool) {
	t.Helper()
	return loginWith(t, home, cfg, as, func(url string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return oauthtest.Browse(ctx, url)
	})
}

// TestGatewayTakesLoginFromCLI: a running gateway whose server needs a
// login takes the grant that `switchboard login`, run against the same
// home by itself, keeps in creds.json, without a restart: a server whose
// dial failed is dialled again by the next call, and a live connection
// whose grant was revoked takes the new one on its next refusal.
func TestGatewayTakesLoginFromCLI(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	as := oauthtest.Start(t, &oauthtest.Options{NoRefresh: true})
	rig := oauthhost.Open(t, as.MCP, &oauthhost.Options{Creds: filepath.Join(home, "creds.json")})
	h := rig.Host
	cfgPath := writeConfig(t, rig.Doc)
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ss, err := gateway.New(h, nil).Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(want string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gh__whoami", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		var txt strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				txt.WriteString(tc.Text)
			}
		}
		if !strings.Contains(txt.String(), want) {
			t.Fatalf("call: %q, want %q", txt.String(), want)
		}
	}
	call("switchboard login gh")
	for i := range 2 {
		if r, errs, browsed := loginBrowsing(t, home, cfgPath, as); r.code != 0 || !browsed {
			t.Fatalf("login %d: exit %d, browsed %v, stderr:\n%s", i, r.code, browsed, errs)
		}
		call("caller ok")
		if i == 0 {
			as.RevokeAll()
			call("switchboard login gh")
		}
	}
}

// TestRemoveForgetsGrants: removing an HTTP server forgets its OAuth
// grants too, so no token outlives the server it was for.
func TestRemoveForgetsGrants(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	home := t.TempDir()
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{"gh": map[string]any{"url": as.MCP, "trust": "trusted"}}})
	r, loginErr, browsed := loginBrowsing(t, home, cfg, as)
	if r.code != 0 || !browsed {
		t.Fatalf("login: exit %d, browsed %v, stderr:\n%s", r.code, browsed, loginErr)
	}
	path := filepath.Join(home, "creds.json")
	if ts, err := creds.LoadTokens(path, as.MCP); err != nil || len(ts) != 1 {
		t.Fatalf("after login: %d grants, %v", len(ts), err)
	}
	var errb bytes.Buffer
	if code, out := runLoginHome(t, home, &errb, "remove", "gh", "--config", cfg); code != 0 {
		t.Fatalf("remove: exit %d, %s%s", code, out, errb.String())
	}
	if ts, err := creds.LoadTokens(path, as.MCP); err != nil || len(ts) != 0 {
		t.Fatalf("after remove: %d grants, %v; want none", len(ts), err)
	}
}

// TestLoginManualApproval: login checks a server under manual approval
// like any other (its host keeps no state and serves no tool), rather
// than refusing the approval it could not honour.
func TestLoginManualApproval(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	home := t.TempDir()
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{"gh": map[string]any{"url": as.MCP, "trust": "trusted", "approval": "manual"}}})
	r, loginErr, browsed := loginBrowsing(t, home, cfg, as)
	if r.code != 0 || !browsed || !strings.Contains(r.out, `logged in to "gh"`) {
		t.Fatalf("login: exit %d, browsed %v, stdout %q, stderr:\n%s", r.code, browsed, r.out, loginErr)
	}
}
