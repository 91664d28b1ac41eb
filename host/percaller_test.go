package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthhost"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// loginAs runs v's login to gh through the browser leg as user.
func loginAs(t *testing.T, ctx context.Context, v *host.View, user string) {
	t.Helper()
	l, err := v.Login(ctx, "gh")
	if err != nil || l.URL() == "" {
		t.Fatalf("login of %+v: %v, %v", v.Caller(), l, err)
	}
	if err := oauthtest.BrowseAs(ctx, l.URL(), user); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-ctx.Done():
		t.Fatal("the login did not end")
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
}

// whoami calls gh's whoami for v's caller, saying whom it is for.
func whoami(ctx context.Context, v *host.View, forWhom string) (string, error) {
	res, err := v.Call(ctx, "gh__whoami", json.RawMessage(fmt.Sprintf(`{"for":%q}`, forWhom)), &host.CallOptions{})
	if err != nil {
		return "", err
	}
	return res.Text, nil
}

// TestPerCallerGrants: with "oauth.perCaller", the operator's grant
// discovers gh; a caller without a grant of its own fails closed with
// needs_login marked as its own login, logs in as itself, and is then
// seen upstream as itself; two callers calling at once never send each
// other's tokens (every Authorization header the server saw is checked
// against whom the call was for); the grants are sealed in the store; one
// caller's grant revoked upstream, or its logout, leaves the other
// working; the audit record says as whom the upstream saw each call.
func TestPerCallerGrants(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	var mu sync.Mutex
	var recs []host.CallRecord
	rig := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true, OnCall: func(r host.CallRecord) {
		mu.Lock()
		recs = append(recs, r)
		mu.Unlock()
	}})
	h := rig.Host
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	op := h.View(host.Caller{})
	loginAs(t, ctx, op, "operator")
	if err := h.Ready(ctx, "gh"); err != nil {
		t.Fatal(err)
	}
	ann := h.View(host.Caller{Subject: "sub:ann", Session: "s1"})
	bob := h.View(host.Caller{Client: "bob"})

	_, err := whoami(ctx, ann, "ann")
	if fault.CodeOf(err) != fault.CodeNeedsLogin || !errors.Is(err, host.ErrOwnLogin) {
		t.Fatalf("ann without a grant: %v; want needs_login, her own", err)
	}
	if strings.Contains(err.Error(), "switchboard login") {
		t.Errorf("a caller is told to run the operator's command: %v", err)
	}
	loginAs(t, ctx, ann, "ann-gh")
	loginAs(t, ctx, bob, "bob-gh")

	want := map[string]string{"ann": "ann-gh", "bob": "bob-gh", "op": "operator"}
	views := map[string]*host.View{"ann": ann, "bob": bob, "op": op}
	var wg sync.WaitGroup
	errs := make(chan error, 90)
	for i := range 30 {
		for who, v := range views {
			wg.Go(func() {
				out, err := whoami(ctx, v, who)
				if err != nil {
					errs <- fmt.Errorf("%s, call %d: %w", who, i, err)
				} else if !strings.Contains(out, "caller ok: "+want[who]+"\n") && !strings.HasSuffix(out, "caller ok: "+want[who]) {
					errs <- fmt.Errorf("%s, call %d: the server saw %q", who, i, out)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	calls := as.Calls()
	if len(calls) != 90 {
		t.Fatalf("the server saw %d calls; want 90", len(calls))
	}
	for i, c := range calls {
		tok := strings.TrimPrefix(c.Authorization, "Bearer ")
		if c.User != want[c.For] || as.UserOf(tok) != want[c.For] {
			t.Fatalf("call %d for %s carried the token of %q (server saw %q)", i, c.For, as.UserOf(tok), c.User)
		}
	}
	if n := h.CallerConns(); n != 2 {
		t.Errorf("%d callers' connections; want 2 (ann's and bob's)", n)
	}

	// The store keeps the grants sealed: no token in the clear.
	holders, err := rig.Store.GrantHolders(ctx, as.MCP)
	if err != nil || len(holders) != 2 || holders[0].Caller != "bob" || holders[0].Subject != "bob-gh" || holders[1].Caller != "sub:ann" {
		t.Fatalf("grant holders = %+v, %v", holders, err)
	}
	for _, who := range []string{"bob", "sub:ann"} {
		gs, err := rig.Store.Grants(ctx, who, as.MCP)
		if err != nil || len(gs) != 1 {
			t.Fatalf("grants of %s: %+v, %v", who, gs, err)
		}
		for _, tok := range as.Issued() {
			if bytes.Contains(gs[0].Sealed, []byte(tok)) {
				t.Fatalf("the store holds a token of %s in the clear", who)
			}
		}
	}

	// Ann's grant revoked at the authorization server: she is asked to
	// log in again; bob and the operator go on.
	as.RevokeUser("ann-gh")
	if _, err := whoami(ctx, ann, "ann"); fault.CodeOf(err) != fault.CodeNeedsLogin || !errors.Is(err, host.ErrOwnLogin) {
		t.Fatalf("ann after her grant was revoked: %v; want her own needs_login", err)
	}
	for who, v := range map[string]*host.View{"bob": bob, "op": op} {
		if out, err := whoami(ctx, v, who); err != nil || !strings.Contains(out, want[who]) {
			t.Fatalf("%s after ann's grant was revoked: %q, %v", who, out, err)
		}
	}
	// Bob logs out: ann, logged in again, goes on.
	if n, err := h.LogoutAs(ctx, "bob", "gh"); err != nil || n != 1 {
		t.Fatalf("LogoutAs(bob) = %d, %v", n, err)
	}
	if _, err := whoami(ctx, bob, "bob"); fault.CodeOf(err) != fault.CodeNeedsLogin {
		t.Fatalf("bob after his logout: %v; want needs_login", err)
	}
	loginAs(t, ctx, ann, "ann-gh")
	if out, err := whoami(ctx, ann, "ann"); err != nil || !strings.Contains(out, "ann-gh") {
		t.Fatalf("ann logged in again: %q, %v", out, err)
	}

	mu.Lock()
	defer mu.Unlock()
	seen := map[string]string{}
	refused := 0
	for _, r := range recs {
		if r.Outcome == host.OutcomeOK {
			seen[r.Client] = r.As + "/" + r.Grant
		} else if r.Grant == host.GrantNeedsLogin && r.Code == "needs_login" {
			refused++
		}
	}
	if seen["sub:ann"] != "ann-gh/own" || seen["bob"] != "bob-gh/own" || seen[""] != "/" || refused != 3 {
		t.Fatalf("the records' upstream identities and decisions: %v, %d refused; want 3", seen, refused)
	}
}

// TestPerCallerNeedsKey: without the key that seals callers' grants, a
// server with "oauth.perCaller" serves the operator and refuses every
// other caller, closed.
func TestPerCallerNeedsKey(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	rig := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true, NoGrantKey: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	op := rig.Host.View(host.Caller{})
	loginAs(t, ctx, op, "operator")
	if out, err := whoami(ctx, op, "op"); err != nil || !strings.Contains(out, "operator") {
		t.Fatalf("the operator: %q, %v", out, err)
	}
	ann := rig.Host.View(host.Caller{Subject: "sub:ann"})
	if _, err := whoami(ctx, ann, "ann"); fault.CodeOf(err) != fault.CodeNeedsLogin || !strings.Contains(err.Error(), "SWITCHBOARD_GRANT_KEY") {
		t.Fatalf("a caller without the key: %v; want needs_login naming the key", err)
	}
	if _, err := ann.Login(ctx, "gh"); err == nil {
		t.Fatal("a caller's login started without the key")
	}
	for _, c := range as.Calls() {
		if c.For == "ann" {
			t.Fatal("a call for ann reached the server")
		}
	}
}

// TestPerCallerRefreshAcrossReplicas: two hosts sharing one store (as
// replicas share PostgreSQL) refresh a caller's grant once between them:
// the authorization server rotates refresh tokens, so a second refresh
// with the same one would revoke the grant. Both calls succeed as the
// caller, and the grant kept is the refreshed one.
func TestPerCallerRefreshAcrossReplicas(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { testRefreshAcrossReplicas(t, nil, nil) })
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.URL(t)
		testRefreshAcrossReplicas(t, openPostgres(t, url), openPostgres(t, url))
	})
}

// testRefreshAcrossReplicas runs the test on stores sa and sb (nil: one
// SQLite store for both).
func testRefreshAcrossReplicas(t *testing.T, sa, sb oauthhost.Store) {
	as := oauthtest.Start(t, nil)
	a := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true, Store: sa})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	loginAs(t, ctx, a.Host.View(host.Caller{}), "operator")
	if sb == nil {
		sb = a.Store
	}
	b := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true, Store: sb, Creds: a.Creds})
	for _, r := range []*oauthhost.Rig{a, b} {
		if err := r.Host.Ready(ctx, "gh"); err != nil {
			t.Fatal(err)
		}
	}
	annA := a.Host.View(host.Caller{Subject: "sub:ann"})
	annB := b.Host.View(host.Caller{Subject: "sub:ann"})
	loginAs(t, ctx, annA, "ann-gh")
	for _, v := range []*host.View{annA, annB} {
		if out, err := whoami(ctx, v, "ann"); err != nil || !strings.Contains(out, "ann-gh") {
			t.Fatalf("ann before the refresh: %q, %v", out, err)
		}
	}
	before := as.Count("refresh")
	as.RevokeAccess() // every access token refused; the refresh token still works
	for range 3 {
		var wg sync.WaitGroup
		for i, v := range []*host.View{annA, annB, annA, annB} {
			wg.Go(func() {
				if out, err := whoami(ctx, v, "ann"); err != nil || !strings.Contains(out, "ann-gh") {
					t.Errorf("ann on replica %d after her access token was refused: %q, %v", i%2, out, err)
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		if n := as.Count("refresh") - before; n != 1 {
			t.Fatalf("%d refreshes of ann's grant; want 1 between the replicas", n)
		}
		before = as.Count("refresh")
		as.RevokeAccess()
	}
}

// TestPerCallerLogoutElsewhere: a caller logged out on one replica (or by
// `switchboard logout --caller`, which deletes the grant from the store)
// is refused on another whose connection still holds its token in
// memory, once that connection checks its grant again; other callers go
// on.
func TestPerCallerLogoutElsewhere(t *testing.T) {
	defer host.SetGrantRecheck(0)()
	as := oauthtest.Start(t, nil)
	a := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	loginAs(t, ctx, a.Host.View(host.Caller{}), "operator")
	b := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true, Store: a.Store, Creds: a.Creds})
	if err := b.Host.Ready(ctx, "gh"); err != nil {
		t.Fatal(err)
	}
	loginAs(t, ctx, a.Host.View(host.Caller{Subject: "sub:ann"}), "ann-gh")
	loginAs(t, ctx, a.Host.View(host.Caller{Subject: "sub:bob"}), "bob-gh")
	annB := b.Host.View(host.Caller{Subject: "sub:ann"})
	bobB := b.Host.View(host.Caller{Subject: "sub:bob"})
	for _, v := range []*host.View{annB, bobB} {
		if _, err := whoami(ctx, v, "x"); err != nil {
			t.Fatalf("%s on replica b: %v", v.Caller().Subject, err)
		}
	}
	if n, err := a.Host.LogoutAs(ctx, "sub:ann", "gh"); err != nil || n != 1 {
		t.Fatalf("LogoutAs = %d, %v", n, err)
	}
	if _, err := whoami(ctx, annB, "ann"); fault.CodeOf(err) != fault.CodeNeedsLogin {
		t.Fatalf("ann on replica b after her logout on a: %v; want needs_login", err)
	}
	if out, err := whoami(ctx, bobB, "bob"); err != nil || !strings.Contains(out, "bob-gh") {
		t.Fatalf("bob on replica b: %q, %v", out, err)
	}
}

// TestPerCallerSpan: the span of a call made with a caller's own grant
// says who called and as whom the server saw it.
func TestPerCallerSpan(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	spans := tracetest.NewSpanRecorder()
	rig := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true, Tune: func(o *host.Options) {
		o.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	loginAs(t, ctx, rig.Host.View(host.Caller{}), "operator")
	ann := rig.Host.View(host.Caller{Subject: "sub:ann"})
	loginAs(t, ctx, ann, "ann-gh")
	if _, err := whoami(ctx, ann, "ann"); err != nil {
		t.Fatal(err)
	}
	for _, sp := range spans.Ended() {
		attrs := map[string]string{}
		for _, a := range sp.Attributes() {
			attrs[string(a.Key)] = a.Value.Emit()
		}
		if attrs[host.AttrCaller] == "sub:ann" && attrs[host.AttrOutcome] == "ok" {
			if attrs[host.AttrAs] != "ann-gh" {
				t.Fatalf("the call's span: %v; want %s ann-gh", attrs, host.AttrAs)
			}
			return
		}
	}
	t.Fatal("no span of ann's call")
}

// TestPerCallerIdle: a caller's connection unused for CallerIdle is
// closed by the Host's once-a-second sweep, and the caller's next call
// dials it again.
func TestPerCallerIdle(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	rig := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true, CallerIdle: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	loginAs(t, ctx, rig.Host.View(host.Caller{}), "operator")
	ann := rig.Host.View(host.Caller{Subject: "sub:ann"})
	loginAs(t, ctx, ann, "ann-gh")
	if _, err := whoami(ctx, ann, "ann"); err != nil {
		t.Fatal(err)
	}
	for rig.Host.CallerConns() != 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the idle connection was not closed")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if out, err := whoami(ctx, ann, "ann"); err != nil || !strings.Contains(out, "ann-gh") {
		t.Fatalf("ann after her idle connection closed: %q, %v", out, err)
	}
}

// TestPerCallerReport: with "perCaller": "report" every caller still acts
// as the operator upstream, callers may already log in as themselves, and
// each call records what enforcing would do: would_login for a caller
// without a grant of its own, would_own for one with; no caller's
// connection is made.
func TestPerCallerReport(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	var mu sync.Mutex
	var recs []host.CallRecord
	rig := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true, Report: true, OnCall: func(r host.CallRecord) {
		mu.Lock()
		recs = append(recs, r)
		mu.Unlock()
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	loginAs(t, ctx, rig.Host.View(host.Caller{}), "operator")
	ann := rig.Host.View(host.Caller{Subject: "sub:ann"})
	if out, err := whoami(ctx, ann, "ann"); err != nil || !strings.Contains(out, "caller ok: operator") {
		t.Fatalf("ann without a grant, report-only: %q, %v", out, err)
	}
	loginAs(t, ctx, ann, "ann-gh")
	if out, err := whoami(ctx, ann, "ann"); err != nil || !strings.Contains(out, "caller ok: operator") {
		t.Fatalf("ann with a grant, report-only: %q, %v", out, err)
	}
	if _, err := whoami(ctx, rig.Host.View(host.Caller{}), "op"); err != nil {
		t.Fatal(err)
	}
	if n := rig.Host.CallerConns(); n != 0 {
		t.Errorf("%d callers' connections in report-only mode", n)
	}
	mu.Lock()
	defer mu.Unlock()
	var got []string
	for _, r := range recs {
		got = append(got, r.Client+"="+r.Grant+"/"+r.As)
	}
	if want := "sub:ann=would_login/,sub:ann=would_own/,=/"; strings.Join(got, ",") != want {
		t.Fatalf("records: %s; want %s", strings.Join(got, ","), want)
	}
}

// TestPerCallerRevokedAcrossReplicas: a caller's grant revoked at the
// authorization server is refused at its one refresh, forgotten in the
// store, and the caller's calls on both replicas fail with its own
// needs_login at once (no replica waits out the other's refresh lease).
func TestPerCallerRevokedAcrossReplicas(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	a := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	loginAs(t, ctx, a.Host.View(host.Caller{}), "operator")
	b := oauthhost.Open(t, as.MCP, &oauthhost.Options{PerCaller: true, Store: a.Store, Creds: a.Creds})
	if err := b.Host.Ready(ctx, "gh"); err != nil {
		t.Fatal(err)
	}
	annA := a.Host.View(host.Caller{Subject: "sub:ann"})
	annB := b.Host.View(host.Caller{Subject: "sub:ann"})
	loginAs(t, ctx, annA, "ann-gh")
	for _, v := range []*host.View{annA, annB} {
		if _, err := whoami(ctx, v, "ann"); err != nil {
			t.Fatal(err)
		}
	}
	as.RevokeUser("ann-gh")
	// Well inside the 30 s lease: a replica waiting it out fails this.
	short, cancelShort := context.WithTimeout(ctx, 10*time.Second)
	defer cancelShort()
	var wg sync.WaitGroup
	for i, v := range []*host.View{annA, annB} {
		wg.Go(func() {
			if _, err := whoami(short, v, "ann"); fault.CodeOf(err) != fault.CodeNeedsLogin || !errors.Is(err, host.ErrOwnLogin) {
				t.Errorf("ann on replica %d after her grant was revoked: %v; want her own needs_login", i, err)
			}
		})
	}
	wg.Wait()
	if gs, err := a.Store.Grants(ctx, "sub:ann", as.MCP); err != nil || len(gs) != 0 {
		t.Errorf("the refused grant is still kept: %d, %v", len(gs), err)
	}
}
