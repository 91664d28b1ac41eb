package upstream

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestHTTPConnectionReuse: calls one after another to a Streamable HTTP
// server that answers with event streams travel on the connections
// already open. go-sdk reads a call's stream to its end after handing
// over the answer, while the call's caller ends the call's context; the
// stream must outlive that, or its connection is closed and the next call
// dials a new one.
func TestHTTPConnectionReuse(t *testing.T) {
	for _, json := range []bool{false, true} {
		name := map[bool]string{false: "event stream", true: "json"}[json]
		t.Run(name, func(t *testing.T) {
			var conns atomic.Int64
			srv := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testkit.NewServer() },
				&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: json}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()
			c := dialTrusted(t, srv.URL)
			before := conns.Load()
			const calls = 400
			for range calls {
				if _, err := c.CallTool(context.Background(), "echo", []byte(`{"text":"x"}`), nil); err != nil {
					t.Fatal(err)
				}
			}
			// Without reuse every call dials. On a busy machine the
			// previous call's stream may now and then still be finishing
			// when the next call starts, which takes a second connection.
			if n := conns.Load() - before; n > 4 {
				t.Errorf("%d calls one after another opened %d new connections, want at most 4", calls, n)
			}
		})
	}
}

// TestHTTPCancelledCallEndsItsRequest: a call cancelled before its answer
// ends its HTTP request at once, even when the server ignores the
// cancellation: a response stream outlives its call's context only once
// the answer has been read from it.
func TestHTTPCancelledCallEndsItsRequest(t *testing.T) {
	release := make(chan struct{})
	stubborn := mcp.NewServer(&mcp.Implementation{Name: "stubborn", Version: "1"}, nil)
	mcp.AddTool(stubborn, &mcp.Tool{Name: "sleep"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		<-release // ignores cancellation, answering only once the test is over
		return &mcp.CallToolResult{}, nil, nil
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return stubborn }, &mcp.StreamableHTTPOptions{Stateless: true})
	ended := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			go func() {
				<-r.Context().Done()
				ended <- struct{}{}
			}()
		}
		handler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer close(release)
	c := dialTrusted(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	called := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "sleep", nil, nil)
		called <- err
	}()
	select {
	case err := <-called:
		if err == nil {
			t.Fatal("a call cancelled after 200 ms of a tool that never answers succeeded")
		}
	case <-time.After(time.Minute):
		t.Fatal("a call cancelled after 200 ms was still waiting a minute later")
	}
	// The tool answers only once the test is over, so only the client
	// can have ended the request.
	select {
	case <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the call's HTTP request outlived its cancelled call by a minute")
	}
}

// dialTrusted connects to the Streamable HTTP server at url as a trusted
// server "s"; the connection closes with the test.
func dialTrusted(t *testing.T, url string) *Conn {
	t.Helper()
	cfg, err := config.Parse([]byte(`{"mcpServers":{"s":{"url":"`+url+`","trust":"trusted"}}}`), "t.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(context.Background(), cfg.Servers[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
