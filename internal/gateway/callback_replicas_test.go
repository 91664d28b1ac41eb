package gateway_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthhost"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// TestCallerLoginAcrossReplicas: two gateways sharing one store file
// and one public URL, which reaches replica B: alice, a 2025 client of
// replica A, is offered her login by elicitation, her browser comes back
// through B's front door, and her call on A completes as her; the
// operator's login, started on A, came back through B as well.
func TestCallerLoginAcrossReplicas(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, &oauthtest.Options{ExactRedirect: true})
	doc := map[string]any{
		"mcpServers": map[string]any{"gh": map[string]any{"url": as.MCP, "trust": "trusted", "oauth": map[string]any{"perCaller": true}}},
		"clients":    map[string]any{"alice": map[string]any{"tokenEnv": "ALICE_TOKEN"}},
	}
	cfg := parseDoc(t, doc, map[string]string{"ALICE_TOKEN": aliceTok})
	dir := t.TempDir()
	lnA, lnB := listen(t), listen(t)
	callback := "http://" + lnB.Addr().String() + frontdoor.OAuthCallbackPath
	replica := func() (*host.Host, *gateway.Gateway) {
		db, err := sqlite.Open(filepath.Join(dir, "state.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		h, syncs := openHost(t, cfg, *hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond, OAuth: &host.OAuthOptions{TokensPath: filepath.Join(dir, "creds.json"), GrantKey: oauthhost.GrantKey, CallbackURL: callback}}, db))
		g := gateway.New(h, &gateway.Options{Version: "test"})
		syncs(g)
		return h, g
	}
	hA, gA := replica()
	_, gB := replica()
	serveOn(t, gA, lnA, gateway.HTTPOptions{Auth: &gateway.AuthOptions{}})
	serveOn(t, gB, lnB, gateway.HTTPOptions{Auth: &gateway.AuthOptions{}})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := hA.Login(ctx, "gh")
	if err != nil || l.URL() == "" {
		t.Fatalf("the operator's login: %v", err)
	}
	if err := oauthtest.BrowseAs(ctx, l.URL(), "operator"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-ctx.Done():
		t.Fatal("the operator's login, whose redirect reached B, did not end on A")
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	if err := hA.Ready(ctx, "gh"); err != nil {
		t.Fatal(err)
	}
	gA.Sync()

	logins := 0
	alice := connectWith(t, "http://"+lnA.Addr().String()+"/mcp", aliceTok, "2025-11-25", &mcp.ClientOptions{
		Capabilities: urlCaps,
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			logins++
			if got := redirectURI(t, req.Params.URL); got != callback {
				t.Errorf("alice's login redirects to %q; want B's %q", got, callback)
			}
			if err := oauthtest.BrowseAs(ctx, req.Params.URL, "alice-gh"); err != nil {
				t.Error(err)
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	res, err := whoamiFor(ctx, alice, "alice")
	if err != nil || res.IsError || !strings.Contains(text(t, res), "caller ok: alice-gh") || logins != 1 {
		t.Fatalf("alice's call on A through her login on B: %+v, %v (%d logins)", res, err, logins)
	}
}
