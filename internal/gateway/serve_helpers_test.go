package gateway_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
)

// openHost opens a host on cfg with opts, closed when the test ends; its
// changes Sync the gateway handed to the returned function, as serve
// wires them.
func openHost(t testing.TB, cfg *config.Config, opts host.Options) (*host.Host, func(*gateway.Gateway)) {
	t.Helper()
	var gw atomic.Pointer[gateway.Gateway]
	opts.OnChange = func() {
		if g := gw.Load(); g != nil {
			g.Sync()
		}
	}
	h, err := host.Open(context.Background(), cfg, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, gw.Store
}

// serveHTTP serves g over Streamable HTTP on 127.0.0.1:0 with opts until
// the test ends, and returns its base URL (http://host:port).
func serveHTTP(t testing.TB, g *gateway.Gateway, opts gateway.HTTPOptions) string {
	t.Helper()
	ln := listen(t)
	serveOn(t, g, ln, opts)
	return "http://" + ln.Addr().String()
}

// listen is a listener on 127.0.0.1:0, for serveOn when the options need
// the address first.
func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// serveOn serves g on ln with opts until the test ends; the test fails if
// ServeHTTP returns an error.
func serveOn(t testing.TB, g *gateway.Gateway, ln net.Listener, opts gateway.HTTPOptions) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- g.ServeHTTP(ctx, ln, opts)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
}

// inMemory connects a go-sdk client (named "c") speaking version (""
// for the latest) to g over in-memory transports, the way `serve --stdio`
// does over real pipes; both sessions close when the test ends.
func inMemory(t testing.TB, g *gateway.Gateway, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := g.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
