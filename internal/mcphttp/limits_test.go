package mcphttp

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// legacy sends one legacy request (on session id, unless empty) as client
// (the X-Client header the tests' limits read) and returns the answer's
// status, its session id header, Retry-After and body.
func legacy(t testing.TB, url, client, id, body string) (status int, sid, retry, got string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Client", client)
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), resp.Header.Get("Retry-After"), string(b)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// open opens a legacy session for client and returns its id, or "" and
// the refusal's status and Retry-After.
func open(t testing.TB, url, client string) (id string, status int, retry string) {
	t.Helper()
	status, id, retry, body := legacy(t, url, client, "", initBody)
	if status != http.StatusOK {
		return "", status, retry
	}
	if id == "" {
		t.Fatalf("initialize answered without a session: %s", body)
	}
	if st, _, _, b := legacy(t, url, client, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); st != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", st, b)
	}
	return id, status, ""
}

// ping returns the status of a ping on session id.
func ping(t testing.TB, url, client, id string) int {
	t.Helper()
	status, _, _, _ := legacy(t, url, client, id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	return status
}

func limitedHandler(max, perClient int) (*Handler, *SessionLimits) {
	limits := NewSessionLimits(&SessionLimitOptions{Max: max, PerClient: perClient, RetryAfter: 5 * time.Second,
		Client: func(r *http.Request) string { return r.Header.Get("X-Client") }})
	nop := make(chan struct{})
	return NewHandler(newServer(nil, nil, nop, nil), &HandlerOptions{Sessions: limits}), limits
}

// TestSessionsCappedPerClient: a client at its cap that opens another
// session loses its idlest one (closed by go-sdk: its requests get 404),
// and no other client's; a request that opens no session closes none.
func TestSessionsCappedPerClient(t *testing.T) {
	h, limits := limitedHandler(10, 3)
	url, _ := serve(t, h, nil)
	var a [4]string
	for i := range 3 {
		a[i], _, _ = open(t, url, "a")
	}
	b, _, _ := open(t, url, "b")
	// a[0] and a[2] used since a[1]: a[1] is the idlest.
	for _, id := range []string{a[0], a[2]} {
		if st := ping(t, url, "a", id); st != http.StatusOK {
			t.Fatalf("ping: %d", st)
		}
	}
	// A request without a session that opens none (not an initialize)
	// takes no slot.
	if st, _, _, _ := legacy(t, url, "a", "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`); st == http.StatusServiceUnavailable {
		t.Errorf("a ping without a session: %d", st)
	}
	if n := limits.Len(); n != 4 {
		t.Errorf("%d sessions counted after a ping without a session, want 4: it closed one", n)
	}
	a[3], _, _ = open(t, url, "a")
	if a[3] == "" {
		t.Fatal("a fourth session of a client at its cap was refused; want its idlest closed")
	}
	want := map[string]int{a[0]: 200, a[1]: 404, a[2]: 200, a[3]: 200, b: 200}
	for i, id := range append(a[:], b) {
		if st := ping(t, url, "a", id); st != want[id] {
			t.Errorf("session %d: ping %d, want %d", i, st, want[id])
		}
	}
	if n := limits.Len(); n != 4 {
		t.Errorf("%d sessions counted, want 4", n)
	}
}

// TestSessionsCappedGlobally: past the global cap a new session is
// refused with 503 and Retry-After, so that one client at its own cap
// cannot take another's; a session that ends makes room again.
func TestSessionsCappedGlobally(t *testing.T) {
	h, limits := limitedHandler(4, 3)
	url, _ := serve(t, h, nil)
	for range 3 {
		if id, st, _ := open(t, url, "a"); id == "" {
			t.Fatalf("a: %d", st)
		}
	}
	b, st, _ := open(t, url, "b")
	if b == "" {
		t.Fatalf("b: %d", st)
	}
	if id, st, retry := open(t, url, "c"); id != "" || st != http.StatusServiceUnavailable || retry != "5" {
		t.Errorf("past the global cap: session %q, status %d, Retry-After %q; want 503 and 5", id, st, retry)
	}
	// a, at its own cap, still opens one: in place of its idlest.
	if id, st, _ := open(t, url, "a"); id == "" {
		t.Errorf("a client at its cap, at the global cap: %d; want its idlest session closed", st)
	}
	// b ends its session: room for c.
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", b)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if !proc.Eventually(patience, func() bool { return limits.Len() == 3 }) {
		t.Fatalf("%d sessions counted after a DELETE, want 3", limits.Len())
	}
	if id, st, _ := open(t, url, "c"); id == "" {
		t.Errorf("after a session ended: %d", st)
	}
}

// TestBusySessionsNotEvicted: a session with a call running is never
// closed to make room; with every one of the client's sessions busy, a
// new one is refused instead.
func TestBusySessionsNotEvicted(t *testing.T) {
	started, release, cancelled := make(chan struct{}, 1), make(chan struct{}), make(chan bool, 1)
	limits := NewSessionLimits(&SessionLimitOptions{PerClient: 1})
	url, _ := serve(t, NewHandler(newServer(nil, started, release, cancelled), &HandlerOptions{Sessions: limits}), nil)
	busy, _, _ := open(t, url, "")
	answered := make(chan string, 1)
	go func() {
		_, _, _, body := legacy(t, url, "", busy, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
		answered <- body
	}()
	<-started
	if id, st, _ := open(t, url, ""); id != "" || st != http.StatusServiceUnavailable {
		t.Errorf("with the one session busy: session %q, status %d; want 503", id, st)
	}
	close(release)
	if body := <-answered; !strings.Contains(body, "released") {
		t.Errorf("the busy session's call: %s", body)
	}
	if id, st, _ := open(t, url, ""); id == "" {
		t.Errorf("once the call is done: %d; want the idle session closed for the new one", st)
	}
	if st := ping(t, url, "", busy); st != http.StatusNotFound {
		t.Errorf("the replaced session: ping %d, want 404", st)
	}
}

// BenchmarkIdleSessionMemory measures the memory an idle legacy session
// holds: b.N sessions opened, the live heap and goroutine stacks before
// and after.
func BenchmarkIdleSessionMemory(b *testing.B) {
	nop := make(chan struct{})
	limits := NewSessionLimits(&SessionLimitOptions{Max: 1 << 20, PerClient: 1 << 20})
	h := NewHandler(newServer(nil, nil, nop, nil), &HandlerOptions{Sessions: limits})
	url, _ := serve(b, h, nil)
	open(b, url, "bench") // the first session's one-time costs
	http.DefaultClient.CloseIdleConnections()
	heap0, rss0 := liveBytes()
	b.ResetTimer()
	for range b.N {
		if id, st, _ := open(b, url, "bench"); id == "" {
			b.Fatalf("open: %d", st)
		}
	}
	b.StopTimer()
	http.DefaultClient.CloseIdleConnections()
	heap1, rss1 := liveBytes()
	if n := limits.Len(); n != b.N+1 {
		b.Fatalf("%d sessions counted, want %d", n, b.N+1)
	}
	b.ReportMetric(float64(heap1-heap0)/float64(b.N), "heap-B/session")
	b.ReportMetric(float64(rss1-rss0)/float64(b.N), "RSS-B/session")
}

// liveBytes returns the live heap and goroutine stacks after a collection,
// and the process's resident set.
func liveBytes() (live, rss int64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	statm, _ := os.ReadFile("/proc/self/statm")
	var size, resident int64
	fmt.Sscan(string(statm), &size, &resident)
	return int64(ms.HeapAlloc + ms.StackInuse), resident * int64(os.Getpagesize())
}

// TestSessionLimitDefaults: without a way to tell clients apart, the one
// client may use the whole global cap; with one, each gets its share.
func TestSessionLimitDefaults(t *testing.T) {
	anyone := NewSessionLimits(&SessionLimitOptions{Max: 1000})
	named := NewSessionLimits(&SessionLimitOptions{Max: 1000, Client: func(*http.Request) string { return "" }})
	def := NewSessionLimits(nil)
	if anyone.perClient != 1000 || named.perClient != DefaultMaxSessionsPerClient || def.max != DefaultMaxSessions || def.retryAfter != "30" {
		t.Errorf("per client: %d without Client, %d with; defaults %d, Retry-After %q", anyone.perClient, named.perClient, def.max, def.retryAfter)
	}
}
