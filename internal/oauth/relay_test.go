package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// memRelay is a Relay in memory, shared by the Callbacks of a test as
// processes share a store. down makes every use fail.
type memRelay struct {
	mu    sync.Mutex
	down  bool
	kept  map[string]string           // state → "server/caller"
	redir map[string]*RelayedRedirect // state → its redirect once arrived
}

func newMemRelay() *memRelay {
	return &memRelay{kept: map[string]string{}, redir: map[string]*RelayedRedirect{}}
}

func (m *memRelay) Open(_ context.Context, state, server, caller string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.down {
		m.kept[state] = server + "/" + caller
	}
}

func (m *memRelay) Arrive(_ context.Context, state string, rr RelayedRedirect) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.down:
		return errors.New("the store is down")
	case m.kept[state] == "":
		return ErrNoLogin
	case m.redir[state] != nil:
		return ErrLoginArrived
	}
	m.redir[state] = &rr
	return nil
}

func (m *memRelay) Take(_ context.Context, state string) (*RelayedRedirect, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rr := m.redir[state]
	if rr != nil && !m.down {
		delete(m.kept, state)
		delete(m.redir, state)
		return rr, nil
	}
	return nil, nil
}

func (m *memRelay) Close(_ context.Context, state string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.kept, state)
	delete(m.redir, state)
}

func (m *memRelay) setDown(down bool) {
	m.mu.Lock()
	m.down = down
	m.mu.Unlock()
}

// TestCallbackRelay: with a Relay shared by two processes' Callbacks, a
// login started in one takes the redirect that reaches the other (its
// OnArrival called there, in the process whose login it is); one redirect
// per login is taken, whichever process the others reach (410); a state
// no login waits for is refused (400); a login whose record the Relay
// lacks still takes a redirect that reaches its own process; with the
// Relay down, a redirect for another process's login is answered 503,
// and taken when the same redirect comes again.
func TestCallbackRelay(t *testing.T) {
	relay := newMemRelay()
	one, two := NewCallback("https://gw.example/oauth/callback"), NewCallback("https://gw.example/oauth/callback")
	one.Relay, two.Relay = relay, relay
	get := func(cb *Callback, query string) (int, string) {
		t.Helper()
		w := httptest.NewRecorder()
		cb.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/oauth/callback?"+query, nil))
		return w.Code, w.Body.String()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	a := one.redirect("gh", "sub:ann")
	defer a.Close()
	arrived := make(chan struct{})
	a.OnArrival(func() { close(arrived) })
	a.Expect("https://as.example/authorize?state=SA")
	if relay.kept["SA"] != "gh/sub:ann" {
		t.Fatalf("the relay keeps %q for SA; want ann's login to gh", relay.kept["SA"])
	}
	for _, tc := range []struct {
		cb          *Callback
		query, page string
		want        int
	}{
		{two, "code=forged&state=SX", "not the redirect of this login\n", http.StatusBadRequest},
		{two, "state=SA", "not the redirect of this login\n", http.StatusBadRequest},
		{two, "code=ca&state=SA&iss=https%3A%2F%2Fas.example", "Switchboard: logged in. You can close this window.\n", http.StatusOK},
		{two, "code=again&state=SA", "this login is already complete\n", http.StatusGone},
		{one, "code=again&state=SA", "this login is already complete\n", http.StatusGone},
	} {
		if got, page := get(tc.cb, tc.query); got != tc.want || page != tc.page {
			t.Errorf("%s: %d %q; want %d %q", tc.query, got, page, tc.want, tc.page)
		}
	}
	res, err := a.Wait(ctx)
	if err != nil || res.Code != "ca" || res.State != "SA" || res.Iss != "https://as.example" {
		t.Fatalf("Wait = %+v, %v; want the redirect that reached the other process", res, err)
	}
	select {
	case <-arrived:
	default:
		t.Error("OnArrival was not called in the login's process")
	}
	a.Close()
	if len(relay.kept) != 0 {
		t.Errorf("the relay still keeps %v", relay.kept)
	}

	// The login's record is missing: its own process takes it.
	relay.setDown(true)
	b := one.redirect("gh", "")
	defer b.Close()
	b.Expect("https://as.example/authorize?state=SB")
	relay.setDown(false)
	if got, page := get(two, "code=cb&state=SB"); got != http.StatusBadRequest {
		t.Errorf("a login the relay lacks, on the other process: %d %q; want 400", got, page)
	}
	if got, _ := get(one, "code=cb&state=SB"); got != http.StatusOK {
		t.Errorf("a login the relay lacks, on its own process: %d; want 200", got)
	}
	if res, err := b.Wait(ctx); err != nil || res.Code != "cb" {
		t.Fatalf("Wait = %+v, %v", res, err)
	}

	// The relay down: 503, and the same redirect again once it is back.
	c := one.redirect("gh", "bob")
	defer c.Close()
	c.Expect("https://as.example/authorize?state=SC")
	relay.setDown(true)
	if got, _ := get(two, "code=cc&state=SC"); got != http.StatusServiceUnavailable {
		t.Errorf("the relay down: %d; want 503", got)
	}
	relay.setDown(false)
	if got, _ := get(two, "error=access_denied&state=SC"); got != http.StatusOK {
		t.Errorf("the refusal after the relay came back: %d; want 200", got)
	}
	if _, err := c.Wait(ctx); err == nil || err.Error() != `the authorization server refused the login: "access_denied"` {
		t.Fatalf("Wait = %v; want the refusal", err)
	}
	if _, err := c.Wait(ctx); err == nil || err.Error() != `the authorization server refused the login: "access_denied"` {
		t.Fatalf("Wait again = %v; want the same refusal", err)
	}

	// A flow that asks again: the first authorization URL's record goes.
	d := one.redirect("gh", "eve")
	defer d.Close()
	d.Expect("https://as.example/authorize?state=SD1")
	d.Expect("https://as.example/authorize?state=SD2")
	relay.mu.Lock()
	_, first := relay.kept["SD1"]
	_, second := relay.kept["SD2"]
	relay.mu.Unlock()
	if first || !second {
		t.Fatalf("the relay keeps SD1 %v, SD2 %v; want the second alone", first, second)
	}
}
