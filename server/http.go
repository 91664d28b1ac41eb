package server

import (
	"context"
	"fmt"
	"net"
	"net/http"

	"github.com/switchboard-mcp/switchboard/internal/mcphttp"
)

// Handler returns the Streamable HTTP endpoint handler, serving both eras
// on one URL (mount it at any path). Each request is routed by its era:
//
//   - A request is modern when its _meta protocol version or its
//     Mcp-Protocol-Version header names a version outside the legacy list
//     ([IsLegacyVersion]). It goes to a stateless go-sdk handler, which
//     checks the Mcp-* headers (-32020 on a mismatch) and maps protocol
//     errors to HTTP statuses (404 with -32601 for an unknown method, ping
//     included). A version the server does not serve gets 400 with -32022
//     and the supported list, or, when the server serves legacy versions
//     only, a plain 400 so that a dual-era client falls back to
//     initialize. The answer is application/json, upgraded to
//     text/event-stream when the request's _meta carries a progress token
//     or a log level, so that progress and log messages can precede the
//     result. GET and DELETE get 405: there is no stream or session in
//     this era.
//   - Anything else (initialize, and requests of a legacy session) goes
//     to a stateful go-sdk handler, which keeps sessions (Mcp-Session-Id).
//     A POST carrying one call is answered application/json too, unless
//     its _meta carries a progress token or the server sends something
//     in the call's course (a log message, or a sampling or elicitation
//     request to the client): then the answer is an event stream carrying
//     those first, then the result, so that server-to-client requests
//     reach the client on the call's own stream, which a legacy client
//     always reads. GET and DELETE without a session id get 405.
//
// A request body over 4 MiB gets 413. At most 4096 legacy sessions are
// open at once: a new one past that closes the idlest (no call running,
// oldest last request). The gateway serves HTTP through the same handler
// (Switchboard's internal/mcphttp).
func (s *Server) Handler() http.Handler { return s.http }

// Serve serves the server over Streamable HTTP at Options.Path on ln
// until ctx is done, then shuts down gracefully:
//
//  1. it stops accepting connections and requests;
//  2. it lets the calls in flight finish, for up to
//     Options.ShutdownTimeout, while keeping the long-lived streams (a
//     legacy GET, a 2026-07-28 subscriptions/listen) open, since a legacy
//     client may take a lost stream for a lost session and fail its calls;
//  3. it ends those streams (they never end by themselves), closes the
//     connections that never sent a request, and once the calls are done
//     the idle connections;
//  4. past the deadline, it closes every connection and cancels the calls
//     left (their handlers' ctx is done);
//  5. it closes the server's legacy sessions, and waits a little (two
//     seconds at most) for them to close and for the handlers of cancelled
//     calls to return.
//
// The legacy sessions belong to the server, not to one Serve: a server
// served on several listeners loses them all when one Serve ends.
//
// A kept-alive connection with no request is closed after two minutes, a
// request's headers must arrive within 10 seconds and its body within a
// minute; an event stream is never cut however long it is quiet.
//
// It closes ln, and returns nil after a shutdown caused by ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return mcphttp.Serve(ctx, ln, s.http, &mcphttp.Options{Path: s.opts.Path, ShutdownTimeout: s.opts.ShutdownTimeout})
}

// ListenAndServe listens on addr (host:port; "127.0.0.1:0" picks a free
// port) and calls Serve. ready, if not nil, gets the bound address.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(net.Addr)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	return s.Serve(ctx, ln)
}
