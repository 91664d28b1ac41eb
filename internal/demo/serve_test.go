package demo

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/server"
)

// stdioEnv, when set to 1, makes the test binary run ServeStdio instead of
// the tests, so that TestServeStdio talks to a real child process.
const stdioEnv = "SWITCHBOARD_DEMO_TEST_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(stdioEnv) == "1" {
		if err := ServeStdio(context.Background(), "stdio-test"); err != nil {
			fmt.Fprintln(os.Stderr, "ServeStdio:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// shutdownTimeout is how long the shutdown tests' servers let calls finish
// at shutdown, and stopGuard how long those tests wait for a shutdown: one
// that waits for its deadline cannot end in time, one that ends with the
// work it waits for does, however busy the machine.
const shutdownTimeout, stopGuard = time.Minute, 30 * time.Second

// stopWithin stops srv and returns ServeHTTP's error; it fails t if the
// shutdown is still running after stopGuard.
func stopWithin(t *testing.T, srv *httpServer) error {
	t.Helper()
	stopped := make(chan error, 1)
	go func() { stopped <- srv.stop() }()
	select {
	case err := <-stopped:
		return err
	case <-time.After(stopGuard):
		t.Fatalf("shutdown still running after %v: it waits for its deadline (%v)", stopGuard, shutdownTimeout)
		return nil
	}
}

// isSessionless is how server.Server.Handler classifies a request by its
// Mcp-Protocol-Version header alone: modern (sessionless) when it names a
// version outside the legacy list.
func isSessionless(r *http.Request) bool {
	v := r.Header.Get("Mcp-Protocol-Version")
	return v != "" && !server.IsLegacyVersion(v)
}

// checkGoroutines fails t if, once its other cleanups have run, more
// goroutines are left than when it was called. Call it first in a test, and
// don't use it in parallel tests.
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("%d goroutines left, %d before the test:\n%s", n, before, buf)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// testHTTPClient returns an HTTP client whose idle connections are closed
// when t ends, so they don't count as leaked goroutines.
func testHTTPClient(t *testing.T) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// httpServer is a demo server running on a loopback port for one test.
type httpServer struct {
	url  string // of the MCP endpoint
	addr net.Addr
	stop func() error // cancels the server's ctx and returns its error
}

// startHTTP runs serve (ServeHTTP, or a given server's Serve) on
// 127.0.0.1:0 until stop is called or t ends.
func startHTTP(t *testing.T, serve func(ctx context.Context, ready func(net.Addr)) error) *httpServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, func(a net.Addr) { addrc <- a }) }()
	var s httpServer
	select {
	case s.addr = <-addrc:
	case err := <-errc:
		cancel()
		t.Fatalf("server did not start: %v", err)
	}
	s.url = "http://" + s.addr.String() + EndpointPath
	s.stop = sync.OnceValue(func() error {
		cancel()
		return <-errc
	})
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	return &s
}

// startPublic starts the server through the exported ServeHTTP.
func startPublic(t *testing.T) *httpServer {
	t.Helper()
	return startHTTP(t, func(ctx context.Context, ready func(net.Addr)) error {
		return ServeHTTP(ctx, "127.0.0.1:0", testVersion, ready)
	})
}

// startWith serves the given server, so tests can observe it.
func startWith(t *testing.T, srv *server.Server) *httpServer {
	t.Helper()
	return startHTTP(t, func(ctx context.Context, ready func(net.Addr)) error {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		ready(ln.Addr())
		return srv.Serve(ctx, ln)
	})
}

// httpEras are the client configurations the HTTP tests run: the default
// go-sdk client, which negotiates 2026-07-28 through server/discover and must
// land on the stateless handler (no session id), and legacy clients pinned to
// each session-based version Streamable HTTP exists in, which must land on
// the stateful handler (a session id).
var httpEras = []struct {
	name    string
	request string
	want    string
	session bool
}{
	{name: "modern", request: "", want: "2026-07-28", session: false},
	{name: "legacy 2025-11-25", request: "2025-11-25", want: "2025-11-25", session: true},
	{name: "legacy 2025-06-18", request: "2025-06-18", want: "2025-06-18", session: true},
	{name: "legacy 2025-03-26", request: "2025-03-26", want: "2025-03-26", session: true},
}

// connectHTTP connects a go-sdk client to url at the given protocol version.
func connectHTTP(t *testing.T, url, version string, copts *mcp.ClientOptions, topts *mcp.StreamableClientTransport) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{}
	if topts != nil {
		*tr = *topts
	}
	tr.Endpoint = url
	tr.HTTPClient = testHTTPClient(t)
	client := mcp.NewClient(&mcp.Implementation{Name: "demo-http-test", Version: "0"}, copts)
	cs, err := client.Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect at %q: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestServeHTTPBothEras(t *testing.T) {
	checkGoroutines(t)
	srv := startPublic(t)
	for _, era := range httpEras {
		t.Run(era.name, func(t *testing.T) {
			cs := connectHTTP(t, srv.url, era.request, nil, nil)
			res := cs.InitializeResult()
			if res.ProtocolVersion != era.want {
				t.Errorf("negotiated %q, want %q", res.ProtocolVersion, era.want)
			}
			if res.ServerInfo == nil || res.ServerInfo.Name != ImplementationName || res.ServerInfo.Version != testVersion {
				t.Errorf("serverInfo = %+v, want %s %s", res.ServerInfo, ImplementationName, testVersion)
			}
			if got := cs.ID() != ""; got != era.session {
				t.Errorf("has session id = %v, want %v (wrong handler?)", got, era.session)
			}
			call, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over " + era.name}})
			if err != nil {
				t.Fatal(err)
			}
			text("over "+era.name)(t, call)

			call, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fail"})
			if err != nil {
				t.Fatal(err)
			}
			toolError("always fails")(t, call)

			r, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "demo://logo.png"})
			if err != nil {
				t.Fatal(err)
			}
			checkGradient(t, r.Contents[0].Blob, 32)
		})
	}
}

func TestServeHTTPProgress(t *testing.T) {
	checkGoroutines(t)
	srv := startPublic(t)
	for _, era := range httpEras {
		t.Run(era.name, func(t *testing.T) {
			progress := newProgressLog()
			cs := connectHTTP(t, srv.url, era.request, &mcp.ClientOptions{ProgressNotificationHandler: progress.handle}, nil)
			testSlowProgress(t, cs, progress)
		})
	}
}

func TestServeHTTPCancelSlow(t *testing.T) {
	checkGoroutines(t)
	server := New(testVersion, nil)
	calls := observeToolCalls(server)
	srv := startWith(t, server)
	for _, era := range httpEras {
		t.Run(era.name, func(t *testing.T) {
			cs := connectHTTP(t, srv.url, era.request, nil, nil)
			testSlowCancel(t, cs, calls)
		})
	}
}

// TestServeHTTPShutdownLetsCallsFinish checks that a call in flight when
// ServeHTTP's ctx is cancelled completes, and that ServeHTTP then returns nil.
func TestServeHTTPShutdownLetsCallsFinish(t *testing.T) {
	checkGoroutines(t)
	for _, era := range httpEras[:2] {
		t.Run(era.name, func(t *testing.T) {
			server := New(testVersion, &Options{ShutdownTimeout: shutdownTimeout})
			calls := observeToolCalls(server)
			srv := startWith(t, server)
			cs := connectHTTP(t, srv.url, era.request, nil, nil)

			done := make(chan error, 1)
			go func() {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{
					Name:      "slow",
					Arguments: map[string]any{"steps": 3, "delay_ms": 100},
				})
				if err == nil && res.IsError {
					err = fmt.Errorf("tool error: %s", contentText(res))
				}
				done <- err
			}()
			calls.waitStarted(t, "slow")
			// The call needs 300ms; shutdown ends with it, not at its
			// deadline.
			if err := stopWithin(t, srv); err != nil {
				t.Errorf("ServeHTTP = %v, want nil", err)
			}
			if err := <-done; err != nil {
				t.Errorf("in-flight call failed during shutdown: %v", err)
			}
		})
	}
}

// TestServeHTTPShutdownEndsStreams checks that an open legacy GET stream does
// not hold shutdown until its deadline.
func TestServeHTTPShutdownEndsStreams(t *testing.T) {
	checkGoroutines(t)
	srv := startWith(t, New(testVersion, &Options{ShutdownTimeout: shutdownTimeout}))
	cs := connectHTTP(t, srv.url, "2025-11-25", nil, &mcp.StreamableClientTransport{DisableStandaloneSSE: true, MaxRetries: -1})

	// Open the standalone stream by hand, so the test knows it is open.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := testHTTPClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %s", resp.Status)
	}

	// Streams end when shutdown starts: this one does not hold it until
	// its deadline.
	if err := stopWithin(t, srv); err != nil {
		t.Errorf("ServeHTTP = %v, want nil", err)
	}
}

// TestServeHTTPRouting sends raw requests to check where each lands and that
// DNS-rebinding protection is on for both handlers.
func TestServeHTTPRouting(t *testing.T) {
	checkGoroutines(t)
	srv := startPublic(t)
	client := testHTTPClient(t)

	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	const discover = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	tests := []struct {
		name        string
		method      string
		path        string
		host        string
		headers     map[string]string
		body        string
		wantStatus  int
		wantSession bool   // an Mcp-Session-Id in the response: the stateful handler answered
		wantBody    string // a substring of the response body
	}{
		{
			name: "legacy initialize is stateful", method: http.MethodPost, body: initialize,
			wantStatus: http.StatusOK, wantSession: true, wantBody: `"protocolVersion":"2025-11-25"`,
		},
		{
			name: "discover with header is stateless", method: http.MethodPost, body: discover,
			headers:    map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"},
			wantStatus: http.StatusOK, wantBody: `"2026-07-28"`,
		},
		{
			// go-sdk requires the header on requests with a _meta
			// protocolVersion (HeaderMismatch, -32020), so routing by header
			// alone loses nothing.
			name: "discover without header is refused", method: http.MethodPost, body: discover,
			wantStatus: http.StatusBadRequest, wantBody: `"code":-32020`,
		},
		{
			// SEP-2575: UnsupportedProtocolVersion (-32022) listing what is
			// supported, so the client can retry with 2026-07-28.
			name: "future version is stateless and told what is supported", method: http.MethodPost,
			body:       strings.ReplaceAll(discover, "2026-07-28", "2099-01-01"),
			headers:    map[string]string{"Mcp-Protocol-Version": "2099-01-01", "Mcp-Method": "server/discover"},
			wantStatus: http.StatusBadRequest, wantBody: `"code":-32022,"data":{"supported":["2026-07-28",`,
		},
		{
			// GET and DELETE answer 405 where there is no stream
			// or session.
			name: "GET without a session is refused", method: http.MethodGet,
			headers:    map[string]string{"Accept": "text/event-stream"},
			wantStatus: http.StatusMethodNotAllowed, wantBody: "no session",
		},
		{
			name: "other paths are not served", method: http.MethodPost, path: "/other", body: initialize,
			wantStatus: http.StatusNotFound,
		},
		{
			name: "rebinding guard, legacy", method: http.MethodPost, host: "attacker.example", body: initialize,
			wantStatus: http.StatusForbidden,
		},
		{
			name: "rebinding guard, modern", method: http.MethodPost, host: "attacker.example", body: discover,
			headers:    map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"},
			wantStatus: http.StatusForbidden,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := srv.url
			if tc.path != "" {
				url = "http://" + srv.addr.String() + tc.path
			}
			req, err := http.NewRequestWithContext(t.Context(), tc.method, url, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body := readSome(t, resp.Body)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %s, want %d; body %q", resp.Status, tc.wantStatus, body)
			}
			if got := resp.Header.Get("Mcp-Session-Id") != ""; got != tc.wantSession {
				t.Errorf("session id in response = %v, want %v", got, tc.wantSession)
			}
			if !strings.Contains(body, tc.wantBody) {
				t.Errorf("body %q does not contain %q", body, tc.wantBody)
			}
			if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
				del, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, srv.url, nil)
				del.Header.Set("Mcp-Session-Id", id)
				if resp, err := client.Do(del); err == nil {
					resp.Body.Close()
				}
			}
		})
	}
}

// readSome reads the response body up to its first complete SSE event or
// JSON document; SSE responses may stay open.
func readSome(t *testing.T, r io.Reader) string {
	t.Helper()
	var b strings.Builder
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		b.WriteString(line + "\n")
		if strings.HasPrefix(line, "data: {") {
			break
		}
	}
	return b.String()
}

func TestIsSessionless(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{"", false},
		{"2024-11-05", false},
		{"2025-03-26", false},
		{"2025-11-25", false},
		{"2026-07-28", true},
		{"2027-01-01", true},
	}
	for _, tc := range tests {
		r, _ := http.NewRequest(http.MethodPost, "/mcp", nil)
		if tc.header != "" {
			r.Header.Set("mcp-protocol-version", tc.header) // any case
		}
		if got := isSessionless(r); got != tc.want {
			t.Errorf("isSessionless(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

func TestServeHTTPListenError(t *testing.T) {
	err := ServeHTTP(context.Background(), "256.0.0.1:0", testVersion, nil)
	if err == nil {
		t.Fatal("ServeHTTP on a bad address succeeded")
	}
}

// TestServeStdio runs ServeStdio in a child process (this test binary, see
// TestMain) and talks to it over its stdin/stdout, at both protocol eras.
func TestServeStdio(t *testing.T) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), stdioEnv+"=1")
			cmd.Stderr = os.Stderr
			client := mcp.NewClient(&mcp.Implementation{Name: "demo-stdio-test", Version: "0"}, nil)
			cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: v.request})
			if err != nil {
				t.Fatal(err)
			}
			if got := cs.InitializeResult().ProtocolVersion; got != v.want {
				t.Errorf("negotiated %q, want %q", got, v.want)
			}
			if got := cs.InitializeResult().ServerInfo; got == nil || got.Version != "stdio-test" {
				t.Errorf("serverInfo = %+v, want version stdio-test", got)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over stdio"}})
			if err != nil {
				t.Fatal(err)
			}
			text("over stdio")(t, res)
			// Closing stdin is a disconnect, which ServeStdio treats as a
			// clean exit: a non-zero exit status would make Close fail.
			if err := cs.Close(); err != nil {
				t.Errorf("Close (child exit): %v", err)
			}
		})
	}
}
