package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthhost"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// TestConnectEveryAccount: mcp_accounts lists the servers that act as the
// caller with the state of its account on each, and with connect set
// walks it through every login it lacks, one after another: a 2025
// client is offered each login in turn within the one call, which then
// answers every account connected; a 2026-07-28 client gets -32042 for
// each in turn and calls again.
func TestConnectEveryAccount(t *testing.T) {
	t.Parallel()
	ass := map[string]*oauthtest.Server{"alpha": oauthtest.Start(t, nil), "beta": oauthtest.Start(t, nil)}
	servers := map[string]any{}
	for name, as := range ass {
		servers[name] = map[string]any{"url": as.MCP, "trust": "trusted", "oauth": map[string]any{"perCaller": true}}
	}
	doc := map[string]any{"mcpServers": servers, "clients": map[string]any{
		"alice": map[string]any{"tokenEnv": "ALICE_TOKEN"}, "bob": map[string]any{"tokenEnv": "BOB_TOKEN"}}}
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, syncs := openHost(t, parseDoc(t, doc, map[string]string{"ALICE_TOKEN": aliceTok, "BOB_TOKEN": bobTok}),
		*hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond, OAuth: &host.OAuthOptions{TokensPath: filepath.Join(t.TempDir(), "creds.json"), GrantKey: oauthhost.GrantKey}}, db))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for name := range ass {
		l, err := h.Login(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := oauthtest.BrowseAs(ctx, l.URL(), "operator"); err != nil {
			t.Fatal(err)
		}
		<-l.Done()
		if err := h.Ready(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	g := gateway.New(h, &gateway.Options{Version: "test"})
	syncs(g)
	g.Sync()
	endpoint := serveHTTP(t, g, gateway.HTTPOptions{Auth: &gateway.AuthOptions{}}) + "/mcp"
	accounts := func(cs *mcp.ClientSession, connect bool) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: host.AccountsTool, Arguments: map[string]any{"connect": connect}})
	}
	serverOf := func(url string) string {
		for name, as := range ass {
			if strings.HasPrefix(url, as.Issuer) {
				return name
			}
		}
		return ""
	}

	// alice, a 2025 client: one call, a login page per server.
	var pages []string
	alice := connectWith(t, endpoint, aliceTok, "2025-11-25", &mcp.ClientOptions{
		Capabilities: urlCaps,
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			pages = append(pages, serverOf(req.Params.URL))
			if err := oauthtest.BrowseAs(ctx, req.Params.URL, "alice-"+serverOf(req.Params.URL)); err != nil {
				t.Error(err)
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	res, err := accounts(alice, false)
	if err != nil || res.IsError || text(t, res) != "alpha: not connected\nbeta: not connected\n" {
		t.Fatalf("alice's accounts before: %+v, %v", res, err)
	}
	res, err = accounts(alice, true)
	if err != nil || res.IsError {
		t.Fatalf("alice connecting: %+v, %v", res, err)
	}
	if got, want := text(t, res), "alpha: connected as alice-alpha\nbeta: connected as alice-beta\n"; got != want || strings.Join(pages, ",") != "alpha,beta" {
		t.Fatalf("alice after connecting: %q after pages %v; want %q", got, pages, want)
	}

	// bob, a 2026-07-28 client: -32042 for each, then the answer.
	bob := connectWith(t, endpoint, bobTok, "", &mcp.ClientOptions{Capabilities: urlCaps})
	var asked []string
	for {
		res, err = accounts(bob, true)
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != mcp.CodeURLElicitationRequired {
			break
		}
		var data struct{ Elicitations []*mcp.ElicitParams }
		if err := json.Unmarshal(rpc.Data, &data); err != nil || len(data.Elicitations) != 1 || len(asked) > 2 {
			t.Fatalf("bob's -32042 %s: %v after %v", rpc.Data, err, asked)
		}
		u := data.Elicitations[0].URL
		asked = append(asked, serverOf(u))
		if err := oauthtest.BrowseAs(ctx, u, "bob-"+serverOf(u)); err != nil {
			t.Fatal(err)
		}
	}
	if err != nil || res.IsError || text(t, res) != "alpha: connected as bob-alpha\nbeta: connected as bob-beta\n" || strings.Join(asked, ",") != "alpha,beta" {
		t.Fatalf("bob after connecting: %+v, %v after %v", res, err, asked)
	}
}
