// Package mcphttp serves a go-sdk MCP server over Streamable HTTP in both
// protocol eras on one endpoint, and shuts it down gracefully.
//
// go-sdk serves the 2026-07-28 (sessionless) era only from a stateless
// handler and the legacy era (initialize, sessions, server-to-client
// requests) only from a stateful one, so each request is routed by its
// era: a request whose Mcp-Protocol-Version header is 2026-07-28 or later
// goes to the stateless handler, everything else to the stateful one.
//   - A modern client sends the header on every request, server/discover
//     included (go-sdk's setMCPHeaders); a stateful handler alone answers
//     server/discover with legacy versions only, and the client then falls
//     back to initialize at 2025-11-25. Routing is what lets it get
//     2026-07-28.
//   - The comparison is the string comparison go-sdk itself uses, so the
//     two handlers agree with the router on which era a request is in.
//
// Both handlers keep go-sdk's DNS-rebinding protection. Used by the demo
// server and the gateway; it imports no other Switchboard package.
package mcphttp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// DefaultPath is where the MCP endpoint is served by default.
	DefaultPath = "/mcp"

	// sessionlessVersion is the first protocol version of the sessionless era
	// (SEP-2575), served only by a stateless go-sdk handler.
	sessionlessVersion = "2026-07-28"

	// SessionTimeout closes legacy sessions that have had no request for this
	// long, so that clients that vanish without a DELETE do not leak them.
	// As go-sdk counts it: from the end of the session's last POST, none
	// running.
	SessionTimeout = 10 * time.Minute

	// ShutdownTimeout bounds how long Serve lets in-flight requests finish
	// once ctx is done; then it closes every connection and session.
	ShutdownTimeout = 5 * time.Second

	// handlerExitTimeout bounds the wait for handlers still running after a
	// forced close; they have been cancelled by then and return promptly.
	handlerExitTimeout = 2 * time.Second

	// readHeaderTimeout bounds a client's request headers (slowloris).
	readHeaderTimeout = 10 * time.Second

	protocolVersionHeader = "Mcp-Protocol-Version"
	methodHeader          = "Mcp-Method"
)

// Options configure Serve. Nil means defaults.
type Options struct {
	// Path of the MCP endpoint; default DefaultPath.
	Path string
	// Middleware, when set, receives every request (any path) in front of
	// the endpoint handler, which serves only Path: the gateway's front
	// door handles authentication, /healthz and unknown paths there.
	Middleware func(endpoint http.Handler) http.Handler
	// Ready, when set, is called with the bound address once listening.
	Ready func(net.Addr)
}

// Serve serves server on ln until ctx is done, then shuts down gracefully:
// it stops accepting connections, lets requests in flight finish, ends
// long-lived notification streams, and closes the sessions left, all
// within about seven seconds (ShutdownTimeout, then a short wait for
// handlers that had to be cut off). It closes ln and returns nil after a
// shutdown caused by ctx.
func Serve(ctx context.Context, ln net.Listener, server *mcp.Server, opts *Options) error {
	if opts == nil {
		opts = &Options{}
	}
	path := opts.Path
	if path == "" {
		path = DefaultPath
	}
	t := newRequestTracker()
	defer t.endStreams()
	mux := http.NewServeMux()
	mux.Handle(path, t.wrap(NewEraRouter(server, SessionTimeout)))
	var handler http.Handler = mux
	if opts.Middleware != nil {
		handler = opts.Middleware(mux)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: readHeaderTimeout, ConnState: t.connState}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if opts.Ready != nil {
		opts.Ready(ln.Addr())
	}

	var err error
	select {
	case err = <-served:
		// Serve only returns early if accepting failed.
		srv.Close()
		err = fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		shutdownErr := make(chan error, 1)
		go func() { shutdownErr <- srv.Shutdown(shutdownCtx) }()
		// Shutdown stops accepting connections and closes idle ones. Keep the
		// long-lived streams until the calls in flight are done, since a
		// legacy client may take a lost stream for a lost session and fail
		// its calls; then end them, and close the connections that never
		// sent a request, or Shutdown would wait for its deadline.
		t.calls.wait(shutdownCtx)
		t.endStreams()
		t.closeFresh()
		if <-shutdownErr != nil {
			// The deadline passed with requests still running: drop them.
			srv.Close()
		}
		cancel()
		<-served // http.ErrServerClosed
	}

	// Sessions outlive HTTP requests: close those that are left (idle legacy
	// sessions, and after a forced close any whose requests were cut off), so
	// that none of their goroutines outlives this call. Closing a session also
	// cancels its in-flight handlers, which lets the wait below end promptly.
	for ss := range server.Sessions() {
		ss.Close()
	}
	exitCtx, cancel := context.WithTimeout(context.Background(), handlerExitTimeout)
	defer cancel()
	t.all.wait(exitCtx)
	return err
}

// NewEraRouter returns the endpoint handler: it sends each request to a
// stateless or a stateful go-sdk handler by its protocol era (see the
// package documentation). The stateful handler closes sessions idle for
// sessionTimeout; zero means never.
func NewEraRouter(server *mcp.Server, sessionTimeout time.Duration) http.Handler {
	getServer := func(*http.Request) *mcp.Server { return server }
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless: true,
		// The POST is the whole request in this era: when the client goes
		// away, cancel the handler (this is how slow is cancelled).
		PropagateRequestCancellation: true,
	})
	stateful := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		SessionTimeout: sessionTimeout,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if IsSessionless(r) {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// IsSessionless reports whether r belongs to the sessionless (>= 2026-07-28)
// protocol era. Protocol versions are dates, so they compare as strings; an
// absent header compares less than any version.
func IsSessionless(r *http.Request) bool {
	return r.Header.Get(protocolVersionHeader) >= sessionlessVersion
}

// requestTracker tracks what a graceful shutdown must wait for or end:
//
//   - It counts running handlers, so that shutdown can wait for them.
//   - It ends long-lived streams on demand. Streams are the legacy standalone
//     GET stream and the 2026-07-28 subscriptions/listen POST (go-sdk checks
//     that the Mcp-Method header matches the body): both only wait for
//     notifications, so ending them loses no work, and go-sdk returns from
//     them when their request context is done.
//   - It closes connections that have not sent a request yet on demand.
//     http.Server.Shutdown counts those as busy for their first five seconds
//     (golang/go#22682), and Go's http.Transport leaves such connections
//     behind whenever a connection it dialled for a request is beaten to it
//     by one that became idle.
type requestTracker struct {
	streams    context.Context // done when streams must end
	endStreams context.CancelFunc
	calls      inFlight // running handlers that are not streams
	all        inFlight // every running handler

	mu      sync.Mutex
	fresh   map[net.Conn]bool // connections in http.StateNew
	closing bool              // closeFresh was called: close fresh connections at once
}

func newRequestTracker() *requestTracker {
	t := &requestTracker{fresh: make(map[net.Conn]bool)}
	t.streams, t.endStreams = context.WithCancel(context.Background())
	return t
}

// connState is the http.Server's ConnState hook.
func (t *requestTracker) connState(c net.Conn, state http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if state != http.StateNew {
		delete(t.fresh, c)
		return
	}
	if t.closing {
		c.Close()
		return
	}
	t.fresh[c] = true
}

// closeFresh closes the connections that have not sent a request, now and
// from now on. A request racing with it fails as if it had come after the
// listener closed.
func (t *requestTracker) closeFresh() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closing = true
	for c := range t.fresh {
		c.Close()
		delete(t.fresh, c)
	}
}

// wrap returns h, tracked.
func (t *requestTracker) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.all.add()
		defer t.all.done()
		if r.Method == http.MethodGet || r.Header.Get(methodHeader) == "subscriptions/listen" {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			stop := context.AfterFunc(t.streams, cancel)
			defer stop()
			r = r.WithContext(ctx)
		} else {
			t.calls.add()
			defer t.calls.done()
		}
		h.ServeHTTP(w, r)
	})
}

// inFlight counts running handlers so that teardown can wait for them. Unlike
// a sync.WaitGroup it may be added to while someone waits, which a handler
// that starts during a forced close can do, and its wait has a deadline.
type inFlight struct {
	mu   sync.Mutex
	n    int           // running handlers
	zero chan struct{} // if not nil, closed when n drops to 0
}

func (f *inFlight) add() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
}

func (f *inFlight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.n == 0 && f.zero != nil {
		close(f.zero)
		f.zero = nil
	}
}

// wait waits until no handler runs or ctx is done, and reports whether none
// runs.
func (f *inFlight) wait(ctx context.Context) bool {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return true
	}
	if f.zero == nil {
		f.zero = make(chan struct{})
	}
	zero := f.zero
	f.mu.Unlock()

	select {
	case <-zero:
		return true
	case <-ctx.Done():
		return false
	}
}
