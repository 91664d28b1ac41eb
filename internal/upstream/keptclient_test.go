package upstream

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/creds"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// grantClient returns the client of the one grant kept for the rig's
// server.
func (r *oauthRig) grantClient(t *testing.T) string {
	t.Helper()
	ts, err := creds.LoadTokens(r.tokens, r.as.MCP)
	if err != nil || len(ts) != 1 {
		t.Fatalf("grants = %d, %v; want 1", len(ts), err)
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

// TestKeptClientReused: the client a login registered is kept, and the
// login that follows a grant the authorization server forgot (the
// refresh refused with invalid_grant) reuses it: one registration for
// two logins, the second grant issued to the same client.
func TestKeptClientReused(t *testing.T) {
	r := newOAuthRig(t, nil)
	c, err := r.dial(t, r.interactive(t))
	if err != nil {
		t.Fatal(err)
	}
	r.call(t, c)
	c.Close()
	first := r.grantClient(t)
	if k := r.keptClient(t); k == nil || k.ClientID != first || k.Issuer != r.as.Issuer {
		t.Fatalf("kept client = %+v, want %q of %s", k, first, r.as.Issuer)
	}

	r.as.RevokeAll()
	c, err = r.dial(t, r.interactive(t))
	if err != nil {
		t.Fatal(err)
	}
	r.call(t, c)
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
			c, err := r.dial(t, r.interactive(t))
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			old := r.grantClient(t)
			r.as.RevokeClient(old)

			if !browser {
				_, err := r.dial(t, &OAuth{TokensPath: r.tokens})
				if !errors.Is(err, fault.NeedsLogin) {
					t.Fatalf("err = %v, want needs_login", err)
				}
				if k := r.keptClient(t); k != nil {
					t.Fatalf("the revoked client is still kept: %+v", k)
				}
			}
			c, err = r.dial(t, r.interactive(t))
			if err != nil {
				t.Fatal(err)
			}
			r.call(t, c)
			if n := r.as.Count("register"); n != 2 {
				t.Fatalf("%d registrations, want 2 (one after the revocation)", n)
			}
			ts, _ := creds.LoadTokens(r.tokens, r.as.MCP)
			if len(ts) == 0 || ts[0].ClientID == old {
				t.Fatalf("newest grant issued to %v, want a new client", ts)
			}
			if k := r.keptClient(t); k == nil || k.ClientID != ts[0].ClientID {
				t.Fatalf("kept client = %+v, want %q", k, ts[0].ClientID)
			}
			if got := r.as.Authorized(); slices.Contains(got[1:], old) {
				t.Fatalf("the revoked client was offered again: %q", got)
			}
		})
	}
}

// TestKeptClientExchangeRefused: when the token endpoint refuses the kept
// client only in the code exchange (after the browser leg), the login
// fails naming the command, the client is forgotten, and the next login
// registers once and succeeds.
func TestKeptClientExchangeRefused(t *testing.T) {
	r := newOAuthRig(t, nil)
	r.as.AddClient("gone")
	if err := creds.SaveClient(r.tokens, creds.Client{Issuer: r.as.Issuer, Resource: r.as.MCP, ClientID: "gone"}); err != nil {
		t.Fatal(err)
	}
	o := r.interactive(t)
	authorize := o.Authorize
	o.Authorize = func(ctx context.Context, server, authURL string) (*auth.AuthorizationResult, error) {
		res, err := authorize(ctx, server, authURL)
		r.as.RevokeClient("gone") // known at /authorize, unknown at /token
		return res, err
	}
	_, err := r.dial(t, o)
	if err == nil || !strings.Contains(err.Error(), "switchboard login gh") || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("err = %v, want the client refused and the command to run\n%s %q", err, r.logs, r.as.Authorized())
	}
	if k := r.keptClient(t); k != nil {
		t.Fatalf("the refused client is still kept: %+v", k)
	}
	if n := r.as.Count("register"); n != 0 {
		t.Fatalf("%d registrations in the refused login, want 0", n)
	}
	c, err := r.dial(t, r.interactive(t))
	if err != nil {
		t.Fatal(err)
	}
	r.call(t, c)
	if n := r.as.Count("register"); n != 1 {
		t.Fatalf("%d registrations, want 1", n)
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
	if err := creds.SaveClient(r.tokens, creds.Client{Issuer: other.Issuer, Resource: r.as.MCP, ClientID: "elsewhere"}); err != nil {
		t.Fatal(err)
	}
	c, err := r.dial(t, r.interactive(t))
	if err != nil {
		t.Fatal(err)
	}
	r.call(t, c)
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
	kept := creds.Client{Issuer: r.as.Issuer, Resource: r.as.MCP, ClientID: "kept"}
	if err := creds.SaveClient(r.tokens, kept); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(`{"mcpServers":{"gh":{"url":"`+r.as.MCP+`","trust":"trusted","oauth":{"clientId":"configured"}}}}`), "t.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(context.Background(), cfg.Servers[0], &Options{OAuth: r.interactive(t), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r.call(t, c)
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
