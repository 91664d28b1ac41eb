package demo

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/server"
)

// EndpointPath is where ServeHTTP serves MCP.
const EndpointPath = server.DefaultPath

// ServeStdio runs a demo server on stdin/stdout until ctx is done or the
// client disconnects. Both are clean exits and return nil. Stray writes to
// os.Stdout go to stderr meanwhile (see server.Server.ServeStdio).
func ServeStdio(ctx context.Context, version string) error {
	return New(version, nil).ServeStdio(ctx)
}

// ServeHTTP serves a demo server over Streamable HTTP on addr (host:port;
// "127.0.0.1:0" picks a free port) at [EndpointPath] until ctx is done, then
// shuts down gracefully: it stops accepting connections, lets requests in
// flight finish, ends long-lived notification streams, and closes the
// sessions left, within about five seconds (see serveHTTP). ready, if not nil, is called with the
// bound address once the server is listening. It returns nil after a
// shutdown caused by ctx.
//
// Each request is routed by its protocol era to a stateless (2026-07-28) or
// a stateful (2024-11-05…2025-11-25) go-sdk handler (see
// server.Server.Handler). Both keep go-sdk's DNS-rebinding protection.
func ServeHTTP(ctx context.Context, addr, version string, ready func(net.Addr)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("demo: listen: %w", err)
	}
	return serveHTTP(ctx, ln, New(version, nil), ready)
}

// shutdownTimeout bounds how long serveHTTP lets requests in flight finish
// once ctx is done; then it closes every connection and session.
const shutdownTimeout = 5 * time.Second

// serveHTTP serves s's Handler on ln; see ServeHTTP. It closes ln.
//
// It does not use server.Server.Serve, which closes every session before
// shutting the HTTP server down and so fails the calls in flight (legacy and
// 2026-07-28 alike) instead of letting them finish. Here shutdown lets the
// calls finish first, then ends the long-lived legacy GET streams (which
// never end by themselves), and only then closes the sessions left.
func serveHTTP(ctx context.Context, ln net.Listener, s *server.Server, ready func(net.Addr)) error {
	var calls callCount
	streamsCtx, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	endpoint := s.Handler()
	mux := http.NewServeMux()
	mux.Handle(EndpointPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			// A notification stream: ended by endStreams at shutdown.
			rctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			stop := context.AfterFunc(streamsCtx, cancel)
			defer stop()
			endpoint.ServeHTTP(w, r.WithContext(rctx))
			return
		}
		calls.add(1)
		defer calls.add(-1)
		endpoint.ServeHTTP(w, r)
	}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr())
	}

	var err error
	select {
	case err = <-served:
		srv.Close()
		err = fmt.Errorf("demo: serve: %w", err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		shutdown := make(chan error, 1)
		go func() { shutdown <- srv.Shutdown(sctx) }()
		// Keep the streams while calls finish: a legacy client may take a
		// lost stream for a lost session and fail its calls.
		calls.wait(sctx)
		endStreams()
		if <-shutdown != nil {
			srv.Close() // the deadline passed with requests still running
		}
		cancel()
		<-served // http.ErrServerClosed
	}
	// Sessions outlive requests: close those left (idle legacy sessions),
	// so that none of their goroutines outlives this call.
	for ss := range s.MCP().Sessions() {
		ss.Close()
	}
	return err
}

// callCount counts the POST requests in flight.
type callCount struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0; nil when nobody waits
}

func (c *callCount) add(d int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += d
	if c.n == 0 && c.zero != nil {
		close(c.zero)
		c.zero = nil
	}
}

// wait returns when no call is in flight or ctx is done.
func (c *callCount) wait(ctx context.Context) {
	c.mu.Lock()
	if c.n == 0 {
		c.mu.Unlock()
		return
	}
	if c.zero == nil {
		c.zero = make(chan struct{})
	}
	zero := c.zero
	c.mu.Unlock()
	select {
	case <-zero:
	case <-ctx.Done():
	}
}
