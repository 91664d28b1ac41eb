package mcphttp

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newServer returns a go-sdk server with two tools: echo answers at once;
// block signals started, then waits for release or its ctx, and reports on
// cancelled whether its ctx ended it.
func newServer(versions []string, started chan<- struct{}, release <-chan struct{}, cancelled chan<- bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: versions})
	type in struct {
		Text string `json:"text,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "block"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, any, error) {
		started <- struct{}{}
		select {
		case <-release:
			cancelled <- false
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
		case <-ctx.Done():
			cancelled <- true
			return nil, nil, ctx.Err()
		}
	})
	return s
}

// serve runs Serve on 127.0.0.1:0; stop cancels it and returns what Serve
// returned and how long it took to return.
func serve(t testing.TB, h *Handler, opts *Options) (url string, stop func() (error, time.Duration)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h, opts) }()
	stopped := false
	stop = func() (error, time.Duration) {
		stopped = true
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			return err, time.Since(start)
		case <-time.After(20 * time.Second):
			t.Error("Serve did not return")
			return nil, 0
		}
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	return "http://" + ln.Addr().String() + DefaultPath, stop
}

// post sends one JSON-RPC request; a non-empty version goes in _meta and
// the header, as a 2026-07-28 client sends it.
func post(t *testing.T, url, method, version string, params map[string]any, body string) (*http.Response, string) {
	t.Helper()
	if body == "" {
		if params == nil {
			params = map[string]any{}
		}
		if version != "" {
			params["_meta"] = map[string]any{
				mcp.MetaKeyProtocolVersion:    version,
				mcp.MetaKeyClientInfo:         map[string]any{"name": "raw", "version": "1"},
				mcp.MetaKeyClientCapabilities: map[string]any{},
			}
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		body = string(b)
	}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestRouting checks the router's own answers for a plain go-sdk server,
// as the gateway serves one.
func TestRouting(t *testing.T) {
	nop := make(chan struct{})
	all := NewHandler(newServer(nil, nil, nop, nil), &HandlerOptions{MaxBodyBytes: 1 << 10})
	url, _ := serve(t, all, nil)
	legacyOnly := []string{"2025-11-25", "2025-06-18"}
	urlLegacy, _ := serve(t, NewHandler(newServer(legacyOnly, nil, nop, nil), &HandlerOptions{Versions: legacyOnly}), nil)
	call := map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}
	tests := []struct {
		name            string
		url             string
		method, version string
		params          map[string]any
		body            string
		status          int
		ctype           string // prefix
		contains        []string
	}{
		{"modern call answers JSON", url, "tools/call", "2026-07-28", call, "", 200, "application/json", []string{`"text":"hi"`}},
		{"unknown future version", url, "tools/list", "2027-01-01", nil, "", 400, "application/json", []string{"-32022", `"2026-07-28"`, `"2025-11-25"`}},
		{"unknown past version", url, "tools/list", "2024-01-01", nil, "", 400, "application/json", []string{"-32022", `"requested":"2024-01-01"`}},
		{"not a date", url, "tools/list", "v999.0.0", nil, "", 400, "application/json", []string{"-32022", `"requested":"v999.0.0"`}},
		{"legacy-only server, modern request", urlLegacy, "server/discover", "2026-07-28", nil, "", 400, "text/plain", []string{"through initialize", "2025-11-25"}},
		{"body over the cap", url, "tools/call", "2026-07-28", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":"` + strings.Repeat("a", 2<<10) + `"}}`, 413, "text/plain", []string{"exceeds 1 KiB"}},
		{"legacy initialize opens a session", url, "initialize", "", map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"},
		}, "", 200, "application/json", []string{`"protocolVersion":"2025-11-25"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, tt.url, tt.method, tt.version, tt.params, tt.body)
			if resp.StatusCode != tt.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), tt.ctype) {
				t.Fatalf("status %d %q, want %d %q; body %s", resp.StatusCode, resp.Header.Get("Content-Type"), tt.status, tt.ctype, body)
			}
			for _, c := range tt.contains {
				if !strings.Contains(body, c) {
					t.Errorf("body lacks %s: %s", c, body)
				}
			}
		})
	}
}

// TestShutdownLetsCallsFinish checks that a call in flight when Serve's ctx
// ends gets its answer, while a legacy session's GET stream, which never
// ends by itself, does not hold the shutdown up.
func TestShutdownLetsCallsFinish(t *testing.T) {
	started, release, cancelled := make(chan struct{}, 1), make(chan struct{}), make(chan bool, 1)
	h := NewHandler(newServer(nil, started, release, cancelled), nil)
	url, stop := serve(t, h, &Options{ShutdownTimeout: 10 * time.Second})

	// A legacy session with its standalone GET stream open.
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	answered := make(chan string, 1)
	go func() {
		_, body := post(t, url, "tools/call", "2026-07-28", map[string]any{"name": "block", "arguments": map[string]any{}}, "")
		answered <- body
	}()
	select {
	case <-started:
	case body := <-answered:
		t.Fatalf("the call did not start: %s", body)
	}
	type result struct {
		err error
		d   time.Duration
	}
	stopped := make(chan result, 1)
	go func() {
		err, d := stop()
		stopped <- result{err, d}
	}()
	time.Sleep(100 * time.Millisecond) // the shutdown waits for the call
	close(release)
	if body := <-answered; !strings.Contains(body, "released") {
		t.Errorf("the call in flight got %s, want its result", body)
	}
	if <-cancelled {
		t.Error("the call in flight was cancelled")
	}
	r := <-stopped
	if r.err != nil {
		t.Errorf("Serve: %v", r.err)
	}
	// Well inside the 10 s deadline: the GET stream was ended, not waited for.
	if r.d > 5*time.Second {
		t.Errorf("Serve took %v to return", r.d)
	}
}

// TestShutdownCancelsSessionCalls checks that a legacy session's call still
// running at the deadline is cancelled (closing a go-sdk session would wait
// for it) and that Serve returns promptly after it.
func TestShutdownCancelsSessionCalls(t *testing.T) {
	started, release, cancelled := make(chan struct{}, 1), make(chan struct{}), make(chan bool, 1)
	defer close(release)
	h := NewHandler(newServer(nil, started, release, cancelled), nil)
	url, stop := serve(t, h, &Options{ShutdownTimeout: 200 * time.Millisecond})

	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}})
	<-started

	err, d := stop()
	if err != nil {
		t.Errorf("Serve: %v", err)
	}
	select {
	case c := <-cancelled:
		if !c {
			t.Error("the call was released, not cancelled")
		}
	default:
		t.Error("the call was still running when Serve returned")
	}
	// The deadline, then the cancelled call returns at once; without the
	// cancellation, closing the session waits out handlerExitTimeout.
	if d > handlerExitTimeout {
		t.Errorf("Serve took %v to return", d)
	}
}
