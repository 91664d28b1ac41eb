package oauth

import (
	"net/http"
	"sync"

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
type Callback struct {
	// URL is the redirect URL every login registers and is sent back to:
	// the gateway's public URL followed by the path its front door
	// serves the Callback at.
	URL string

	mu      sync.Mutex
	pending map[*Redirect]struct{} // guarded by mu; the logins waiting for a redirect
}

// NewCallback is a Callback whose redirect URL is url.
func NewCallback(url string) *Callback {
	return &Callback{URL: url, pending: make(map[*Redirect]struct{})}
}

// redirect is a routed Redirect: fed by c's handler, not a listener of
// its own. Its Close takes it out of c.
func (c *Callback) redirect() *Redirect {
	r := &Redirect{URL: c.URL, got: make(chan redirectResult, 1), taken: make(chan struct{}), routes: c}
	c.mu.Lock()
	c.pending[r] = struct{}{}
	c.mu.Unlock()
	return r
}

// forget takes r out of c.
func (c *Callback) forget(r *Redirect) {
	c.mu.Lock()
	delete(c.pending, r)
	c.mu.Unlock()
}

// ServeHTTP hands the redirect to the login whose state it carries.
// Every pending login's state is compared in constant time, so that the
// time taken says nothing of any.
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
	if to == nil {
		http.Error(w, "not the redirect of this login", http.StatusBadRequest)
		return
	}
	to.callback(w, req)
}
