package server

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// served is a server running Serve on 127.0.0.1:0.
type served struct {
	url  string
	stop func() error // cancels Serve's ctx and returns what Serve returned
}

// startServe runs s.ListenAndServe with a ctx derived from parent until
// stop is called or t ends.
func startServe(t *testing.T, parent context.Context, s *Server) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(parent)
	addr := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- s.ListenAndServe(ctx, "127.0.0.1:0", func(a net.Addr) { addr <- a }) }()
	var sv served
	select {
	case a := <-addr:
		sv.url = "http://" + a.String() + DefaultPath
	case err := <-errc:
		cancel()
		t.Fatalf("ListenAndServe: %v", err)
	}
	stopped := false
	var err error
	sv.stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			select {
			case err = <-errc:
			case <-time.After(time.Minute): // a guard against a hang, not a measure
				t.Fatal("Serve did not return within a minute of its ctx being done")
			}
		}
		return err
	}
	t.Cleanup(func() {
		if err := sv.stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &sv
}

// connectNoStream connects a go-sdk client that opens no standalone event
// stream: a legacy client that loses that stream fails its session, and
// with it any call whose answer it has not read yet, which would make the
// shutdown tests depend on the order in which the client reads two
// connections.
func connectNoStream(t *testing.T, url, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0.1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestServeShutdown checks Serve's graceful shutdown in both eras: a call
// in flight when ctx is done finishes and its answer arrives; a call that
// outlives Options.ShutdownTimeout is cancelled (its handler's ctx is
// done); and Serve returns nil.
func TestServeShutdown(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name+"/call finishes", func(t *testing.T) {
			// The tool returns once Serve's ctx is done: while Serve shuts
			// down.
			stopping, stop := context.WithCancel(context.Background())
			defer stop()
			started := make(chan struct{}, 1)
			s := New("shutdown", "1", &Options{ShutdownTimeout: time.Hour})
			MustAddTool(s, Tool{Name: "until_shutdown", Description: "Waits for the shutdown."}, func(ctx context.Context, _ noArgs) (Content, error) {
				started <- struct{}{}
				select {
				case <-stopping.Done(): // Serve's ctx: shutdown has begun
					return Text("finished"), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			})
			sv := startServe(t, stopping, s)
			cs := connectNoStream(t, sv.url, era.version)
			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "until_shutdown"})
				done <- outcome{res, err}
			}()
			<-started
			stop() // Serve's ctx
			if err := sv.stop(); err != nil {
				t.Errorf("Serve = %v, want nil", err)
			}
			o := <-done
			if o.err != nil || text(o.res) != "finished" {
				t.Errorf("call in flight at shutdown: %v %v, want it to finish", o.err, o.res)
			}
		})
		t.Run(era.name+"/deadline cancels", func(t *testing.T) {
			sv := startServe(t, context.Background(), testServer(&Options{ShutdownTimeout: 50 * time.Millisecond}))
			cs := connectNoStream(t, sv.url, era.version)
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "block"})
				done <- err
			}()
			<-blockStarted
			if err := sv.stop(); err != nil {
				t.Errorf("Serve = %v, want nil", err)
			}
			select {
			case <-blockCancelled:
			case <-time.After(time.Minute): // a guard against a hang
				t.Fatal("the handler's ctx was not cancelled after the shutdown deadline")
			}
			<-done // failed or answered: the server is gone either way
		})
	}
}

// TestServeShutdownEndsStreams checks that an open legacy event stream
// (GET) does not hold Serve's shutdown until its deadline.
func TestServeShutdownEndsStreams(t *testing.T) {
	sv := startServe(t, context.Background(), testServer(&Options{ShutdownTimeout: time.Hour}))
	// The client opens no stream of its own, so that the test opens one
	// and knows it is open.
	cs := connectNoStream(t, sv.url, "2025-11-25")
	req, err := http.NewRequest(http.MethodGet, sv.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %s", resp.Status)
	}
	// With an hour to shut down, Serve returns only if it ends the stream.
	if err := sv.stop(); err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
}
