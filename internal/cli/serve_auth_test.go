package cli_test

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/issuer"
)

// TestServeAuthFlags: the --oauth-* and --profile flags that contradict
// each other or name nothing are refused before anything listens; an
// issuer whose metadata is served starts.
func TestServeAuthFlags(t *testing.T) {
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
