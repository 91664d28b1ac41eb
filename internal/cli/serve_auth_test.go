package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/issuer"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestServeAuthFlags: the --oauth-* and --profile flags that contradict
// each other or name nothing are refused before anything listens; an
// issuer whose metadata is served starts.
func TestServeAuthFlags(t *testing.T) {
	t.Parallel()
	is := issuer.New(t)
	exe, _ := os.Executable()
	cfg := writeConfig(t, map[string]any{
		"mcpServers": map[string]any{"demo": map[string]any{"command": exe, "args": []string{"demo-server"}}},
		"profiles":   map[string]any{"math": map[string]any{"tools": []string{"demo:add"}}},
	})
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"issuer without audience", []string{"--http", "127.0.0.1:0", "--oauth-issuer", is.URL}, 2, "--oauth-issuer and --oauth-audience go together"},
		{"scopes alone", []string{"--http", "127.0.0.1:0", "--oauth-scopes", "a"}, 2, "--oauth-issuer and --oauth-audience go together"},
		{"oauth with stdio", []string{"--stdio", "--oauth-issuer", is.URL, "--oauth-audience", "x"}, 2, "--stdio has no bearer tokens"},
		{"oauth with no-auth", []string{"--http", "127.0.0.1:0", "--no-auth", "--oauth-issuer", is.URL, "--oauth-audience", "x"}, 2, "contradict"},
		{"profile over http", []string{"--http", "127.0.0.1:0", "--profile", "math"}, 2, "--profile is for --stdio"},
		{"unknown profile", []string{"--stdio", "--profile", "nope"}, 2, "no such profile"},
		{"issuer without metadata", []string{"--http", "127.0.0.1:0", "--oauth-issuer", is.URL + "/tenant", "--oauth-audience", "x"}, 2, "metadata"},
		{"issuer with metadata", []string{"--http", "127.0.0.1:0", "--oauth-issuer", is.URL, "--oauth-audience", "http://127.0.0.1/mcp"}, 0, "endpoint: http://127.0.0.1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := serve(t, nil, append(tt.args, "--config", cfg)...)
			if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("serve %q: exit %d, want %d and %q in:\n%s", tt.args, r.code, tt.wantCode, tt.want, r.stderr)
			}
		})
	}
}

// TestServeNamedClients: `serve --http` with clients and profiles in the
// configuration and an issuer: a JWT client mapped to a profile sees its
// tools at /mcp/<profile>, the static token still reaches everything, and
// `log` shows each call's caller and profile.
func TestServeNamedClients(t *testing.T) {
	t.Parallel()
	is := issuer.New(t)
	exe, _ := os.Executable()
	const aud = "http://127.0.0.1/switchboard"
	cfg := writeConfig(t, map[string]any{
		"mcpServers": map[string]any{"demo": map[string]any{"command": exe, "args": []string{"demo-server"}}},
		"profiles":   map[string]any{"math": map[string]any{"tools": []string{"demo:add"}}},
		"clients":    map[string]any{"calc": map[string]any{"subject": "calc-bot", "profiles": []string{"math"}}},
	})
	home := t.TempDir()
	g := startServe(t, map[string]string{"SWITCHBOARD_HOME": home}, "--config", cfg, "--oauth-issuer", is.URL, "--oauth-audience", aud, "--oauth-scopes", "mcp")
	tok := is.Mint(t, issuer.Token{Subject: "calc-bot", Audience: []string{aud}, Scope: "mcp"})
	c := mcp.NewClient(&mcp.Implementation{Name: "calc", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.url + "/math",
		HTTPClient: &http.Client{Transport: bearerRT{tok}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, g.stderr.String())
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"demo__add"}) {
		t.Fatalf("calc sees %v, want [demo__add]", names)
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "demo__add", Arguments: map[string]any{"a": 1, "b": 2}}); err != nil || res.IsError {
		t.Fatalf("add: %v %+v", err, res)
	}
	whole := connect(t, g, &headerTransport{})
	if res, err := whole.CallTool(context.Background(), &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "hi"}}); err != nil || res.IsError {
		t.Fatalf("echo with the static token: %v %+v", err, res)
	}
	g.stop()
	r := run(t, "log", "--home", home, "--client", "calc")
	if r.code != 0 || !strings.Contains(r.stdout, "demo:add") || !strings.Contains(r.stdout, "math") || strings.Contains(r.stdout, "demo:echo") {
		t.Fatalf("log --client calc: exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

type bearerRT struct{ tok string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// oauthSection is a configuration's "gateway": {"oauth": ...}.
func oauthSection(o map[string]any) map[string]any { return map[string]any{"oauth": o} }

// TestServeAuthConfig: the configuration's gateway.oauth is checked like
// the flags: a bad section fails serve with exit 2 and its JSON path;
// --no-auth contradicts it; an issuer without metadata is refused, naming
// the section; a flag given takes the place of the section's field; and
// --stdio, which has no bearer tokens, does not read it.
func TestServeAuthConfig(t *testing.T) {
	t.Parallel()
	is := issuer.New(t)
	exe, _ := os.Executable()
	demo := map[string]any{"demo": map[string]any{"command": exe, "args": []string{"demo-server"}}}
	tests := []struct {
		name     string
		gateway  map[string]any
		args     []string
		wantCode int
		want     []string
	}{
		{"issuer without audience", oauthSection(map[string]any{"issuer": is.URL}), nil, 2,
			[]string{`$.gateway.oauth: "issuer" and "audience" go together`}},
		{"unknown key", oauthSection(map[string]any{"issuer": is.URL, "audience": "x", "scope": "mcp"}), nil, 2,
			[]string{`$.gateway.oauth.scope: unknown field "scope" (did you mean "scopes"?)`}},
		{"wrong type", oauthSection(map[string]any{"issuer": is.URL, "audience": "x", "scopes": "mcp"}), nil, 2,
			[]string{`$.gateway.oauth.scopes: want array of strings, got string`}},
		{"http issuer off loopback", oauthSection(map[string]any{"issuer": "http://auth.example", "audience": "x"}), nil, 2,
			[]string{`$.gateway.oauth.issuer: http is allowed only on a loopback host`}},
		{"no-auth contradicts", oauthSection(map[string]any{"issuer": is.URL, "audience": "x"}), []string{"--no-auth"}, 2,
			[]string{"--no-auth and the configuration's gateway.oauth in ", "contradict"}},
		{"issuer without metadata", oauthSection(map[string]any{"issuer": is.URL + "/tenant", "audience": "x"}), nil, 2,
			[]string{"serve: gateway.oauth in ", "metadata"}},
		{"the flag's issuer in place of the file's", oauthSection(map[string]any{"issuer": is.URL + "/tenant", "audience": "http://127.0.0.1/mcp"}),
			[]string{"--oauth-issuer", is.URL}, 0, []string{"endpoint: http://127.0.0.1:"}},
		{"a flag's issuer without metadata", oauthSection(map[string]any{"issuer": is.URL, "audience": "x"}),
			[]string{"--oauth-issuer", is.URL + "/tenant"}, 2, []string{"serve: --oauth-* with gateway.oauth in ", "metadata"}},
		{"audience by flag, issuer from the file", oauthSection(map[string]any{"issuer": is.URL, "audience": "x"}),
			[]string{"--oauth-audience", "http://127.0.0.1/mcp"}, 0, []string{"endpoint: http://127.0.0.1:"}},
		{"from the file alone", oauthSection(map[string]any{"issuer": is.URL, "audience": "http://127.0.0.1/mcp", "scopes": []string{"mcp"}}), nil, 0,
			[]string{"endpoint: http://127.0.0.1:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := writeConfig(t, map[string]any{"mcpServers": demo, "gateway": tt.gateway})
			r := serve(t, nil, append([]string{"--http", "127.0.0.1:0", "--config", cfg}, tt.args...)...)
			ok := r.code == tt.wantCode
			for _, w := range tt.want {
				ok = ok && strings.Contains(r.stderr, w)
			}
			if !ok {
				t.Errorf("serve %q: exit %d, want %d and %q in:\n%s", tt.args, r.code, tt.wantCode, tt.want, r.stderr)
			}
		})
	}
	t.Run("stdio does not read it", func(t *testing.T) {
		// A real subprocess: go-sdk's stdio transport closes os.Stdin.
		cfg := writeConfig(t, map[string]any{"mcpServers": demo,
			"gateway": oauthSection(map[string]any{"issuer": is.URL + "/tenant", "audience": "x"})})
		cmd := exec.Command(exe, "serve", "--stdio", "--config", cfg, "--home", t.TempDir())
		cmd.Env = append(os.Environ(), "SWITCHBOARD_CLI_RUN=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("serve --stdio: %v\n%s", err, stderr.String())
		}
		defer cs.Close()
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatalf("serve --stdio: tools/list: %v\n%s", err, stderr.String())
		}
	})
}

// status POSTs an initialize request to the gateway's endpoint with tok
// as the bearer token and returns the HTTP status.
func status(t *testing.T, g *gatewayRun, tok string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, g.url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// jwtSession connects to the gateway with tok and lists its tools.
func jwtSession(t *testing.T, g *gatewayRun, tok string) {
	t.Helper()
	cs := connect(t, g, bearerRT{tok})
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("tools/list with a JWT: %v\n%s", err, g.stderr.String())
	}
}

// TestServeOAuthFromConfig: a gateway whose resource-server settings are
// in the configuration alone accepts a JWT of the issuer for its audience
// with its scope, refuses one for another audience (401) and one without
// the scope (403); a flag given takes the place of the file's value.
func TestServeOAuthFromConfig(t *testing.T) {
	t.Parallel()
	is := issuer.New(t)
	exe, _ := os.Executable()
	const aud, other = "http://127.0.0.1/switchboard", "http://127.0.0.1/elsewhere"
	cfg := writeConfig(t, map[string]any{
		"mcpServers": map[string]any{"demo": map[string]any{"command": exe, "args": []string{"demo-server"}}},
		"gateway":    oauthSection(map[string]any{"issuer": is.URL, "audience": aud, "scopes": []string{"mcp"}}),
	})
	good := is.Mint(t, issuer.Token{Audience: []string{aud}, Scope: "mcp"})
	wrongAud := is.Mint(t, issuer.Token{Audience: []string{other}, Scope: "mcp"})
	noScope := is.Mint(t, issuer.Token{Audience: []string{aud}, Scope: "read"})

	t.Run("file alone", func(t *testing.T) {
		t.Parallel()
		g := startServe(t, nil, "--config", cfg)
		jwtSession(t, g, good)
		if c := status(t, g, wrongAud); c != http.StatusUnauthorized {
			t.Errorf("wrong audience: %d, want 401", c)
		}
		if c := status(t, g, noScope); c != http.StatusForbidden {
			t.Errorf("missing scope: %d, want 403", c)
		}
	})
	t.Run("the flag's audience", func(t *testing.T) {
		t.Parallel()
		g := startServe(t, nil, "--config", cfg, "--oauth-audience", other)
		jwtSession(t, g, wrongAud)
		if c := status(t, g, good); c != http.StatusUnauthorized {
			t.Errorf("the file's audience with the flag's in force: %d, want 401", c)
		}
	})
	t.Run("the flag's scopes", func(t *testing.T) {
		t.Parallel()
		g := startServe(t, nil, "--config", cfg, "--oauth-scopes", "read")
		jwtSession(t, g, noScope)
		if c := status(t, g, good); c != http.StatusForbidden {
			t.Errorf("the file's scope with the flag's in force: %d, want 403", c)
		}
	})
	// Most identity providers send access tokens typed "JWT", or untyped.
	keycloak := is.Mint(t, issuer.Token{Audience: []string{aud}, Type: "JWT", Scope: "openid mcp", Extra: map[string]any{"typ": "Bearer", "nonce": "n"}})
	okta := is.Mint(t, issuer.Token{Audience: []string{aud}, NoType: true, Extra: map[string]any{"scp": []string{"mcp"}}})
	idToken := is.Mint(t, issuer.Token{Audience: []string{aud}, Type: "JWT", Scope: "mcp", Extra: map[string]any{"typ": "ID", "at_hash": "h"}})
	t.Run("identity providers' tokens", func(t *testing.T) {
		t.Parallel()
		g := startServe(t, nil, "--config", cfg)
		jwtSession(t, g, keycloak)
		jwtSession(t, g, okta)
		if c := status(t, g, idToken); c != http.StatusUnauthorized {
			t.Errorf("an ID token: %d, want 401", c)
		}
	})
	t.Run("at+jwt required", func(t *testing.T) {
		t.Parallel()
		g := startServe(t, nil, "--config", cfg, "--oauth-require-at-jwt")
		jwtSession(t, g, good)
		for name, tok := range map[string]string{"typ JWT": keycloak, "no typ": okta} {
			if c := status(t, g, tok); c != http.StatusUnauthorized {
				t.Errorf("%s with at+jwt required: %d, want 401", name, c)
			}
		}
	})
}

// TestServeOAuthReload: a reload that changes gateway.oauth keeps the
// settings serve started with, and says so; a reload that leaves them
// alone says nothing of them.
func TestServeOAuthReload(t *testing.T) {
	t.Parallel()
	is := issuer.New(t)
	exe, _ := os.Executable()
	const aud, other = "http://127.0.0.1/switchboard", "http://127.0.0.1/elsewhere"
	demo := map[string]any{"command": exe, "args": []string{"demo-server"}}
	path := writeConfig(t, map[string]any{
		"mcpServers": map[string]any{"demo": demo},
		"gateway":    oauthSection(map[string]any{"issuer": is.URL, "audience": aud}),
	})
	write := func(v map[string]any) {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	g := startServe(t, nil, "--config", path, "--watch")
	good := is.Mint(t, issuer.Token{Audience: []string{aud}})
	moved := is.Mint(t, issuer.Token{Audience: []string{other}})
	reloads := func(n int) bool {
		return proc.Eventually(15*time.Second, func() bool { return strings.Count(g.stderr.String(), "configuration reloaded") >= n })
	}
	// Same settings, one more server: no warning.
	write(map[string]any{"mcpServers": map[string]any{"demo": demo, "demo2": demo},
		"gateway": oauthSection(map[string]any{"issuer": is.URL, "audience": aud})})
	if !reloads(1) {
		t.Fatalf("no reload:\n%s", g.stderr.String())
	}
	if strings.Contains(g.stderr.String(), `"gateway.oauth"`) {
		t.Fatalf("warned of an unchanged gateway.oauth:\n%s", g.stderr.String())
	}
	write(map[string]any{"mcpServers": map[string]any{"demo": demo},
		"gateway": oauthSection(map[string]any{"issuer": is.URL, "audience": other, "scopes": []string{"mcp"}})})
	if !reloads(2) {
		t.Fatalf("no second reload:\n%s", g.stderr.String())
	}
	if !strings.Contains(g.stderr.String(), `warning: the "gateway.oauth" setting changed; the gateway goes on accepting the JWTs it accepted until the next start`) {
		t.Errorf("no warning of the changed gateway.oauth:\n%s", g.stderr.String())
	}
	jwtSession(t, g, good)
	if c := status(t, g, moved); c != http.StatusUnauthorized {
		t.Errorf("a JWT for the reloaded audience: %d, want 401 (the running settings stay)", c)
	}
}
