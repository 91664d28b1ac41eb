package demo

import (
	"context"
	"fmt"
	"net"

	"github.com/switchboard-mcp/switchboard/server"
)

// EndpointPath is where ServeHTTP serves MCP.
const EndpointPath = server.DefaultPath

// ServeStdio runs a demo server on stdin/stdout until ctx is done or the
// client disconnects. Both are clean exits and return nil. Stray writes to
// stdout go to stderr meanwhile (see server.Server.ServeStdio).
func ServeStdio(ctx context.Context, version string) error {
	return New(version, nil).ServeStdio(ctx)
}

// ServeHTTP serves a demo server over Streamable HTTP on addr (host:port;
// "127.0.0.1:0" picks a free port) at [EndpointPath] until ctx is done, then
// shuts down gracefully, as server.Server.Serve does: it stops accepting,
// lets requests in flight finish, ends long-lived notification streams, and
// closes the sessions left, within server.DefaultShutdownTimeout. ready, if
// not nil, is called with the bound address once the server is listening.
// It returns nil after a shutdown caused by ctx.
//
// Each request is routed by its protocol era to a stateless (2026-07-28) or
// a stateful (2024-11-05…2025-11-25) go-sdk handler (see
// server.Server.Handler). Both keep go-sdk's DNS-rebinding protection.
func ServeHTTP(ctx context.Context, addr, version string, ready func(net.Addr)) error {
	if err := New(version, nil).ListenAndServe(ctx, addr, ready); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}
