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
	got    chan redirectResult // one result, buffered

	mu      sync.Mutex
	state   string // guarded by mu; the state the redirect must carry, "" before Expect
	arrived func() // guarded by mu; called once a redirect carrying a code has been taken
	once    sync.Once
	done    chan struct{} // closed when Serve has returned
	taken   chan struct{} // closed when Wait has returned the redirect
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
	r.state = state
	r.mu.Unlock()
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
	want, arrived := r.state, r.arrived
	r.mu.Unlock()
	if !tokencmp.Equal(q.Get("state"), want) {
		// Not the redirect of this login: any local request may reach
		// the listener, and none but the real one ends the login.
		http.Error(w, "not the redirect of this login", http.StatusBadRequest)
		return
	}
	var res redirectResult
	switch {
	case q.Get("error") != "":
		// The error code only: a description is the server's text.
		res.err = fmt.Errorf("the authorization server refused the login: %q", truncate(q.Get("error"), 64))
	case q.Get("code") == "":
		http.Error(w, "no authorization code", http.StatusBadRequest)
		return
	default:
		res.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	}
	first := false
	r.once.Do(func() { first = true; r.got <- res })
	if !first {
		http.Error(w, "this login is already complete", http.StatusGone)
		return
	}
	if res.err == nil && arrived != nil {
		arrived()
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if res.err != nil {
		fmt.Fprintln(w, "Switchboard: the login failed. You can close this window.")
		return
	}
	fmt.Fprintln(w, "Switchboard: logged in. You can close this window.")
}

// Wait returns what the redirect carried, or ctx's error.
func (r *Redirect) Wait(ctx context.Context) (*auth.AuthorizationResult, error) {
	select {
	case res := <-r.got:
		close(r.taken)
		return res.res, res.err
	case <-r.taken:
		// A flow that asks again after the redirect came (go-sdk's
		// retry of a refused login) gets no second one.
		return nil, errors.New("the login's redirect has already come")
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the login in the browser: %w", ctx.Err())
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
