package gateway_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/jwtauth"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit/issuer"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthhost"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// TestTokenExchange: on a server with "oauth.tokenExchange", a caller
// that came with a JWT is asked for no login: the gateway exchanges its
// token at the server's authorization server (RFC 8693) for one meant
// for the server, once per caller while the exchanged token lives, and
// the server sees each caller as the user its own token names, in both
// eras and calling at once; a token the authorization server refuses
// fails that caller's call, and no other's.
func TestTokenExchange(t *testing.T) {
	t.Parallel()
	is := issuer.New(t)
	var mu sync.Mutex
	minted := map[string]string{} // the gateway's JWT → the user the AS maps it to
	as := oauthtest.Start(t, &oauthtest.Options{TokenExchange: func(st string) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		u, ok := minted[st]
		return u, ok
	}})
	as.AddClient("gw")
	doc := map[string]any{"mcpServers": map[string]any{"gh": map[string]any{"url": as.MCP, "trust": "trusted",
		"oauth": map[string]any{"perCaller": true, "tokenExchange": true, "clientId": "gw", "issuer": as.Issuer}}}}
	cfg := parseDoc(t, doc, nil)
	var recMu sync.Mutex
	seenAs := map[string]string{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	aud := exchangeGateway(ctx, t, is, cfg, func(r host.CallRecord) {
		recMu.Lock()
		seenAs[r.Client] = r.As
		recMu.Unlock()
	})

	tokens := map[string]string{}
	for _, sub := range []string{"ann", "bob", "eve"} {
		tok := is.Mint(t, issuer.Token{Subject: sub, Audience: []string{aud}})
		tokens[sub] = tok
		if sub != "eve" { // the authorization server knows no eve
			minted[tok] = "x-" + sub
		}
	}
	sessions := map[string]*mcp.ClientSession{
		"ann": connectWith(t, aud, tokens["ann"], "2025-11-25", nil),
		"bob": connectWith(t, aud, tokens["bob"], "", nil),
	}
	var wg sync.WaitGroup
	for i := range 10 {
		for who, cs := range sessions {
			wg.Go(func() {
				res, err := whoamiFor(ctx, cs, who)
				if err != nil || res.IsError || !strings.Contains(text(t, res), "caller ok: x-"+who) {
					t.Errorf("%s, call %d: %+v, %v", who, i, res, err)
				}
			})
		}
	}
	wg.Wait()
	if got := as.Exchanged(); len(got) != 2 {
		t.Errorf("%d token exchanges; want one per caller", len(got))
	}
	for i, c := range as.Calls() {
		if tok := strings.TrimPrefix(c.Authorization, "Bearer "); c.User != "x-"+c.For || as.UserOf(tok) != "x-"+c.For {
			t.Fatalf("call %d, made for %s, carried a token of %q", i, c.For, as.UserOf(tok))
		}
		if c.Authorization == "Bearer "+tokens[c.For] {
			t.Fatalf("the caller's own token reached the server")
		}
	}
	if as.Count("authorize") != 1 {
		t.Errorf("%d authorization requests; want the operator's alone", as.Count("authorize"))
	}

	eve := connectWith(t, aud, tokens["eve"], "", nil)
	res, err := whoamiFor(ctx, eve, "eve")
	if err != nil || !res.IsError {
		t.Fatalf("eve, whose token the authorization server refuses: %+v, %v", res, err)
	}
	if m, _ := res.Meta[gateway.ErrorMetaKey].(map[string]any); m["code"] != "auth_failure" {
		t.Errorf("eve's refusal: _meta %v, %s; want auth_failure", m, text(t, res))
	}
	if res, err := whoamiFor(ctx, sessions["ann"], "ann"); err != nil || res.IsError {
		t.Fatalf("ann after eve's refusal: %+v, %v", res, err)
	}
	recMu.Lock()
	defer recMu.Unlock()
	if seenAs["sub:ann"] != "x-ann" || seenAs["sub:bob"] != "x-bob" {
		t.Fatalf("the records' upstream identities: %v", seenAs)
	}
}

// TestTokenExchangeActor: with "oauth.actorToken", each caller's token
// exchange carries the gateway's own token as the actor_token, one token
// of the gateway's for every caller, and the token issued names the
// gateway in its "act" claim; the server sees each caller as itself.
func TestTokenExchangeActor(t *testing.T) {
	t.Parallel()
	is := issuer.New(t)
	var mu sync.Mutex
	minted := map[string]string{}
	as := oauthtest.Start(t, &oauthtest.Options{ClientCredentials: true, TokenExchange: func(st string) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		u, ok := minted[st]
		return u, ok
	}})
	as.AddClient("gw")
	doc := map[string]any{"mcpServers": map[string]any{"gh": map[string]any{"url": as.MCP, "trust": "trusted",
		"oauth": map[string]any{"perCaller": true, "tokenExchange": true, "actorToken": "client_credentials",
			"clientId": "gw", "clientSecretEnv": "GW_SECRET", "issuer": as.Issuer}}}}
	cfg := parseDoc(t, doc, map[string]string{"GW_SECRET": "gw-secret"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	aud := exchangeGateway(ctx, t, is, cfg, nil)
	before := as.Count("token")
	for _, who := range []string{"ann", "bob"} {
		tok := is.Mint(t, issuer.Token{Subject: who, Audience: []string{aud}})
		mu.Lock()
		minted[tok] = "x-" + who
		mu.Unlock()
		cs := connectWith(t, aud, tok, "", nil)
		res, err := whoamiFor(ctx, cs, who)
		if err != nil || res.IsError || !strings.Contains(text(t, res), "caller ok: x-"+who) {
			t.Fatalf("%s: %+v, %v", who, res, err)
		}
	}
	if got := as.Actors(); len(got) != 2 || got[0] != "client:gw" || got[1] != "client:gw" {
		t.Fatalf("the exchanges' actors: %q; want the gateway's client twice", got)
	}
	if n := as.Count("token") - before; n != 3 {
		t.Errorf("%d token requests for two callers; want 3 (one token of the gateway's, an exchange each)", n)
	}
}

// exchangeGateway serves cfg's server "gh" through a gateway whose callers
// come with JWTs from is, after the operator has logged in to gh (the
// grant that discovers its tools); onCall, when set, receives the calls'
// records. It returns the gateway's MCP URL, the tokens' audience.
func exchangeGateway(ctx context.Context, t *testing.T, is *issuer.Issuer, cfg *config.Config, onCall func(host.CallRecord)) string {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, syncs := openHost(t, cfg, *hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond, OnCall: onCall,
		OAuth: &host.OAuthOptions{TokensPath: filepath.Join(t.TempDir(), "creds.json"), GrantKey: oauthhost.GrantKey}}, db))
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
	ln := listen(t)
	aud := "http://" + ln.Addr().String() + "/mcp"
	v, err := jwtauth.New(ctx, jwtauth.Options{Issuer: is.URL, Audience: aud})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, g, ln, gateway.HTTPOptions{Auth: &gateway.AuthOptions{JWT: v, Issuer: is.URL, Resource: aud}})
	return aud
}
