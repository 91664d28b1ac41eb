package oauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/creds"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// oauthRig is a protected server, a creds.json and a logger that records
// everything, for the OAuth tests.
type oauthRig struct {
	as     *oauthtest.Server
	tokens string
	logs   *bytes.Buffer
	logins atomic.Int32
}

func newOAuthRig(t *testing.T, opts *oauthtest.Options) *oauthRig {
	return &oauthRig{as: oauthtest.Start(t, opts), tokens: filepath.Join(t.TempDir(), "creds.json"), logs: &bytes.Buffer{}}
}

// interactive returns OAuth options with a browser leg driven over HTTP:
// a loopback redirect listener bound first, the authorization URL fetched
// and its redirects followed to the listener.
func (r *oauthRig) interactive(t *testing.T) *oauth.Config {
	t.Helper()
	red, err := oauth.ListenRedirect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { red.Close() })
	return &oauth.Config{TokensPath: r.tokens, RedirectURL: red.URL,
		Authorize: func(ctx context.Context, server, authURL string) (*auth.AuthorizationResult, error) {
			r.logins.Add(1)
			red.Expect(authURL)
			if err := oauthtest.Browse(ctx, authURL); err != nil {
				return nil, err
			}
			return red.Wait(ctx)
		}}
}

func (r *oauthRig) dial(t *testing.T, o *oauth.Config) (*upstream.Conn, error) {
	t.Helper()
	cfg, err := config.Parse([]byte(`{"mcpServers":{"gh":{"url":"`+r.as.MCP+`","trust":"trusted"}}}`), "t.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := upstream.Dial(context.Background(), cfg.Servers[0], &upstream.Options{OAuth: o, Logger: log})
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func (r *oauthRig) call(t *testing.T, c *upstream.Conn) {
	t.Helper()
	res, err := c.CallTool(context.Background(), "whoami", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(string(res.Raw), "caller ok") {
		t.Fatalf("result = %s", res.Raw)
	}
}

// TestOAuthLogin: the first connection logs in (dynamic registration,
// PKCE, the browser leg over HTTP to the loopback listener) and keeps the
// grant in creds.json (mode 0600, under issuer, resource and client); a
// second connection, as after a restart, uses it without a login.
func TestOAuthLogin(t *testing.T) {
	r := newOAuthRig(t, nil)
	c, err := r.dial(t, r.interactive(t))
	if err != nil {
		t.Fatal(err)
	}
	r.call(t, c)
	if n := r.logins.Load(); n != 1 {
		t.Fatalf("%d logins, want 1", n)
	}
	fi, err := os.Stat(r.tokens)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("creds.json mode %v, want 0600", fi.Mode().Perm())
	}
	ts, err := creds.LoadTokens(r.tokens, r.as.MCP)
	if err != nil || len(ts) != 1 {
		t.Fatalf("grants = %v, %v; want 1", ts, err)
	}
	if ts[0].Issuer != r.as.Issuer || !strings.HasPrefix(ts[0].ClientID, "client-") || ts[0].RefreshToken == "" {
		t.Fatalf("grant kept as issuer %q client %q (refresh token kept: %v)", ts[0].Issuer, ts[0].ClientID, ts[0].RefreshToken != "")
	}
	c.Close()

	// A new process: no browser leg at all, the grant is enough.
	c2, err := r.dial(t, &oauth.Config{TokensPath: r.tokens})
	if err != nil {
		t.Fatal(err)
	}
	r.call(t, c2)
	if n := r.as.Count("authorize"); n != 1 {
		t.Fatalf("%d authorization requests, want 1", n)
	}
	r.checkNoToken(t, err)
}

// TestOAuthNeedsLogin: without a grant and without a browser leg, the
// dial fails with needs_login naming the command, and the authorization
// server hears nothing (no registration nobody will use).
func TestOAuthNeedsLogin(t *testing.T) {
	r := newOAuthRig(t, nil)
	_, err := r.dial(t, &oauth.Config{TokensPath: r.tokens})
	if !errors.Is(err, fault.NeedsLogin) {
		t.Fatalf("err = %v, want needs_login", err)
	}
	if !strings.Contains(err.Error(), "needs login (run: switchboard login gh)") {
		t.Fatalf("err = %v, want the command to run", err)
	}
	if !upstream.Permanent(err) {
		t.Fatal("needs_login is retried")
	}
	for _, ep := range []string{"metadata", "register", "authorize", "token"} {
		if n := r.as.Count(ep); n != 0 {
			t.Errorf("%d %s requests without a browser leg", n, ep)
		}
	}
}

// TestOAuthRefresh: an expired access token is refreshed before the
// request (judged by the wall clock: the expiry comes from creds.json, as
// after a sleep), a token the server refuses is refreshed on the 401, and
// a grant the authorization server forgot asks for a login.
func TestOAuthRefresh(t *testing.T) {
	r := newOAuthRig(t, nil)
	c, err := r.dial(t, r.interactive(t))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()

	// Sleep and wake: the kept access token expired an hour ago.
	ts, _ := creds.LoadTokens(r.tokens, r.as.MCP)
	ts[0].Expiry = time.Now().Add(-time.Hour).Round(0)
	if err := creds.SaveToken(r.tokens, ts[0]); err != nil {
		t.Fatal(err)
	}
	c, err = r.dial(t, &oauth.Config{TokensPath: r.tokens})
	if err != nil {
		t.Fatal(err)
	}
	r.call(t, c)
	if n := r.as.Count("refresh"); n != 1 {
		t.Fatalf("%d refreshes after the expiry, want 1", n)
	}

	// The server stops accepting the access token: one 401, one refresh.
	r.as.RevokeAccess()
	r.call(t, c)
	if n := r.as.Count("refresh"); n != 2 {
		t.Fatalf("%d refreshes after a 401, want 2", n)
	}
	c.Close()

	// The grant is gone at the authorization server: a login is needed.
	r.as.RevokeAll()
	_, err = r.dial(t, &oauth.Config{TokensPath: r.tokens})
	if !errors.Is(err, fault.NeedsLogin) {
		t.Fatalf("err = %v, want needs_login", err)
	}
	r.checkNoToken(t, err)
}

// checkNoToken fails if any token issued so far is in the logs, the error
// or creds.json's neighbours' output.
func (r *oauthRig) checkNoToken(t *testing.T, err error) {
	t.Helper()
	var msg string
	if err != nil {
		msg = err.Error()
	}
	for _, tok := range r.as.Issued() {
		if strings.Contains(r.logs.String(), tok) || strings.Contains(msg, tok) {
			t.Fatalf("a token is in the logs or the error")
		}
	}
}

// TestOAuthPlainRefusal: a 401 that asks for no bearer token, or a server
// with a static Authorization header, is auth_failure as without OAuth,
// never needs_login.
func TestOAuthPlainRefusal(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(plain.Close)
	as := oauthtest.Start(t, nil)
	tokens := filepath.Join(t.TempDir(), "creds.json")
	for _, tt := range []struct{ name, server string }{
		{"no challenge", `{"url":"` + plain.URL + `","trust":"trusted"}`},
		{"static token", `{"url":"` + as.MCP + `","trust":"trusted","headers":{"Authorization":"Bearer wrong"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(`{"mcpServers":{"s":`+tt.server+`}}`), "t.json", nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = upstream.Dial(context.Background(), cfg.Servers[0], &upstream.Options{OAuth: &oauth.Config{TokensPath: tokens}})
			if !errors.Is(err, fault.AuthFailure) {
				t.Fatalf("err = %v, want auth_failure", err)
			}
		})
	}
}
