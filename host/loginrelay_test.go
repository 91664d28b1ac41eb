package host_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthhost"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// relayCallback is the public callback URL both replicas register.
const relayCallback = "http://127.0.0.1:8939/oauth/callback"

// settableClock is a host clock a test moves.
type settableClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *settableClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *settableClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// redirectOf is the browser leg of a login up to the authorization
// server's redirect, not followed: the redirect URL, carrying the code.
func redirectOf(t *testing.T, ctx context.Context, authURL, user string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Oauthtest-User", user)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if u, err := url.Parse(loc); err != nil || u.Query().Get("code") == "" || !strings.HasPrefix(loc, relayCallback+"?") {
		t.Fatalf("the authorization server redirected to %q; want %s with a code", loc, relayCallback)
	}
	return loc
}

// arrive hands the redirect to the host's callback handler, as the
// gateway's front door does, and returns the answer.
func arrive(h *host.Host, redirect string) (int, string) {
	w := httptest.NewRecorder()
	h.OAuthCallback().ServeHTTP(w, httptest.NewRequest(http.MethodGet, redirect, nil))
	return w.Code, w.Body.String()
}

// TestLoginAcrossReplicas: two hosts sharing one store, as replicas of a
// gateway behind one public URL, without sticky sessions: a login
// started on replica A, whose redirect reaches replica B, completes on A,
// and the grant is kept for the caller whose login it was; the same
// redirect again, on either, is refused, as are a forged state and a
// login that expired by the hosts' clock.
func TestLoginAcrossReplicas(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state.db")
		testLoginAcrossReplicas(t, openSQLite(t, path), openSQLite(t, path))
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.URL(t)
		testLoginAcrossReplicas(t, openPostgres(t, url), openPostgres(t, url))
	})
}

func openSQLite(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func testLoginAcrossReplicas(t *testing.T, sa, sb oauthhost.Store) {
	as := oauthtest.Start(t, &oauthtest.Options{ExactRedirect: true})
	clock := &settableClock{now: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
	tune := func(o *host.Options) {
		o.Clock = clock.Now
		o.OAuth.CallbackURL = relayCallback
	}
	a := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true, Store: sa, Tune: tune})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// login starts v's login to gh, sends its redirect to the host to,
	// and waits for the login to end.
	login := func(v *host.View, user string, to *host.Host) (*host.Login, string) {
		t.Helper()
		l, err := v.Login(ctx, "gh")
		if err != nil || l.URL() == "" {
			t.Fatalf("login of %+v: %v", v.Caller(), err)
		}
		redirect := redirectOf(t, ctx, l.URL(), user)
		if code, page := arrive(to, redirect); code != http.StatusOK || page != "Switchboard: logged in. You can close this window.\n" {
			t.Fatalf("the redirect of %s's login: %d %q", user, code, page)
		}
		select {
		case <-l.Done():
		case <-ctx.Done():
			t.Fatalf("%s's login did not end", user)
		}
		if err := l.Err(); err != nil {
			t.Fatalf("%s's login: %v", user, err)
		}
		return l, redirect
	}

	// The operator's login, on A, discovers gh's tools for both.
	login(a.Host.View(host.Caller{}), "operator", a.Host)
	b := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true, Store: sb, Creds: a.Creds, Tune: tune})
	for _, r := range []*oauthhost.Rig{a, b} {
		if err := r.Host.Ready(ctx, "gh"); err != nil {
			t.Fatal(err)
		}
	}

	// Ann's own login, started on A, its redirect on B: her grant is
	// hers, on both replicas; bob has none.
	_, redirect := login(a.Host.View(host.Caller{Subject: "sub:ann"}), "ann-gh", b.Host)
	for i, r := range []*oauthhost.Rig{a, b} {
		if out, err := whoami(ctx, r.Host.View(host.Caller{Subject: "sub:ann"}), "ann"); err != nil || !strings.Contains(out, "caller ok: ann-gh") {
			t.Fatalf("ann on replica %d after her login: %q, %v", i, out, err)
		}
	}
	holders, err := sa.GrantHolders(ctx, as.MCP)
	if err != nil || len(holders) != 1 || holders[0].Caller != "sub:ann" || holders[0].Subject != "ann-gh" {
		t.Fatalf("grant holders = %+v, %v; want ann's alone", holders, err)
	}
	if _, err := whoami(ctx, b.Host.View(host.Caller{Client: "bob"}), "bob"); fault.CodeOf(err) != fault.CodeNeedsLogin || !errors.Is(err, host.ErrOwnLogin) {
		t.Fatalf("bob without a login: %v; want his own needs_login", err)
	}
	for i, r := range []*oauthhost.Rig{a, b} {
		if code, _ := arrive(r.Host, redirect); code != http.StatusBadRequest {
			t.Errorf("ann's redirect again on replica %d: %d; want 400", i, code)
		}
	}

	// Bob's login, started on B: a forged state is refused on A and
	// leaves it waiting; once it has expired by the hosts' clock, its
	// real redirect is refused too, and his grant is not kept.
	l, err := b.Host.View(host.Caller{Client: "bob"}).Login(ctx, "gh")
	if err != nil {
		t.Fatal(err)
	}
	redirect = redirectOf(t, ctx, l.URL(), "bob-gh")
	u, _ := url.Parse(redirect)
	forged := u.Query()
	forged.Set("state", "forged-"+forged.Get("state"))
	if code, page := arrive(a.Host, relayCallback+"?"+forged.Encode()); code != http.StatusBadRequest || page != "not the redirect of this login\n" {
		t.Fatalf("a forged state on A: %d %q; want 400", code, page)
	}
	clock.Add(host.DefaultLoginTimeout + time.Second)
	if code, page := arrive(a.Host, redirect); code != http.StatusBadRequest || page != "not the redirect of this login\n" {
		t.Fatalf("bob's redirect after his login expired: %d %q; want 400", code, page)
	}
	select {
	case <-l.Done():
		t.Fatalf("bob's login ended: %v", l.Err())
	default:
	}
	if gs, err := sb.Grants(ctx, "bob", as.MCP); err != nil || len(gs) != 0 {
		t.Fatalf("bob's grants: %+v, %v; want none", gs, err)
	}
}

// TestLoginAcrossReplicasOtherKey: a replica whose grant key differs
// records a redirect that the replica whose login it is cannot open:
// that login fails at once, saying why, and no grant is kept.
func TestLoginAcrossReplicasOtherKey(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, &oauthtest.Options{ExactRedirect: true})
	path := filepath.Join(t.TempDir(), "state.db")
	tune := func(key string) func(*host.Options) {
		return func(o *host.Options) {
			o.OAuth.CallbackURL = relayCallback
			if key != "" {
				o.OAuth.GrantKey = key
			}
		}
	}
	a := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true, Store: openSQLite(t, path), Tune: tune("")})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	op, err := a.Host.View(host.Caller{}).Login(ctx, "gh")
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := arrive(a.Host, redirectOf(t, ctx, op.URL(), "operator")); code != http.StatusOK {
		t.Fatalf("the operator's redirect: %d", code)
	}
	<-op.Done()
	if err := a.Host.Ready(ctx, "gh"); err != nil {
		t.Fatal(err)
	}
	b := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true, Store: openSQLite(t, path), Creds: a.Creds,
		Tune: tune("YW5vdGhlci1rZXktZm9yLXRlc3RzLW9ubHktMzJieXQ=")})

	l, err := a.Host.View(host.Caller{Subject: "sub:ann"}).Login(ctx, "gh")
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := arrive(b.Host, redirectOf(t, ctx, l.URL(), "ann-gh")); code != http.StatusOK {
		t.Fatalf("ann's redirect on B: %d; want 200 (recorded)", code)
	}
	select {
	case <-l.Done():
	case <-ctx.Done():
		t.Fatal("ann's login did not end")
	}
	if err := l.Err(); err == nil || !strings.Contains(err.Error(), "every replica needs the same SWITCHBOARD_GRANT_KEY") {
		t.Fatalf("ann's login: %v; want the keys named", err)
	}
	if gs, err := a.Store.Grants(ctx, "sub:ann", as.MCP); err != nil || len(gs) != 0 {
		t.Fatalf("ann's grants: %+v, %v; want none", gs, err)
	}
}
