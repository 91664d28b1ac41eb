package host_test

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthhost"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// TestLoginAbandoned: a login is one per server (a second Login joins it);
// one not completed within OAuthOptions.LoginTimeout is abandoned, its
// redirect listener closed; the next Login starts afresh, and once its
// URL is followed the server is ready and its tools can be called.
func TestLoginAbandoned(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	// LoginTimeout also bounds the next login, browser, grant and dial
	// included: long enough for those on a busy machine.
	h := oauthhost.Open(t, as.MCP, &oauthhost.Options{LoginTimeout: 3 * time.Second}).Host
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if st := h.Servers()[0]; st.Auth != host.NeedsLoginState("gh") {
		t.Fatalf("before the login: %+v", st)
	}

	l, err := h.Login(ctx, "gh")
	if err != nil || l.URL() == "" {
		t.Fatalf("login: %v, %v", l, err)
	}
	if again, err := h.Login(ctx, "gh"); err != nil || again != l {
		t.Fatalf("a second Login: %p, %v; want the login in progress %p", again, err, l)
	}
	au, err := url.Parse(l.URL())
	if err != nil {
		t.Fatal(err)
	}
	redirect, err := url.Parse(au.Query().Get("redirect_uri"))
	if err != nil || redirect.Hostname() != "127.0.0.1" {
		t.Fatalf("redirect_uri %q: %v", au.Query().Get("redirect_uri"), err)
	}
	if c, err := net.Dial("tcp", redirect.Host); err != nil {
		t.Fatalf("the redirect listener is not listening: %v", err)
	} else {
		c.Close()
	}
	select {
	case <-l.Done():
	case <-ctx.Done():
		t.Fatal("the login was not abandoned")
	}
	if l.Err() == nil {
		t.Fatal("an abandoned login reports no error")
	}
	if c, err := net.Dial("tcp", redirect.Host); err == nil {
		c.Close()
		t.Fatal("the abandoned login's listener still accepts connections")
	}

	next, err := h.Login(ctx, "gh")
	if err != nil || next == l || next.URL() == l.URL() {
		t.Fatalf("the next login: %v, %v; want a new one", next, err)
	}
	if err := oauthtest.Browse(ctx, next.URL()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-next.Done():
	case <-ctx.Done():
		t.Fatal("the login did not end")
	}
	if err := next.Err(); err != nil {
		t.Fatal(err)
	}
	if st := h.Servers()[0]; st.State != host.StateReady || st.Auth != "ok" {
		t.Fatalf("after the login: %+v", st)
	}
	res, err := h.Call(ctx, "gh__whoami", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(res)
	for _, tok := range as.Issued() {
		if strings.Contains(string(out), tok) || strings.Contains(l.Err().Error(), tok) {
			t.Fatal("a token in a result or an error")
		}
	}
}
