package oauth_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestCallbackKeptClient: a login through a Callback registers the
// Callback's URL, and a client kept for a loopback redirect URL is not
// offered for it (an authorization server comparing redirect URIs exactly
// would refuse it in the browser): the first such login registers a new
// client and keeps it, the next one reuses that.
func TestCallbackKeptClient(t *testing.T) {
	r := newOAuthRig(t, &oauthtest.Options{ExactRedirect: true})
	sc := r.server(t, "")
	if err := r.login(t, sc); err != nil {
		t.Fatal(err)
	}
	loopback := r.keptClient(t)

	var cb *oauth.Callback
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { cb.ServeHTTP(w, req) }))
	defer srv.Close()
	cb = oauth.NewCallback(srv.URL + "/oauth/callback")
	login := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		log := slog.New(slog.NewTextHandler(r.logs, nil))
		err := upstream.Login(ctx, sc, &upstream.Options{OAuth: &oauth.Config{TokensPath: r.tokens, Callback: cb}, Logger: log}, func(authURL string) {
			if u, _ := url.Parse(authURL); u.Query().Get("redirect_uri") != cb.URL {
				t.Errorf("redirect_uri = %q; want %q", u.Query().Get("redirect_uri"), cb.URL)
			}
			if err := oauthtest.Browse(ctx, authURL); err != nil {
				t.Errorf("browser leg: %v", err)
				cancel()
			}
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	r.as.RevokeAll()
	login()
	kept := r.keptClient(t)
	if kept == nil || kept.ClientID == loopback.ClientID || kept.RedirectURI != cb.URL {
		t.Fatalf("kept client = %+v; want a new one for %s (the loopback one was %s)", kept, cb.URL, loopback.ClientID)
	}
	r.as.RevokeAll()
	login()
	if got := r.keptClient(t); got.ClientID != kept.ClientID {
		t.Fatalf("second login through the callback kept %q; want %q reused", got.ClientID, kept.ClientID)
	}
	if n := r.as.Count("register"); n != 2 {
		t.Fatalf("%d registrations; want 2 (loopback, callback)", n)
	}
}
