package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboard-mcp/switchboard/internal/tokencmp"
)

// Redirect receives an authorization server's redirect at the end of a
// login. It takes the first redirect only. Most are a loopback listener
// (RFC 8252 section 7.3): bound to 127.0.0.1 on a port of the system's
// choice before the flow starts, so the redirect URL is known when the
// client registers. A routed one is fed by a Callback's handler instead.
type Redirect struct {
	// URL is the redirect URL: http://127.0.0.1:PORT/callback, or a
	// Callback's URL.
	URL string

	srv    *http.Server        // nil when routed
	routes *Callback           // the Callback that feeds it when routed, else nil
	server string              // the server logged in to, when routed
	caller string              // whose login it is when routed, "" for the operator's
	got    chan redirectResult // one result, buffered

	mu      sync.Mutex
	state   string // guarded by mu; the state the redirect must carry, "" before Expect
	arrived func() // guarded by mu; called once a redirect carrying a code has been taken
	once    sync.Once
	done    chan struct{} // closed when Serve has returned
	taken   chan struct{} // closed when Wait has returned the redirect
	failed  error         // set before taken is closed: the error Wait returned with the redirect, nil for a code
}

type redirectResult struct {
	res *auth.AuthorizationResult
	err error
}

// ListenRedirect binds the listener.
func ListenRedirect() (*Redirect, error) { return listenRedirect("127.0.0.1:0") }

// listenRedirect binds the listener to addr, a 127.0.0.1 address.
func listenRedirect(addr string) (*Redirect, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("the redirect listener: %w", err)
	}
	r := &Redirect{URL: "http://" + ln.Addr().String() + "/callback", got: make(chan redirectResult, 1), done: make(chan struct{}), taken: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", r.callback)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(r.done)
		r.srv.Serve(ln) //nolint:errcheck // ErrServerClosed after Close
	}()
	return r, nil
}

// Expect arms the listener for the login at authURL: only a redirect
// carrying authURL's state is taken. It is called before the browser is
// sent there.
func (r *Redirect) Expect(authURL string) {
	state := ""
	if u, err := url.Parse(authURL); err == nil {
		state = u.Query().Get("state")
	}
	r.mu.Lock()
	prev := r.state
	r.state = state
	r.mu.Unlock()
	if r.routes != nil && r.routes.Relay != nil {
		ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
		defer cancel()
		if prev != "" && prev != state {
			r.routes.Relay.Close(ctx, prev) // a flow that asked again: the first authorization URL is void
		}
		if state != "" {
			r.routes.Relay.Open(ctx, state, r.server, r.caller)
		}
	}
}

// OnArrival sets f to be called when the redirect has come with an
// authorization code, before the browser is answered: whoever follows
// the redirect sees the login's arrival once its page has loaded.
func (r *Redirect) OnArrival(f func()) {
	r.mu.Lock()
	r.arrived = f
	r.mu.Unlock()
}

func (r *Redirect) callback(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	r.mu.Lock()
	want := r.state
	r.mu.Unlock()
	if !tokencmp.Equal(q.Get("state"), want) {
		// Not the redirect of this login: any local request may reach
		// the listener, and none but the real one ends the login.
		http.Error(w, "not the redirect of this login", http.StatusBadRequest)
		return
	}
	rr, ok := relayedOf(q)
	if !ok {
		http.Error(w, "no authorization code", http.StatusBadRequest)
		return
	}
	res := rr.result()
	if !r.deliver(res) {
		http.Error(w, "this login is already complete", http.StatusGone)
		return
	}
	answer(w, res.err)
}

// RelayedRedirect is what an authorization server's redirect carried:
// the code, state and iss, or the error code of a refused login.
type RelayedRedirect struct {
	Code, State, Iss string
	Error            string `json:",omitempty"`
}

// relayedOf is what the redirect's query q carried; false when it
// carried neither a code nor an error.
func relayedOf(q url.Values) (RelayedRedirect, bool) {
	switch {
	case q.Get("error") != "":
		// The error code only: a description is the server's text.
		return RelayedRedirect{State: q.Get("state"), Error: truncate(q.Get("error"), 64)}, true
	case q.Get("code") == "":
		return RelayedRedirect{}, false
	}
	return RelayedRedirect{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, true
}

func (rr RelayedRedirect) result() redirectResult {
	if rr.Error != "" {
		return redirectResult{err: fmt.Errorf("the authorization server refused the login: %q", truncate(rr.Error, 64))}
	}
	return redirectResult{res: &auth.AuthorizationResult{Code: rr.Code, State: rr.State, Iss: rr.Iss}}
}

// deliver hands res to Wait, the first result only, and then, when it
// carries a code, calls the OnArrival function. It reports whether res
// was the first.
func (r *Redirect) deliver(res redirectResult) bool {
	first := false
	r.once.Do(func() { first = true; r.got <- res })
	if !first {
		return false
	}
	r.mu.Lock()
	arrived := r.arrived
	r.mu.Unlock()
	if res.err == nil && arrived != nil {
		arrived()
	}
	return true
}

// answer is the page the browser is shown once its redirect is taken.
func answer(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err != nil {
		fmt.Fprintln(w, "Switchboard: the login failed. You can close this window.")
		return
	}
	fmt.Fprintln(w, "Switchboard: logged in. You can close this window.")
}

// Wait returns what the redirect carried, or ctx's error. A routed
// Redirect whose Callback has a Relay also takes the redirect another
// process recorded there, looking every relayPoll.
func (r *Redirect) Wait(ctx context.Context) (*auth.AuthorizationResult, error) {
	var poll <-chan time.Time
	if r.routes != nil && r.routes.Relay != nil {
		t := time.NewTicker(relayPoll)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case res := <-r.got:
			r.failed = res.err
			close(r.taken)
			return res.res, res.err
		case <-r.taken:
			// A flow that asks again after the redirect came (go-sdk's
			// retry of a refused login) gets no second one, but the
			// reason the first failed, when it did.
			if r.failed != nil {
				return nil, r.failed
			}
			return nil, errors.New("the login's redirect has already come")
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the login in the browser: %w", ctx.Err())
		case <-poll:
			r.mu.Lock()
			state := r.state
			r.mu.Unlock()
			if state == "" {
				continue
			}
			switch rr, err := r.routes.Relay.Take(ctx, state); {
			case err != nil:
				r.deliver(redirectResult{err: err}) // read from got at the next turn
			case rr != nil:
				r.deliver(rr.result())
			}
		}
	}
}

// Close stops the listener and waits for it; a routed Redirect takes no
// redirect from then on.
func (r *Redirect) Close() error {
	if r.routes != nil {
		r.routes.forget(r)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	<-r.done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
