package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// perCallerGateway serves, over HTTP, a gateway whose one server, gh
// (an oauthtest server), has "oauth.perCaller", to the named clients
// alice and bob; the operator has logged in to gh as "operator".
func perCallerGateway(t *testing.T, onCall func(host.CallRecord)) (*oauthtest.Server, *host.Host, string) {
	t.Helper()
	as := oauthtest.Start(t, nil)
	doc := map[string]any{
		"mcpServers": map[string]any{"gh": map[string]any{"url": as.MCP, "trust": "trusted", "oauth": map[string]any{"perCaller": true}}},
		"clients": map[string]any{
			"alice": map[string]any{"tokenEnv": "ALICE_TOKEN"},
			"bob":   map[string]any{"tokenEnv": "BOB_TOKEN"},
		},
	}
	cfg := parseDoc(t, doc, map[string]string{"ALICE_TOKEN": aliceTok, "BOB_TOKEN": bobTok})
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, syncs := openHost(t, cfg, *hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond, OnCall: onCall, OAuth: &host.OAuthOptions{TokensPath: filepath.Join(t.TempDir(), "creds.json"), GrantKey: oauthhost.GrantKey}}, db))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := h.Login(ctx, "gh")
	if err != nil || l.URL() == "" {
		t.Fatalf("the operator's login: %v", err)
	}
	if err := oauthtest.BrowseAs(ctx, l.URL(), "operator"); err != nil {
		t.Fatal(err)
	}
	<-l.Done()
	if err := h.Ready(ctx, "gh"); err != nil {
		t.Fatal(err)
	}
	g := gateway.New(h, &gateway.Options{Version: "test"})
	syncs(g)
	g.Sync()
	base := serveHTTP(t, g, gateway.HTTPOptions{Auth: &gateway.AuthOptions{}})
	return as, h, base + "/mcp"
}

const aliceTok, bobTok = "alice-token-0123456789abcdef", "bob-token-0123456789abcdefgh"

// connectWith connects a go-sdk client with tok, version ("" the modern
// one) and opts.
func connectWith(t *testing.T, endpoint, tok, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: withToken{tok}}}
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(context.Background(), tr, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func whoamiFor(ctx context.Context, cs *mcp.ClientSession, forWhom string) (*mcp.CallToolResult, error) {
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: "gh__whoami", Arguments: map[string]any{"for": forWhom}})
}

// TestPerCallerLoginBothEras: on a server with "oauth.perCaller", each
// named client logs in as itself from its own client: alice, a 2025
// client, is sent elicitation/create in url mode and her call completes
// once she has logged in; bob, a 2026-07-28 client, gets -32042 with his
// own login URL and calls again. Each is then seen upstream as itself,
// calling at once, and no request made for one carries the other's
// token; a client without URL elicitation gets needs_login naming its own
// login, not the operator's command; the audit records say as whom the
// upstream saw each call.
func TestPerCallerLoginBothEras(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	as2 := map[string]string{}
	as, _, endpoint := perCallerGateway(t, func(r host.CallRecord) {
		if r.Outcome == host.OutcomeOK {
			mu.Lock()
			as2[r.Client] = r.As
			mu.Unlock()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	plain := connectWith(t, endpoint, aliceTok, "2025-11-25", nil)
	res, err := whoamiFor(ctx, plain, "alice")
	if err != nil || !res.IsError {
		t.Fatalf("alice without a grant or URL elicitation: %+v, %v", res, err)
	}
	m, _ := res.Meta[gateway.ErrorMetaKey].(map[string]any)
	if m["code"] != "needs_login" || m["login"] != "caller" || m["command"] != nil {
		t.Fatalf("_meta = %v; want her own needs_login, no operator's command", m)
	}

	var asked int
	alice := connectWith(t, endpoint, aliceTok, "2025-11-25", &mcp.ClientOptions{
		Capabilities: urlCaps,
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			if req.Params.Mode != "url" {
				t.Errorf("elicitation = %+v", req.Params)
			}
			if err := oauthtest.BrowseAs(ctx, req.Params.URL, "alice-gh"); err != nil {
				t.Error(err)
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	res, err = whoamiFor(ctx, alice, "alice")
	if err != nil || res.IsError || !strings.Contains(text(t, res), "caller ok: alice-gh") || asked != 1 {
		t.Fatalf("alice's call through her login: %+v, %v (asked %d times)", res, err, asked)
	}

	bob := connectWith(t, endpoint, bobTok, "", &mcp.ClientOptions{Capabilities: urlCaps})
	_, err = whoamiFor(ctx, bob, "bob")
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeURLElicitationRequired {
		t.Fatalf("bob's first call: %v; want -32042", err)
	}
	var data struct{ Elicitations []*mcp.ElicitParams }
	if err := json.Unmarshal(rpc.Data, &data); err != nil || len(data.Elicitations) != 1 {
		t.Fatalf("error data %s: %v", rpc.Data, err)
	}
	if err := oauthtest.BrowseAs(ctx, data.Elicitations[0].URL, "bob-gh"); err != nil {
		t.Fatal(err)
	}
	res, err = whoamiFor(ctx, bob, "bob")
	if err != nil || res.IsError || !strings.Contains(text(t, res), "caller ok: bob-gh") {
		t.Fatalf("bob's call after his login: %+v, %v", res, err)
	}

	want := map[string]string{"alice": "alice-gh", "bob": "bob-gh"}
	sessions := map[string]*mcp.ClientSession{"alice": alice, "bob": bob}
	var wg sync.WaitGroup
	for i := range 20 {
		for who, cs := range sessions {
			wg.Go(func() {
				res, err := whoamiFor(ctx, cs, who)
				if err != nil || res.IsError || !strings.Contains(text(t, res), "caller ok: "+want[who]) {
					t.Errorf("%s, call %d: %+v, %v", who, i, res, err)
				}
			})
		}
	}
	wg.Wait()
	calls := as.Calls()
	if len(calls) != 42 {
		t.Errorf("the server saw %d calls; want 42: %+v", len(calls), calls)
	}
	for i, c := range calls {
		if tok := strings.TrimPrefix(c.Authorization, "Bearer "); c.User != want[c.For] || as.UserOf(tok) != want[c.For] {
			t.Fatalf("call %d, made for %s, carried a token of %q", i, c.For, as.UserOf(tok))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if as2["alice"] != "alice-gh" || as2["bob"] != "bob-gh" {
		t.Fatalf("the records' upstream identities: %v", as2)
	}
}

// TestPerCallerRevokedGrant: one client's grant revoked at the
// authorization server fails that client's calls with its own
// needs_login; the other client's calls go on.
func TestPerCallerRevokedGrant(t *testing.T) {
	t.Parallel()
	as, _, endpoint := perCallerGateway(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sessions := map[string]*mcp.ClientSession{}
	for who, tok := range map[string]string{"alice": aliceTok, "bob": bobTok} {
		cs := connectWith(t, endpoint, tok, "", &mcp.ClientOptions{Capabilities: urlCaps})
		_, err := whoamiFor(ctx, cs, who)
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != mcp.CodeURLElicitationRequired {
			t.Fatalf("%s's first call: %v", who, err)
		}
		var data struct{ Elicitations []*mcp.ElicitParams }
		json.Unmarshal(rpc.Data, &data) //nolint:errcheck // checked by the call that follows
		if err := oauthtest.BrowseAs(ctx, data.Elicitations[0].URL, who+"-gh"); err != nil {
			t.Fatal(err)
		}
		// The browser is answered before the grant is fetched: a
		// revocation must come after the tokens it revokes.
		issued := func() bool {
			return slices.ContainsFunc(as.Issued(), func(tok string) bool { return as.UserOf(tok) == who+"-gh" })
		}
		if !proc.Eventually(time.Minute, issued) {
			t.Fatalf("no tokens issued to %s-gh", who)
		}
		sessions[who] = cs
	}
	as.RevokeUser("alice-gh")
	plainAlice := connectWith(t, endpoint, aliceTok, "", nil)
	res, err := whoamiFor(ctx, plainAlice, "alice")
	if err != nil || !res.IsError {
		t.Fatalf("alice after her grant was revoked: %+v, %v", res, err)
	}
	if m, _ := res.Meta[gateway.ErrorMetaKey].(map[string]any); m["code"] != "needs_login" || m["login"] != "caller" {
		t.Fatalf("_meta = %v", m)
	}
	res, err = whoamiFor(ctx, sessions["bob"], "bob")
	if err != nil || res.IsError || !strings.Contains(text(t, res), "caller ok: bob-gh") {
		t.Fatalf("bob after alice's grant was revoked: %+v, %v", res, err)
	}
	for _, c := range as.Calls() {
		if c.For == "alice" && c.User != "alice-gh" {
			t.Fatal(fmt.Sprintf("a call for alice reached the server as %q", c.User))
		}
	}
}
