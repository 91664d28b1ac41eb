package mcphttp

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// handlerExitTimeout bounds the wait, once the calls left at the
	// deadline are cancelled, for the sessions to close and the handlers
	// to return; a handler that respects its ctx returns promptly.
	handlerExitTimeout = 2 * time.Second

	// readHeaderTimeout bounds a client's request headers (slowloris),
	// counted from the connection's first byte or the end of its last
	// request.
	readHeaderTimeout = 10 * time.Second
)

// Defaults of [Options]' connection limits.
const (
	// DefaultIdleTimeout closes a kept-alive connection that has had no
	// request for this long. A request in progress, an event stream
	// included, is never idle.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultBodyTimeout bounds the reading of a request's body, from the
	// end of its headers: 4 MiB at 70 KiB/s.
	DefaultBodyTimeout = time.Minute
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
	// ShutdownTimeout is how long the calls in flight may finish once ctx
	// is done, before they are cancelled; default DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// Sub, when set, serves Path/NAME (one more path segment) with the
	// handler it returns for NAME, or 404 when it returns nil: the
	// gateway's profiles, each a go-sdk server of its own. It must return
	// the same handler for a name every time; Serve shuts each one it got
	// down as it shuts down h.
	Sub func(name string) *Handler
	// IdleTimeout closes a kept-alive connection that has had no request
	// for this long; default DefaultIdleTimeout. There is no write
	// timeout: an event stream (a legacy GET stream, a 2026-07-28
	// subscriptions/listen) stays open however long it is quiet.
	IdleTimeout time.Duration
	// BodyTimeout bounds the reading of each request's body, from the end
	// of its headers, through a read deadline on that request alone;
	// default DefaultBodyTimeout. A body not read by then fails to read,
	// and the connection is closed. Once the body is read the deadline is
	// lifted, so a stream answering the request is not cut.
	BodyTimeout time.Duration
	// ConnContext, when set, is the http.Server's ConnContext: the
	// gateway's front door finds its record of a connection there (see
	// frontdoor.ConnLimit).
	ConnContext func(ctx context.Context, c net.Conn) context.Context
}

// Serve serves h on ln at opts.Path until ctx is done, then shuts down
// gracefully:
//
//  1. it stops accepting connections and requests;
//  2. it lets the calls in flight finish, for up to ShutdownTimeout, while
//     keeping the long-lived streams (a legacy GET stream, a 2026-07-28
//     subscriptions/listen) open, since a legacy client may take a lost
//     stream for a lost session and fail its calls;
//  3. it ends those streams (they never end by themselves), closes the
//     connections that never sent a request (http.Server.Shutdown counts
//     them as busy for their first five seconds), and once the calls are
//     done the idle connections;
//  4. past the deadline, it closes every connection and cancels the calls
//     left: a 2026-07-28 call through its request's ctx, a legacy
//     session's call through the middleware NewHandler installed;
//  5. it closes the server's sessions, and waits a little (two seconds at
//     most) for them to close and for the handlers cut off to return.
//
// The sessions belong to the go-sdk server, not to one Serve: a server
// served on several listeners loses them all when one Serve ends.
//
// It closes ln, and returns nil after a shutdown caused by ctx.
func Serve(ctx context.Context, ln net.Listener, h *Handler, opts *Options) error {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	t := newTracker()
	defer t.endStreams()
	mux := http.NewServeMux()
	mux.Handle(o.Path, h)
	subs := &subHandlers{seen: map[*Handler]bool{}}
	if o.Sub != nil {
		mux.Handle(o.Path+"/{name}", subs.serve(o.Sub))
	}
	var handler http.Handler = mux
	if o.Middleware != nil {
		handler = o.Middleware(mux)
	}
	srv := &http.Server{
		Handler:           bodyDeadline(handler, o.BodyTimeout),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		ConnState:         t.connState,
		ConnContext:       o.ConnContext,
		BaseContext:       func(net.Listener) context.Context { return context.WithValue(context.Background(), trackerKey{}, t) },
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}

	var err error
	select {
	case err = <-served:
		// Serve only returns early if accepting failed.
		srv.Close()
		err = fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), o.ShutdownTimeout)
		shutdown := make(chan error, 1)
		go func() { shutdown <- srv.Shutdown(sctx) }()
		t.calls.wait(sctx)
		t.endStreams()
		t.closeFresh()
		if <-shutdown != nil {
			// The deadline passed with calls still running: cancel them.
			// Closing the connections cancels the 2026-07-28 calls (their
			// handlers' ctx is the request's); the calls of legacy
			// sessions outlive their POST and are cancelled by hand.
			srv.Close()
			for _, hh := range subs.all(h) {
				hh.calls.cancelAll()
			}
		}
		cancel()
		<-served // http.ErrServerClosed
	}

	// Sessions outlive requests: close those left, so that none of their
	// goroutines outlives Serve. Closing a go-sdk session waits for its
	// calls, which are done or cancelled by now, unless a handler ignores
	// its ctx: bounded, as is the wait for the handlers of the requests
	// cut off.
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		for _, hh := range subs.all(h) {
			for ss := range hh.server.Sessions() {
				ss.Close()
			}
		}
	}()
	gctx, cancel := context.WithTimeout(context.Background(), handlerExitTimeout)
	defer cancel()
	select {
	case <-closed:
		t.all.wait(gctx)
	case <-gctx.Done():
	}
	if gctx.Err() != nil {
		h.logger.Warn("mcp: shutdown: handlers still running after cancellation; they ignore their ctx")
	}
	return err
}

// bodyDeadline gives the reading of each request's body d, from the end
// of its headers, through a read deadline on that request's connection. A
// request without a body gets none, so a GET event stream never has a read
// deadline. A body left unread keeps its deadline for the server's own
// draining of it; the next request's headers get a deadline of their own
// (ReadHeaderTimeout).
func bodyDeadline(next http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(d)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts its connection's read deadline when it is read to its
// end, so that whatever answers the request (a 2026-07-28
// subscriptions/listen stream, a long call) runs without one. net/http
// lifts it too when it starts watching the connection for the client going
// away; this does not rely on that.
type deadlineBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// sessionCalls cancels the calls in flight on legacy HTTP sessions, which
// Serve does at its deadline: closing a go-sdk session waits for its calls
// instead of cancelling them.
type sessionCalls struct {
	mu      sync.Mutex
	cancels map[*context.CancelFunc]struct{} // calls in flight on a session with an ID
}

func newSessionCalls() *sessionCalls {
	return &sessionCalls{cancels: map[*context.CancelFunc]struct{}{}}
}

// middleware is a receiving middleware: a request on a session with an ID
// (a legacy HTTP session) runs with a ctx that cancelAll cancels.
func (sc *sessionCalls) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer sc.add(&cancel)()
		}
		return next(ctx, method, req)
	}
}

// add registers a call's cancel function; the function returned cancels
// the call's ctx and unregisters it.
func (sc *sessionCalls) add(cancel *context.CancelFunc) (done func()) {
	sc.mu.Lock()
	sc.cancels[cancel] = struct{}{}
	sc.mu.Unlock()
	return func() {
		sc.mu.Lock()
		delete(sc.cancels, cancel)
		sc.mu.Unlock()
		(*cancel)()
	}
}

// cancelAll cancels every call in flight on a legacy HTTP session.
func (sc *sessionCalls) cancelAll() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for cancel := range sc.cancels {
		(*cancel)()
	}
}

// tracker follows the requests of one Serve, for its shutdown; the Handler
// finds it in the request's context (http.Server.BaseContext), so that a
// Handler mounted elsewhere is simply not tracked.
//
//   - It counts running handlers, so that shutdown can wait for them: the
//     calls (every handler but a stream's) and all of them.
//   - It ends long-lived streams on demand. Streams are the legacy standalone
//     GET stream and the 2026-07-28 subscriptions/listen POST: both only
//     wait for notifications, so ending them loses no work, and go-sdk
//     returns from them when their request context is done.
//   - It closes connections that have not sent a request yet on demand.
//     http.Server.Shutdown counts those as busy for their first five seconds
//     (golang/go#22682), and Go's http.Transport leaves such connections
//     behind whenever a connection it dialled for a request is beaten to it
//     by one that became idle.
type tracker struct {
	streams    context.Context // done when streams must end; fixed
	endStreams context.CancelFunc
	calls      inFlight // running handlers that are not streams
	all        inFlight // every running handler

	mu      sync.Mutex
	fresh   map[net.Conn]bool // connections in http.StateNew
	closing bool              // closeFresh was called: close fresh connections at once
}

type trackerKey struct{}

func newTracker() *tracker {
	t := &tracker{fresh: make(map[net.Conn]bool)}
	t.streams, t.endStreams = context.WithCancel(context.Background())
	return t
}

// track registers r, peeked as p, with the tracker of the Serve that
// received it, if any: a stream (GET, or a 2026-07-28 subscriptions/listen)
// gets a context that ends when the streams must end; anything else counts
// as a call until done is called.
func track(r *http.Request, p peek) (_ *http.Request, done func()) {
	t, ok := r.Context().Value(trackerKey{}).(*tracker)
	if !ok {
		return r, func() {}
	}
	t.all.add()
	if r.Method == http.MethodGet || p.method == "subscriptions/listen" || r.Header.Get(methodHeader) == "subscriptions/listen" {
		ctx, cancel := context.WithCancel(r.Context())
		stop := context.AfterFunc(t.streams, cancel)
		return r.WithContext(ctx), func() { stop(); cancel(); t.all.done() }
	}
	t.calls.add()
	return r, func() { t.calls.done(); t.all.done() }
}

// connState is the http.Server's ConnState hook.
func (t *tracker) connState(c net.Conn, state http.ConnState) {
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
func (t *tracker) closeFresh() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closing = true
	for c := range t.fresh {
		c.Close()
		delete(t.fresh, c)
	}
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

// subHandlers remembers the handlers Options.Sub gave out, so that Serve
// shuts them down too.
type subHandlers struct {
	mu   sync.Mutex
	seen map[*Handler]bool // guarded by mu
}

func (s *subHandlers) serve(sub func(string) *Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hh := sub(r.PathValue("name"))
		if hh == nil {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		s.seen[hh] = true
		s.mu.Unlock()
		hh.ServeHTTP(w, r)
	})
}

// all returns h and the handlers given out.
func (s *subHandlers) all(h *Handler) []*Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*Handler{h}
	for hh := range s.seen {
		if hh != h {
			out = append(out, hh)
		}
	}
	return out
}
