package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// EndpointPath is where ServeHTTP serves MCP.
	EndpointPath = "/mcp"

	// sessionlessVersion is the first protocol version of the sessionless era
	// (SEP-2575), served only by a stateless go-sdk handler.
	sessionlessVersion = "2026-07-28"

	// sessionTimeout closes legacy sessions that have had no request for this
	// long, so that clients that vanish without a DELETE do not leak them.
	sessionTimeout = 10 * time.Minute

	// shutdownTimeout bounds how long ServeHTTP lets in-flight requests finish
	// once ctx is done; then it closes every connection and session.
	shutdownTimeout = 5 * time.Second

	// handlerExitTimeout bounds the wait for handlers still running after a
	// forced close; they have been cancelled by then and return promptly.
	handlerExitTimeout = 2 * time.Second

	// readHeaderTimeout bounds a client's request headers (slowloris).
	readHeaderTimeout = 10 * time.Second

	protocolVersionHeader = "Mcp-Protocol-Version"
	methodHeader          = "Mcp-Method"
)

// ServeStdio runs a demo server on stdin/stdout until ctx is done or the
// client disconnects. Both are clean exits and return nil.
func ServeStdio(ctx context.Context, version string) error {
	err := New(version, nil).Run(ctx, &mcp.StdioTransport{})
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// ServeHTTP serves a demo server over Streamable HTTP on addr (host:port;
// "127.0.0.1:0" picks a free port) at [EndpointPath] until ctx is done, then
// shuts down gracefully: it stops accepting connections, lets requests in
// flight finish, ends long-lived notification streams, and closes the
// sessions left, all within about seven seconds (shutdownTimeout, then
// handlerExitTimeout for handlers that had to be cut off). ready, if not nil,
// is called with the bound address once the server is listening. It returns
// nil after a shutdown caused by ctx.
//
// # Protocol eras
//
// go-sdk v1.8.0 can serve the sessionless 2026-07-28 protocol (SEP-2575) only
// from a stateless handler (StreamableServerTransport.SupportsProtocolVersion
// in mcp/streamable.go), and the earlier, session-based protocols (initialize,
// Mcp-Session-Id, the GET stream, server-to-client requests) only from a
// stateful one. So each request is routed by its Mcp-Protocol-Version header:
// "2026-07-28" or later goes to a stateless handler, anything else (older
// versions, or no header, as on a legacy initialize) to a stateful handler.
//
// The header alone is enough, which is simpler than also peeking at request
// bodies for server/discover:
//
//   - go-sdk's client sets the header on every request of the new era, from
//     the request's _meta protocolVersion, server/discover included
//     (streamableClientConn.setMCPHeaders), and go-sdk's server requires it
//     there: a request whose _meta names a version but lacks the header is
//     refused by either handler (HeaderMismatch; the stateful one refuses
//     methods other than server/discover earlier, with
//     UnsupportedProtocolVersion), so a server/discover known only from its
//     body can never succeed and gains nothing from being routed.
//   - A legacy client sends no such header (or an older version).
//   - Sent to a stateful handler, a 2026-07-28 call is refused with
//     UnsupportedProtocolVersion, and server/discover, which it exempts from
//     that, answers with legacy versions only; a modern client then falls back
//     to initialize at 2025-11-25. Routing is what lets it get 2026-07-28.
//   - The comparison is the string comparison go-sdk itself uses, so the two
//     handlers agree with the router on which era a request is in.
//
// Both handlers keep go-sdk's DNS-rebinding protection: a request that
// reaches a loopback address with a non-loopback Host header gets 403.
func ServeHTTP(ctx context.Context, addr, version string, ready func(net.Addr)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("demo: listen: %w", err)
	}
	return serveHTTP(ctx, ln, New(version, nil), ready)
}

// serveHTTP serves server on ln; see ServeHTTP. It closes ln.
func serveHTTP(ctx context.Context, ln net.Listener, server *mcp.Server, ready func(net.Addr)) error {
	t := newRequestTracker()
	defer t.endStreams()
	mux := http.NewServeMux()
	mux.Handle(EndpointPath, t.wrap(newEraRouter(server)))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout, ConnState: t.connState}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr())
	}

	var err error
	select {
	case err = <-served:
		// Serve only returns early if accepting failed.
		srv.Close()
		err = fmt.Errorf("demo: serve: %w", err)
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
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

// newEraRouter returns the handler of EndpointPath: it sends each request to
// a stateless or a stateful go-sdk handler by its protocol era, as described
// on ServeHTTP.
func newEraRouter(server *mcp.Server) http.Handler {
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
		if isSessionless(r) {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// isSessionless reports whether r belongs to the sessionless (>= 2026-07-28)
// protocol era. Protocol versions are dates, so they compare as strings; an
// absent header compares less than any version.
func isSessionless(r *http.Request) bool {
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
