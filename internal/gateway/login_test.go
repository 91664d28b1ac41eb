package gateway_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// TestNeedsLoginThroughTheGateway: a call to a server that needs an OAuth
// login is an isError result with the code needs_login and the command
// to run, never a token-bearing error, and nothing is asked of the
// authorization server.
func TestNeedsLoginThroughTheGateway(t *testing.T) {
	as := oauthtest.Start(t, nil)
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"gh": map[string]any{"url": as.MCP, "trust": "trusted"}}})
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Open(context.Background(), cfg, &host.Options{StopTimeout: 500 * time.Millisecond,
		OAuth: &host.OAuthOptions{TokensPath: filepath.Join(t.TempDir(), "creds.json")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	g := gateway.New(h, nil)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := g.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gh__whoami", Arguments: map[string]any{}})
	if err != nil || !res.IsError {
		t.Fatalf("call: %+v, %v; want an isError result", res, err)
	}
	m, _ := res.Meta[gateway.ErrorMetaKey].(map[string]any)
	if m["code"] != "needs_login" || m["command"] != "switchboard login gh" || m["retryable"] != false {
		t.Errorf("_meta = %v, want needs_login with the command", m)
	}
	if txt := text(t, res); !strings.Contains(txt, "needs login (run: switchboard login gh)") {
		t.Errorf("text = %q", txt)
	}
	if as.Count("authorize")+as.Count("register")+as.Count("token") != 0 {
		t.Error("the gateway started a login nobody can finish")
	}
}
