package host_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// slowpoke returns a stdio server entry that sleeps for delay before it
// becomes the testkit server: a server slow to start, as an npx download
// makes one.
func slowpoke(t testing.TB, delay time.Duration) map[string]any {
	return map[string]any{
		"command": "/bin/sh",
		"args":    []string{"-c", fmt.Sprintf("sleep %g; exec \"$0\"", delay.Seconds()), self(t)},
		"env":     testkit.ChildEnv(testkit.ModeServer),
	}
}

// TestOpenDoesNotWaitForAHungServer: with StartupWait, Open returns with
// the good server usable while a hung one is still starting; the hung
// one is named as starting, and a call to a tool of the good one does not
// wait for it.
func TestOpenDoesNotWaitForAHungServer(t *testing.T) {
	t.Parallel()
	cfg := parse(t, map[string]any{
		"good": child(t, testkit.ModeServer, nil),
		"hang": child(t, testkit.ModeHang, nil), // startupTimeoutMs: the default 10 s
	}, nil)
	// The hung server never answers, so it is still starting until its
	// 10 s startup timeout: while it is, neither Open nor the call to the
	// good server waited for it (no bound on this machine's speed).
	h := openWith(t, cfg, &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, StartupWait: time.Second})
	if st := status(h, "hang"); st.State != host.StateStarting {
		t.Fatalf("hang after Open: state %s, want %s: Open waited for the hung server", st.State, host.StateStarting)
	}
	if got := call(t, h, "good:echo", `{"text":"hi"}`).Text; got != "hi" {
		t.Errorf("echo = %q", got)
	}
	if st := status(h, "hang"); st.State != host.StateStarting {
		t.Errorf("hang after the good server's call: state %s, want %s: the call waited for the hung server", st.State, host.StateStarting)
	}
	// A lookup of its tool does not wait: it says the server is still
	// starting, and names it.
	var fe *fault.Error
	if _, err := h.Tool("hang__anything"); !errors.Is(err, host.ErrStarting) || !errors.As(err, &fe) || fe.Server != "hang" {
		t.Errorf("lookup of a tool of the starting server: %v; want ErrStarting naming it", err)
	}
	// A call to the hung server's tool waits for that server only, bounded
	// by the caller's context, and says it is still starting.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := h.Call(ctx, "hang__anything", nil, nil)
	if !errors.Is(err, host.ErrTimeout) || !strings.Contains(err.Error(), `"hang"`) {
		t.Errorf("call to a tool of the starting server: %v; want a timeout naming it", err)
	}
	if err := h.Ready(ctx, "hang"); !errors.Is(err, host.ErrTimeout) {
		t.Errorf("Await(hang) after the caller's deadline: %v; want a timeout", err)
	}
	if st := status(h, "hang"); st.State != host.StateStarting {
		t.Errorf("hang after the callers gave up: state %s, want still %s", st.State, host.StateStarting)
	}
}

// TestLateServerJoins: with StartupWait negative Open does not wait at
// all; a slow server joins when it is ready, with OnChange; a call to its
// tool meanwhile waits for it.
func TestLateServerJoins(t *testing.T) {
	t.Parallel()
	cfg := parse(t, map[string]any{
		"good":     child(t, testkit.ModeServer, nil),
		"slowpoke": slowpoke(t, 1500*time.Millisecond),
	}, nil)
	var changes atomic.Int32
	start := time.Now()
	h := openWith(t, cfg, &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, StartupWait: -1, OnChange: func() { changes.Add(1) }})
	// Still starting: Open did not wait for its 1.5 s.
	if st := status(h, "slowpoke"); st.State != host.StateStarting {
		t.Errorf("slowpoke right after Open: %s, want %s", st.State, host.StateStarting)
	}
	if got := call(t, h, "slowpoke__echo", `{"text":"late"}`).Text; got != "late" {
		t.Errorf("slowpoke echo = %q", got)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("the call returned after %v, before the slow server could start", d)
	}
	if _, err := h.Tool("slowpoke__echo"); err != nil {
		t.Errorf("slowpoke's tools after it joined: %v", err)
	}
	if !proc.Eventually(5*time.Second, func() bool { return changes.Load() > 0 }) {
		t.Error("OnChange was not called when the slow server joined")
	}
}

// TestStartupTimeoutNamesThePhase: a server that does not finish the
// handshake fails with the request it left unanswered and the setting
// that bounded the wait.
func TestStartupTimeoutNamesThePhase(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	// A server that answers the handshake and never its tools/list.
	slow := mcp.NewServer(&mcp.Implementation{Name: "slow-lists", Version: "1"}, nil)
	mcp.AddTool(slow, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	slow.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				select {
				case <-ctx.Done():
				case <-release:
				}
				return nil, errors.New("too late")
			}
			return next(ctx, method, req)
		}
	})
	lists := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return slow }, nil))
	t.Cleanup(func() { close(release); hung.Close(); lists.Close() }) // after the host closes (cleanups run last first)
	servers := map[string]any{
		"stdio":  child(t, testkit.ModeHang, map[string]any{"startupTimeoutMs": 1000}),
		"modern": child(t, testkit.ModeHang, map[string]any{"startupTimeoutMs": 1000, "protocolVersion": "2026-07-28"}),
		"legacy": child(t, testkit.ModeHang, map[string]any{"startupTimeoutMs": 1000, "protocolVersion": "2025-11-25"}),
		"http":   map[string]any{"type": "http", "url": hung.URL, "trust": "trusted", "startupTimeoutMs": 1000, "startupAttempts": 1},
		// Ten seconds: the handshake must go through before the timeout,
		// even on a busy machine.
		"lists": map[string]any{"type": "http", "url": lists.URL, "trust": "trusted", "startupTimeoutMs": 10000, "startupAttempts": 1},
	}
	h := open(t, parse(t, servers, nil))
	want := map[string]string{
		"stdio":  "did not answer initialize within 1s (startupTimeoutMs)", // after the server/discover probe got no answer
		"modern": "did not answer server/discover within 1s (startupTimeoutMs)",
		"legacy": "did not answer initialize within 1s (startupTimeoutMs)",
		"http":   "did not answer initialize within 1s (startupTimeoutMs)",
		"lists":  "did not answer tools/list within 10s (startupTimeoutMs)", // the handshake went through
	}
	for name, w := range want {
		st := status(h, name)
		if !strings.Contains(st.LastError, w) || !strings.Contains(st.LastError, "did not answer ") {
			t.Errorf("%s: last error %q; want it to say %q", name, st.LastError, w)
		}
	}
}

// TestScheduleSurvivesRestart: a server left out after failing to start
// is not dialled again by the next run before its next attempt is due,
// and is dialled by a run after that; a changed configuration starts
// afresh.
func TestScheduleSurvivesRestart(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	mark := filepath.Join(t.TempDir(), "starts")
	failing := func(extra string) map[string]any {
		return map[string]any{
			"command": "/bin/sh", "args": []string{"-c", `echo start >> "$MARK"; exit 3`, extra},
			"env":             map[string]string{"MARK": mark},
			"protocolVersion": "2025-11-25", // one start per attempt: no restart after a failed probe
			"startupAttempts": 1, "retryMs": 2000,
		}
	}
	starts := func() int {
		b, _ := os.ReadFile(mark)
		return strings.Count(string(b), "start")
	}
	run := func(extra string) host.ServerStatus {
		// The changed configuration is approved, as by a person editing it.
		h, err := host.Open(context.Background(), parse(t, map[string]any{"bad": failing(extra)}, nil), hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond, ApproveLaunches: []string{"bad"}}, st))
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		return status(h, "bad")
	}
	first := time.Now()
	s := run("")
	if s.State != host.StateFailed || starts() != 1 || s.LastError == "" {
		t.Fatalf("first run: state %s, %d starts, error %q; want failed after 1", s.State, starts(), s.LastError)
	}
	firstErr := s.LastError
	sch, err := st.Schedule(context.Background(), "bad")
	if err != nil || sch.State != "failed" || sch.Next.Before(first.Add(2*time.Second)) {
		t.Fatalf("saved schedule = %+v, %v; want failed, next attempt 2 s on", sch, err)
	}
	s = run("")
	if time.Since(first) < 2*time.Second && starts() != 1 {
		t.Fatalf("second run, before the next attempt was due: %d starts; want still 1", starts())
	}
	if s.State != host.StateFailed || s.LastError != firstErr {
		t.Errorf("second run: state %s, last error %q; want failed, with the first run's error", s.State, s.LastError)
	}
	// A changed configuration is a fresh start.
	if run("changed"); starts() != 2 {
		t.Errorf("run with a changed configuration: %d starts; want 2", starts())
	}
	// The changed one failed too and is now scheduled; once its next
	// attempt is due, the next run dials.
	time.Sleep(time.Until(first.Add(2100 * time.Millisecond)))
	sch, _ = st.Schedule(context.Background(), "bad")
	time.Sleep(time.Until(sch.Next.Add(50 * time.Millisecond)))
	if run("changed"); starts() != 3 {
		t.Errorf("run after the next attempt was due: %d starts; want 3", starts())
	}
}

// TestNoStart: with NoStart, Open dials no server: one without a saved
// catalogue is idle with no tools, and starts on first use.
func TestNoStart(t *testing.T) {
	t.Parallel()
	cfg := parse(t, map[string]any{
		"good": child(t, testkit.ModeServer, nil),
		"hang": child(t, testkit.ModeHang, nil),
	}, nil)
	h := openWith(t, cfg, &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, NoStart: true})
	for _, name := range []string{"good", "hang"} {
		if st := status(h, name); st.State != host.StateIdle || st.PID != 0 || st.Tools != 0 {
			t.Errorf("%s: state %s, pid %d, %d tools; want idle, not started, no tools", name, st.State, st.PID, st.Tools)
		}
	}
	if err := h.Refresh(t.Context(), "good"); err != nil {
		t.Fatalf("Refresh(good): %v", err)
	}
	if got := call(t, h, "good:echo", `{"text":"hi"}`).Text; got != "hi" {
		t.Errorf("echo = %q", got)
	}
	if st := status(h, "hang"); st.State != host.StateIdle || st.PID != 0 {
		t.Errorf("hang: state %s, pid %d; want idle, not started", st.State, st.PID)
	}
}
