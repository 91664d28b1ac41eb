package oauth

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/tokencmp"
)

// Callback receives logins' redirects through an HTTP server that is
// already serving (the gateway's front door), in place of a loopback
// listener per login: the redirect URL of every login is URL, so the
// person's browser may run on any machine that reaches the gateway. Each
// login waiting for its redirect is a routed Redirect, with the same
// semantics as a listener's (Expect, OnArrival, Wait, the first redirect
// only); the handler hands a redirect to the login whose state it carries
// and answers 400 to one that carries none's. Neither the code nor the
// state is logged or echoed.
//
// With a Relay, the logins wait in a store that every process serving URL
// shares, and a redirect may reach any of them: the one it reaches records
// it there (the first only, across every process), and the process whose
// login it is takes it and finishes the login, its PKCE verifier never
// leaving it.
type Callback struct {
	// URL is the redirect URL every login registers and is sent back to:
	// the gateway's public URL followed by the path its front door
	// serves the Callback at.
	URL string
	// Relay, when set, shares the pending logins with the other
	// processes serving URL. Nil: a redirect must reach the process whose
	// login it is. Set before the first login.
	Relay Relay

	mu      sync.Mutex
	pending map[*Redirect]struct{} // guarded by mu; the logins waiting for a redirect
}

// Relay keeps the logins waiting for a redirect through a Callback where
// every process serving its URL finds them. The login is named by its
// state, which the Relay must not keep in the clear; what a redirect
// carried is a secret (the code) it must keep sealed.
type Relay interface {
	// Open keeps the login whose redirect carries state: caller's login
	// ("" for the operator's) to server. A failure is the Relay's to
	// report: the login still takes a redirect that reaches this process.
	Open(ctx context.Context, state, server, caller string)
	// Arrive records what the redirect carrying state brought, the first
	// redirect only: ErrNoLogin when no login waits for state (none, or
	// abandoned), ErrLoginArrived when a redirect has already come.
	Arrive(ctx context.Context, state string, rr RelayedRedirect) error
	// Take returns what the redirect carrying state brought and forgets
	// the login; nil while none has come (or when the store failed, which
	// the Relay reports). An error says that the redirect came but cannot
	// be read here: the login fails with it.
	Take(ctx context.Context, state string) (*RelayedRedirect, error)
	// Close forgets the login waiting for state.
	Close(ctx context.Context, state string)
}

// The refusals of Relay.Arrive.
var (
	ErrNoLogin      = errors.New("no login waits for this redirect")
	ErrLoginArrived = errors.New("the login's redirect has already come")
)

// relayPoll is how often a login waiting through a Relay looks for its
// redirect there; relayTimeout bounds one use of the Relay.
const (
	relayPoll    = 250 * time.Millisecond
	relayTimeout = 10 * time.Second
)

// NewCallback is a Callback whose redirect URL is url.
func NewCallback(url string) *Callback {
	return &Callback{URL: url, pending: make(map[*Redirect]struct{})}
}

// redirect is a routed Redirect for caller's login to server: fed by c's
// handler, not a listener of its own. Its Close takes it out of c.
func (c *Callback) redirect(server, caller string) *Redirect {
	r := &Redirect{URL: c.URL, got: make(chan redirectResult, 1), taken: make(chan struct{}), routes: c, server: server, caller: caller}
	c.mu.Lock()
	c.pending[r] = struct{}{}
	c.mu.Unlock()
	return r
}

// forget takes r out of c, and out of the Relay.
func (c *Callback) forget(r *Redirect) {
	c.mu.Lock()
	delete(c.pending, r)
	c.mu.Unlock()
	r.mu.Lock()
	state := r.state
	r.mu.Unlock()
	if c.Relay != nil && state != "" {
		ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
		defer cancel()
		c.Relay.Close(ctx, state)
	}
}

// ServeHTTP hands the redirect to the login whose state it carries.
// Every pending login's state is compared in constant time, so that the
// time taken says nothing of any. With a Relay the redirect is recorded
// there first, so that of the redirects for one login, whichever process
// they reach, one is taken.
func (c *Callback) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet {
		// A redirect is a GET; a HEAD (a link checker's) must not take
		// the login the browser then comes to.
		w.Header().Set("Allow", "GET")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	got := req.URL.Query().Get("state")
	var to *Redirect
	c.mu.Lock()
	for r := range c.pending {
		r.mu.Lock()
		want := r.state
		r.mu.Unlock()
		if tokencmp.Equal(got, want) {
			to = r
		}
	}
	c.mu.Unlock()
	rr, ok := relayedOf(req.URL.Query())
	if c.Relay == nil || !ok || len(got) == 0 {
		if to == nil {
			http.Error(w, "not the redirect of this login", http.StatusBadRequest)
			return
		}
		to.callback(w, req)
		return
	}
	err := c.Relay.Arrive(req.Context(), string(got), rr)
	switch {
	case errors.Is(err, ErrLoginArrived):
		http.Error(w, "this login is already complete", http.StatusGone)
	case err != nil && to != nil:
		// Not recorded (the store failed, or the login's record was
		// never made): this process's own login takes it all the same.
		to.callback(w, req)
	case errors.Is(err, ErrNoLogin):
		http.Error(w, "not the redirect of this login", http.StatusBadRequest)
	case err != nil:
		// Nothing has used the code: the same redirect may come again.
		http.Error(w, "the login could not be recorded; reload this page to try again", http.StatusServiceUnavailable)
	default:
		res := rr.result()
		if to != nil && !to.deliver(res) {
			http.Error(w, "this login is already complete", http.StatusGone)
			return
		}
		answer(w, res.err)
	}
}
