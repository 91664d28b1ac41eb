package demo

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/mcphttp"
)

// EndpointPath is where ServeHTTP serves MCP.
const EndpointPath = mcphttp.DefaultPath

// Kept for the tests, which check shutdown bounds and routing.
var (
	shutdownTimeout = mcphttp.ShutdownTimeout
	isSessionless   = mcphttp.IsSessionless
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
// sessions left, all within about seven seconds (see mcphttp.Serve). ready, if not nil,
// is called with the bound address once the server is listening. It returns
// nil after a shutdown caused by ctx.
//
// Each request is routed by its protocol era to a stateless (2026-07-28) or
// a stateful (2024-11-05…2025-11-25) go-sdk handler; package mcphttp says
// why. Both keep go-sdk's DNS-rebinding protection.
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
	return mcphttp.Serve(ctx, ln, server, &mcphttp.Options{Path: EndpointPath, Ready: ready})
}
