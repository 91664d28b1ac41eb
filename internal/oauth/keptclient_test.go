package oauth_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/creds"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// server is the rig's server as configured, with oauthBlock, when not "", as
// its "oauth" block.
func (r *oauthRig) server(t *testing.T, oauthBlock string) *config.Server {
	t.Helper()
	block := ""
	if oauthBlock != "" {
		block = `,"oauth":` + oauthBlock
	}
	cfg, err := config.Parse([]byte(`{"mcpServers":{"gh":{"url":"`+r.as.MCP+`","trust":"trusted"`+block+`}}}`), "t.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Servers[0]
}

// login runs Login to sc, the browser leg driven over HTTP. A browser
// leg the authorization server refuses ends the login.
func (r *oauthRig) login(t *testing.T, sc *config.Server) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return upstream.Login(ctx, sc, &upstream.Options{OAuth: &oauth.Config{TokensPath: r.tokens}, Logger: log}, func(authURL string) {
		r.logins.Add(1)
		if err := oauthtest.Browse(ctx, authURL); err != nil {
			t.Logf("browser leg: %v", err)
			cancel()
		}
	}, nil)
}

// call dials the rig's server with the grant kept, and calls it.
func (r *oauthRig) callKept(t *testing.T) {
	t.Helper()
	c, err := r.dial(t, &oauth.Config{TokensPath: r.tokens})
	if err != nil {
		t.Fatal(err)
	}
	r.call(t, c)
	c.Close()
}

// grantClient returns the client of the newest grant kept for the rig's
// server.
func (r *oauthRig) grantClient(t *testing.T) string {
	t.Helper()
	ts, err := creds.LoadTokens(r.tokens, r.as.MCP)
	if err != nil || len(ts) == 0 {
		t.Fatalf("grants = %d, %v; want one", len(ts), err)
	}
	return ts[0].ClientID
}

func (r *oauthRig) keptClient(t *testing.T) *creds.Client {
	t.Helper()
	c, err := creds.LoadClient(r.tokens, r.as.MCP)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// freeRedirect returns a loopback redirect URL on a port free just now.
func freeRedirect(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String() + "/callback"
}

// TestKeptClientReused: the client a login registered is kept, and the
// login that follows a grant the authorization server forgot (the
// refresh refused with invalid_grant) reuses it, on the redirect URL it
// was registered with: one registration for two logins, the second grant
// issued to the same client, even where the authorization server
// compares redirect URIs exactly.
func TestKeptClientReused(t *testing.T) {
	r := newOAuthRig(t, &oauthtest.Options{ExactRedirect: true})
	sc := r.server(t, "")
	if err := r.login(t, sc); err != nil {
		t.Fatal(err)
	}
	first := r.grantClient(t)
	if k := r.keptClient(t); k == nil || k.ClientID != first || k.Issuer != r.as.Issuer {
		t.Fatalf("kept client = %+v, want %q of %s", k, first, r.as.Issuer)
	}

	r.as.RevokeAll()
	if err := r.login(t, sc); err != nil {
		t.Fatal(err)
	}
	r.callKept(t)
	if n := r.logins.Load(); n != 2 {
		t.Fatalf("%d logins, want 2", n)
	}
	if n := r.as.Count("register"); n != 1 {
		t.Fatalf("%d registrations for two logins, want 1", n)
	}
	if got := r.grantClient(t); got != first {
		t.Fatalf("second grant issued to %q, want the kept %q", got, first)
	}
	if got := r.as.Authorized(); !slices.Equal(got, []string{first, first}) {
		t.Fatalf("authorization requests by %q, want the kept client twice", got)
	}
}

// TestKeptClientPortTaken: when the port the kept client was registered
// with is taken, the login does not offer it on another (an authorization
// server that compares redirect URIs exactly would refuse it in the
// browser): it registers a new client, succeeds, and keeps that one.
func TestKeptClientPortTaken(t *testing.T) {
	r := newOAuthRig(t, &oauthtest.Options{ExactRedirect: true})
	sc := r.server(t, "")
	if err := r.login(t, sc); err != nil {
		t.Fatal(err)
	}
	first := r.keptClient(t)
	ln, err := net.Listen("tcp", strings.TrimSuffix(strings.TrimPrefix(first.RedirectURI, "http://"), "/callback"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r.as.RevokeAll()
	if err := r.login(t, sc); err != nil {
		t.Fatal(err)
	}
	r.callKept(t)
	if n := r.as.Count("register"); n != 2 {
		t.Fatalf("%d registrations, want 2", n)
	}
	if k := r.keptClient(t); k == nil || k.ClientID == first.ClientID || k.ClientID != r.grantClient(t) {
		t.Fatalf("kept client = %+v, want the new one", k)
	}
}

// TestKeptClientRevoked: a kept client the authorization server no longer
// knows (the refresh answered invalid_client) is forgotten: a connection
// without a browser asks for a login and keeps no client; the login that
// follows registers exactly once, succeeds, and keeps the new client.
func TestKeptClientRevoked(t *testing.T) {
	for _, browser := range []bool{false, true} {
		name := "needs login first"
		if browser {
			name = "login at once"
		}
		t.Run(name, func(t *testing.T) {
			r := newOAuthRig(t, nil)
			sc := r.server(t, "")
			if err := r.login(t, sc); err != nil {
				t.Fatal(err)
			}
			old := r.grantClient(t)
			r.as.RevokeClient(old)

			if !browser {
				_, err := r.dial(t, &oauth.Config{TokensPath: r.tokens})
				if !errors.Is(err, fault.NeedsLogin) {
					t.Fatalf("err = %v, want needs_login", err)
				}
				if k := r.keptClient(t); k != nil {
					t.Fatalf("the revoked client is still kept: %+v", k)
				}
			}
			if err := r.login(t, sc); err != nil {
				t.Fatal(err)
			}
			r.callKept(t)
			if n := r.as.Count("register"); n != 2 {
				t.Fatalf("%d registrations, want 2 (one after the revocation)", n)
			}
			if got := r.grantClient(t); got == old {
				t.Fatalf("newest grant issued to the revoked client")
			}
			if k := r.keptClient(t); k == nil || k.ClientID != r.grantClient(t) {
				t.Fatalf("kept client = %+v, want %q", k, r.grantClient(t))
			}
			if got := r.as.Authorized(); slices.Contains(got[1:], old) {
				t.Fatalf("the revoked client was offered again: %q", got)
			}
		})
	}
}

// TestKeptClientExchangeRefused: when the token endpoint refuses the kept
// client only in the code exchange (after the browser leg), the login
// fails naming the command, without registering, and the client is
// marked: the next login registers once and succeeds, and so does every
// one after (a refusal that comes of reusing must not fail every other
// login).
func TestKeptClientExchangeRefused(t *testing.T) {
	r := newOAuthRig(t, nil)
	r.as.AddClient("gone")
	if err := creds.SaveClient(r.tokens, creds.Client{Issuer: r.as.Issuer, Resource: r.as.MCP, ClientID: "gone", RedirectURI: freeRedirect(t)}); err != nil {
		t.Fatal(err)
	}
	sc := r.server(t, "")
	r.as.RefuseTokens("gone")
	err := r.login(t, sc)
	if err == nil || !strings.Contains(err.Error(), "switchboard login gh") || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("err = %v, want the client refused and the command to run", err)
	}
	if k := r.keptClient(t); k == nil || k.ClientID != "gone" || !k.NoReuse {
		t.Fatalf("kept client = %+v, want it marked", k)
	}
	if n := r.as.Count("register"); n != 0 {
		t.Fatalf("%d registrations in the refused login, want 0", n)
	}
	for i := 1; i <= 2; i++ {
		r.as.RevokeAll()
		if err := r.login(t, sc); err != nil {
			t.Fatal(err)
		}
		r.callKept(t)
		if n := r.as.Count("register"); n != i {
			t.Fatalf("login %d: %d registrations, want %d", i, n, i)
		}
		if k := r.keptClient(t); k == nil || k.ClientID != r.grantClient(t) || !k.NoReuse {
			t.Fatalf("login %d: kept client = %+v, want the new one, marked", i, k)
		}
	}
}

// TestKeptClientOtherIssuer: a client kept from another authorization
// server is never offered to this one: the login registers here and
// keeps that client instead.
func TestKeptClientOtherIssuer(t *testing.T) {
	r := newOAuthRig(t, nil)
	other := oauthtest.Start(t, nil)
	other.AddClient("elsewhere")
	r.as.AddClient("elsewhere") // even a client ID this server knows
	if err := creds.SaveClient(r.tokens, creds.Client{Issuer: other.Issuer, Resource: r.as.MCP, ClientID: "elsewhere", RedirectURI: freeRedirect(t)}); err != nil {
		t.Fatal(err)
	}
	if err := r.login(t, r.server(t, "")); err != nil {
		t.Fatal(err)
	}
	r.callKept(t)
	if got := r.as.Authorized(); slices.Contains(got, "elsewhere") {
		t.Fatalf("the other issuer's client was offered: %q", got)
	}
	if n := r.as.Count("register"); n != 1 {
		t.Fatalf("%d registrations, want 1", n)
	}
	if k := r.keptClient(t); k == nil || k.Issuer != r.as.Issuer || k.ClientID != r.grantClient(t) {
		t.Fatalf("kept client = %+v, want this issuer's", k)
	}
}

// TestKeptClientConfigured: a configured client is used as it is: a kept
// client is not offered instead, nothing registers, and the configured
// client is not kept as a registered one.
func TestKeptClientConfigured(t *testing.T) {
	r := newOAuthRig(t, nil)
	r.as.AddClient("configured")
	r.as.AddClient("kept")
	kept := creds.Client{Issuer: r.as.Issuer, Resource: r.as.MCP, ClientID: "kept", RedirectURI: freeRedirect(t)}
	if err := creds.SaveClient(r.tokens, kept); err != nil {
		t.Fatal(err)
	}
	if err := r.login(t, r.server(t, `{"clientId":"configured"}`)); err != nil {
		t.Fatal(err)
	}
	if got := r.as.Authorized(); !slices.Equal(got, []string{"configured"}) {
		t.Fatalf("authorization requests by %q, want the configured client", got)
	}
	if n := r.as.Count("register"); n != 0 {
		t.Fatalf("%d registrations with a configured client", n)
	}
	if k := r.keptClient(t); k == nil || *k != kept {
		t.Fatalf("kept client = %+v, want %+v as it was", k, kept)
	}
}
