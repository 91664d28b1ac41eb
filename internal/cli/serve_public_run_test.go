package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthhost"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestServePublicURLCallback: serve with --public-url answers the
// callback path without a token, refusing a redirect no login awaits;
// without it the path is 404.
func TestServePublicURLCallback(t *testing.T) {
	t.Parallel()
	empty := writeConfig(t, map[string]any{"mcpServers": map[string]any{}})
	get := func(base string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + "/oauth/callback?state=forged&code=forged-code")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	g := startServe(t, nil, "--config", empty, "--public-url", "http://127.0.0.1:8939")
	if code, page := get(g.base); code != http.StatusBadRequest || page != "not the redirect of this login\n" {
		t.Fatalf("with --public-url: %d %q; want 400", code, page)
	}
	if strings.Contains(g.stderr.String(), "forged-code") {
		t.Fatalf("the code was logged:\n%s", g.stderr.String())
	}
	plain := startServe(t, nil, "--config", empty)
	if code, _ := get(plain.base); code != http.StatusNotFound {
		t.Fatalf("without --public-url: %d; want 404", code)
	}
}

// TestServePublicURLFromConfig: the configuration's "gateway.publicUrl"
// sets where logins come back, as --public-url does: a caller's login
// handed to its client registers URL/oauth/callback as its redirect URI,
// and the callback path is served; --public-url takes the field's place.
func TestServePublicURLFromConfig(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	home := t.TempDir()
	const aliceTok = "alice-token-0123456789abcdef0123456789"
	cfg := writeConfig(t, map[string]any{
		"mcpServers": map[string]any{"gh": map[string]any{"url": as.MCP, "trust": "trusted", "oauth": map[string]any{"perCaller": true}}},
		"clients":    map[string]any{"alice": map[string]any{"tokenEnv": "ALICE_TOKEN"}},
		"gateway":    map[string]any{"publicUrl": "http://127.0.0.1:8939/sb/"},
	})
	// The operator's grant discovers gh's tools.
	if r, errs, browsed := loginBrowsing(t, home, cfg, as); r.code != 0 || !browsed {
		t.Fatalf("login: exit %d, browsed %v, stderr:\n%s", r.code, browsed, errs)
	}
	env := map[string]string{"SWITCHBOARD_HOME": home, "SWITCHBOARD_GRANT_KEY": oauthhost.GrantKey, "ALICE_TOKEN": aliceTok}
	loginURL := func(args ...string) string {
		t.Helper()
		g := startGateway(t, env, "", append([]string{"--config", cfg}, args...)...)
		defer g.stop()
		if code, page := getCallback(t, g.base); code != http.StatusBadRequest || page != "not the redirect of this login\n" {
			t.Fatalf("the callback path: %d %q; want 400", code, page)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var offered string
		cs := connectWith(t, g, headerRT{"Authorization", "Bearer " + aliceTok}, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
			ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				offered = req.Params.URL
				return &mcp.ElicitResult{Action: "decline"}, nil
			},
		})
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gh__whoami", Arguments: map[string]any{}})
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) && rpc.Code == mcp.CodeURLElicitationRequired {
			var data struct{ Elicitations []*mcp.ElicitParams }
			if err := json.Unmarshal(rpc.Data, &data); err != nil || len(data.Elicitations) != 1 {
				t.Fatalf("error data %s: %v", rpc.Data, err)
			}
			offered = data.Elicitations[0].URL
		}
		if offered == "" {
			t.Fatalf("alice was offered no login: %v\n%s", err, g.stderr.String())
		}
		u, err := url.Parse(offered)
		if err != nil {
			t.Fatal(err)
		}
		return u.Query().Get("redirect_uri")
	}
	if got, want := loginURL(), "http://127.0.0.1:8939/sb/oauth/callback"; got != want {
		t.Errorf("with gateway.publicUrl, alice's login redirects to %q; want %q", got, want)
	}
	if got, want := loginURL("--public-url", "http://localhost:9000"), "http://localhost:9000/oauth/callback"; got != want {
		t.Errorf("with --public-url over gateway.publicUrl, alice's login redirects to %q; want %q", got, want)
	}
}

// getCallback asks base's callback path with a redirect no login awaits.
func getCallback(t *testing.T, base string) (int, string) {
	t.Helper()
	resp, err := http.Get(base + "/oauth/callback?state=forged&code=forged-code")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServePublicURLReload: a reload that changes gateway.publicUrl keeps
// the URL serve started with, and says so; one that leaves it alone says
// nothing of it, nor does one under --public-url, which the field does
// not set.
func TestServePublicURLReload(t *testing.T) {
	t.Parallel()
	for _, flag := range []bool{false, true} {
		path := writeConfig(t, map[string]any{"mcpServers": map[string]any{}, "gateway": map[string]any{"publicUrl": "http://127.0.0.1:8939"}})
		write := func(v map[string]any) {
			b, _ := json.Marshal(v)
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		args := []string{"--config", path, "--watch"}
		if flag {
			args = append(args, "--public-url", "http://localhost:9000")
		}
		g := startServe(t, nil, args...)
		reloads := func(n int) bool {
			return proc.Eventually(15*time.Second, func() bool { return strings.Count(g.stderr.String(), "configuration reloaded") >= n })
		}
		const warning = `warning: the "gateway.publicUrl" setting changed; logins come back to the URL they came back to until the next start`
		write(map[string]any{"mcpServers": map[string]any{}, "gateway": map[string]any{"publicUrl": "http://127.0.0.1:8939"}, "policy": map[string]any{}})
		if !reloads(1) {
			t.Fatalf("no reload:\n%s", g.stderr.String())
		}
		if strings.Contains(g.stderr.String(), warning) {
			t.Fatalf("warned of an unchanged gateway.publicUrl:\n%s", g.stderr.String())
		}
		write(map[string]any{"mcpServers": map[string]any{}, "gateway": map[string]any{"publicUrl": "https://gw.example.com"}})
		if !reloads(2) {
			t.Fatalf("no second reload:\n%s", g.stderr.String())
		}
		if got := strings.Contains(g.stderr.String(), warning); got == flag {
			t.Errorf("with --public-url %v: warned of the changed gateway.publicUrl: %v; want %v\n%s", flag, got, !flag, g.stderr.String())
		}
		if code, _ := getCallback(t, g.base); code != http.StatusBadRequest {
			t.Errorf("the callback path after the reload: %d; want 400 (still served)", code)
		}
		g.stop()
	}
}
