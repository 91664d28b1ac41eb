package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// openStore opens a state database in a temporary directory.
func openStore(t testing.TB) *sqlite.DB {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// tagged returns the live child processes of this test process whose
// command line carries tag.
func tagged(tag string) []proc.Info {
	var out []proc.Info
	for _, p := range proc.Live(proc.Children(os.Getpid())) {
		if slices.Contains(p.Cmdline, tag) {
			out = append(out, p)
		}
	}
	return out
}

// taggedServers returns n stdio testkit servers whose processes carry tag.
func taggedServers(t testing.TB, n int, tag string) map[string]any {
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("s%02d", i)] = map[string]any{"command": self(t), "args": []string{tag}, "env": testkit.ChildEnv(testkit.ModeServer)}
	}
	return servers
}

// TestCatalogueFirstStart: a second start advertises 20 servers from their
// saved catalogues without starting any of them; a call starts exactly the
// server it needs.
func TestCatalogueFirstStart(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	tag := "catalogue-first-" + fmt.Sprint(time.Now().UnixNano())
	cfg := parse(t, taggedServers(t, 20, tag), nil)
	opts := hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st)

	h, err := host.Open(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := len(h.Tools())
	if want < 20 || len(tagged(tag)) != 20 {
		t.Fatalf("first start: %d tools, %d processes", want, len(tagged(tag)))
	}
	h.Close()
	proc.WaitGone(t, 5*time.Second, func() bool { return len(tagged(tag)) == 0 })

	h, err = host.Open(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if got := len(h.Tools()); got != want {
		t.Errorf("second start lists %d tools, want %d", got, want)
	}
	if n := len(tagged(tag)); n != 0 {
		t.Errorf("second start spawned %d processes, want none", n)
	}
	for _, s := range h.Servers() {
		if s.State != host.StateIdle {
			t.Errorf("%s: state %s, want idle", s.Name, s.State)
		}
	}
	if got := call(t, h, "s07__echo", `{"text":"lazy"}`).Text; got != "lazy" {
		t.Errorf("echo = %q", got)
	}
	if n := len(tagged(tag)); n != 1 {
		t.Errorf("a call started %d processes, want 1", n)
	}
	if s := status(h, "s07"); s.State != host.StateReady {
		t.Errorf("s07 after the call: %s", s.State)
	}
}

// TestSleeperIsHeld: a server that changes a tool's description on its
// second start (a rug pull) gets that tool held back: not listed, calls
// refused with definition_changed; its other tools keep working; approving
// releases it.
func TestSleeperIsHeld(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	cfg := parse(t, map[string]any{"sleeper": sleeper(t)}, nil)
	opts := hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st)
	firstStart(t, cfg, opts)

	changed := make(chan struct{}, 4)
	opts.OnChange = func() { changed <- struct{}{} }
	h, err := host.Open(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	// Advertised from the catalogue; the first call starts the server,
	// whose fresh listing shows the change.
	if got := call(t, h, "sleeper__slow", `{"steps":1,"delay_ms":1}`).Text; got != "done" {
		t.Fatalf("slow = %q", got)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no change event after the changed listing")
	}
	if _, err := h.Tool("sleeper__echo"); err == nil {
		t.Error("the changed tool is still listed")
	}
	_, err = h.Call(context.Background(), "sleeper__echo", json.RawMessage(`{"text":"x"}`), nil)
	var held *host.HeldError
	if !errors.Is(err, fault.DefinitionChanged) || !errors.As(err, &held) || strings.Contains(err.Error(), "switchboard approve") ||
		!strings.Contains(held.Release(), "switchboard approve sleeper:echo") {
		t.Errorf("call of the held tool: %v, want definition_changed held for review, the approve command in Release only", err)
	}
	// The refusal is audited.
	if !proc.Eventually(5*time.Second, func() bool {
		calls, err := st.Calls(context.Background(), store.CallFilter{Server: "sleeper"})
		return err == nil && slices.ContainsFunc(calls, func(c store.Call) bool {
			return c.Tool == "sleeper:echo" && c.Outcome == "error" && c.Code == "definition_changed" && c.ArgShape == `{"text":"string"}`
		})
	}) {
		t.Error("no audit row for the call of the held tool")
	}
	if s := status(h, "sleeper"); !slices.Contains(s.Held, "echo") {
		t.Errorf("status held = %v", s.Held)
	}
	// The drift is written to the store in the background of the rebuild
	// (writeDrift): wait for it.
	var drifts []store.Drift
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		drifts, err = st.Drifts(context.Background(), "sleeper")
		if err != nil || len(drifts) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || len(drifts) != 1 || drifts[0].Tool != "echo" || !strings.Contains(string(drifts[0].Definition), "attacker@evil.example") {
		t.Fatalf("drifts = %+v, %v", drifts, err)
	}
	// What `switchboard approve sleeper:echo` does.
	d := drifts[0]
	if err := st.Pin(context.Background(), store.Pin{Server: d.Server, Tool: d.Tool, Hash: d.Hash, Definition: d.Definition}); err != nil {
		t.Fatal(err)
	}
	if !proc.Eventually(5*time.Second, func() bool { _, err := h.Tool("sleeper__echo"); return err == nil }) {
		t.Fatal("the approved tool did not come back")
	}
	if got := call(t, h, "sleeper__echo", `{"text":"approved"}`).Text; got != "approved" {
		t.Errorf("echo after approval = %q", got)
	}
}

// TestAuditLogWhileRunning: rows reach the store while the host runs, a
// short while after their calls (the writer batches them), not only when
// it closes.
func TestAuditLogWhileRunning(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	h := openWith(t, parse(t, map[string]any{"s": child(t, testkit.ModeServer, nil)}, nil), hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	for range 3 {
		call(t, h, "s__echo", `{"text":"x"}`)
	}
	n := 0
	if !proc.Eventually(5*time.Second, func() bool {
		calls, err := st.Calls(context.Background(), store.CallFilter{Server: "s"})
		n = len(calls)
		return err == nil && n == 3
	}) {
		t.Fatalf("%d audit rows in the store while the host runs, want 3", n)
	}
}

// TestAuditLog: every call leaves a row with the argument shape, never the
// values.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	h := openWith(t, parse(t, map[string]any{"s": child(t, testkit.ModeServer, nil)}, nil), hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	call(t, h, "s__echo", `{"text":"secret value"}`)
	call(t, h, "s__fail", `{}`)
	h.Close() // flushes the queue
	calls, err := st.Calls(context.Background(), store.CallFilter{Server: "s"})
	if err != nil || len(calls) != 2 {
		t.Fatalf("calls = %+v, %v", calls, err)
	}
	byTool := map[string]store.Call{}
	for _, c := range calls {
		byTool[c.Tool] = c
	}
	echo := byTool["s:echo"]
	if echo.Outcome != "ok" || echo.ArgShape != `{"text":"string"}` || echo.BytesIn == 0 || echo.Latency <= 0 {
		t.Errorf("echo row = %+v", echo)
	}
	if fail := byTool["s:fail"]; fail.Outcome != "tool_error" {
		t.Errorf("fail row = %+v", fail)
	}
	for _, c := range calls {
		if strings.Contains(fmt.Sprintf("%+v", c), "secret value") {
			t.Errorf("an argument value reached the audit log: %+v", c)
		}
	}
}

// TestIdleTimeout: a stdio server idle longer than idleTimeoutMs is
// stopped, and the next call starts it again.
func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	tag := "idle-" + fmt.Sprint(time.Now().UnixNano())
	h := open(t, parse(t, map[string]any{
		"s": map[string]any{"command": self(t), "args": []string{tag}, "env": testkit.ChildEnv(testkit.ModeServer), "idleTimeoutMs": 200},
	}, nil))
	call(t, h, "s__echo", `{"text":"a"}`)
	if !proc.Eventually(10*time.Second, func() bool { return len(tagged(tag)) == 0 && status(h, "s").State == host.StateIdle }) {
		t.Fatalf("idle server still running: %d processes, state %s", len(tagged(tag)), status(h, "s").State)
	}
	if got := call(t, h, "s__echo", `{"text":"again"}`).Text; got != "again" {
		t.Errorf("echo after idle stop = %q", got)
	}
}

// BenchmarkFirstList measures the time from Open to the first tool list for
// 1, 5 and 20 stdio servers: live (every server started and discovered)
// against a saved catalogue (none started).
func BenchmarkFirstList(b *testing.B) {
	for _, n := range []int{1, 5, 20} {
		tag := fmt.Sprintf("bench-first-list-%d", n)
		cfg := parse(b, taggedServers(b, n, tag), nil)
		for _, mode := range []string{"live", "catalogue"} {
			b.Run(fmt.Sprintf("servers=%d/start=%s", n, mode), func(b *testing.B) {
				st, err := sqlite.Open(filepath.Join(b.TempDir(), "state.db"), nil)
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				opts := &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond}
				if mode == "catalogue" {
					hostlink.WithStore(opts, st)
					h, err := host.Open(context.Background(), cfg, opts) // saves the catalogues
					if err != nil {
						b.Fatal(err)
					}
					h.Close()
				}
				for b.Loop() {
					h, err := host.Open(context.Background(), cfg, opts)
					if err != nil {
						b.Fatal(err)
					}
					if len(h.Tools()) == 0 {
						b.Fatal("no tools")
					}
					b.StopTimer()
					h.Close()
					b.StartTimer()
				}
			})
		}
	}
}

// TestLockToolList: with lockToolList, a server's list changes after the
// first snapshot are refused; without it they are taken.
func TestLockToolList(t *testing.T) {
	t.Parallel()
	for _, lock := range []bool{true, false} {
		t.Run(fmt.Sprint("lock=", lock), func(t *testing.T) {
			var logs syncBuf
			changed := make(chan struct{}, 4)
			h := openWith(t, parse(t, map[string]any{"s": child(t, testkit.ModeServer, map[string]any{"lockToolList": lock})}, nil),
				&host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
					OnChange: func() { changed <- struct{}{} }})
			call(t, h, "s__grow", `{}`)
			if lock {
				if !proc.Eventually(10*time.Second, func() bool { return strings.Contains(logs.String(), "refused (lockToolList)") }) {
					t.Fatalf("no refusal logged:\n%s", logs.String())
				}
				if _, err := h.Tool("s__grown"); err == nil {
					t.Error("a locked server's new tool was registered")
				}
				return
			}
			select {
			case <-changed:
			case <-time.After(10 * time.Second):
				t.Fatal("no change event")
			}
			if _, err := h.Tool("s__grown"); err != nil {
				t.Errorf("the new tool is missing: %v", err)
			}
		})
	}
}

// syncBuf is a goroutine-safe log sink.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAuditRefusals: a call refused before it went out, by a deny rule or
// a spent quota, leaves a row with its code and the argument shape only.
func TestAuditRefusals(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	data, err := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"s": child(t, testkit.ModeServer, nil)},
		"policy": map[string]any{
			"rules": []any{map[string]any{"deny": "s:fail"}},
			"quota": map[string]any{"calls": 1, "perMs": 60000},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	h := openWith(t, cfg, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	ctx := context.Background()
	if _, err := h.Call(ctx, "s__fail", json.RawMessage(`{"why":"secret value"}`), nil); fault.CodeOf(err) != fault.CodePolicyBlocked {
		t.Fatalf("denied call: %v, want policy_blocked", err)
	}
	call(t, h, "s__echo", `{"text":"first"}`)
	if _, err := h.Call(ctx, "s__echo", json.RawMessage(`{"text":"secret value"}`), nil); fault.CodeOf(err) != fault.CodeRateLimited {
		t.Fatalf("call over quota: %v, want rate_limited", err)
	}
	h.Close() // flushes the queue
	calls, err := st.Calls(ctx, store.CallFilter{Server: "s"})
	if err != nil || len(calls) != 3 {
		t.Fatalf("calls = %+v, %v; want 3 rows", calls, err)
	}
	type row struct{ tool, outcome, code, shape string }
	want := map[row]bool{
		{"s:fail", "error", "policy_blocked", `{"why":"string"}`}: true,
		{"s:echo", "ok", "", `{"text":"string"}`}:                 true,
		{"s:echo", "error", "rate_limited", `{"text":"string"}`}:  true,
	}
	for _, c := range calls {
		r := row{c.Tool, c.Outcome, c.Code, c.ArgShape}
		if !want[r] {
			t.Errorf("unexpected row %+v", c)
		}
		delete(want, r)
		if strings.Contains(fmt.Sprintf("%+v", c), "secret value") {
			t.Errorf("an argument value reached the audit log: %+v", c)
		}
	}
	for r := range want {
		t.Errorf("no row %+v", r)
	}
}

// TestQuotaSharedThroughStore: two hosts on one store (two processes
// sharing a home, or replicas sharing PostgreSQL) share the quota, and a
// reload does not reset it.
func TestQuotaSharedThroughStore(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	data, err := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"s": child(t, testkit.ModeServer, nil)},
		"policy":     map[string]any{"quota": map[string]any{"calls": 3, "perMs": 3600000}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var hosts []*host.Host
	for range 2 {
		st, err := sqlite.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		hosts = append(hosts, openWith(t, cfg, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st)))
	}
	a, b := hosts[0], hosts[1]
	call(t, a, "s__echo", `{"text":"1"}`)
	call(t, b, "s__echo", `{"text":"2"}`)
	call(t, a, "s__echo", `{"text":"3"}`)
	for name, h := range map[string]*host.Host{"a": a, "b": b} {
		if _, err := h.Call(context.Background(), "s__echo", json.RawMessage(`{"text":"4"}`), nil); fault.CodeOf(err) != fault.CodeRateLimited {
			t.Errorf("%s's call past the shared quota: %v, want rate_limited", name, err)
		}
	}
	if err := a.Reload(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Call(context.Background(), "s__echo", json.RawMessage(`{"text":"5"}`), nil); fault.CodeOf(err) != fault.CodeRateLimited {
		t.Errorf("call after a reload: %v, want still rate_limited", err)
	}
}

// TestCallsRightAfterCrashRedial: calls made the moment a crashed call
// returns, before or while the exit is recorded, redial the server; none
// meets a half-recorded drop (no connection, yet a supervisor that still
// counts the server as connected and so refuses the dial).
func TestCallsRightAfterCrashRedial(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var fails atomic.Int32
	const rounds, callers = 10, 6
	for i := range rounds {
		h := open(t, parse(t, map[string]any{"s": child(t, testkit.ModeServer, nil)}, nil))
		if _, err := h.Call(ctx, "s__crash", nil, nil); !errors.Is(err, host.ErrUnknownOutcome) {
			t.Fatalf("crash: %v, want unknown outcome", err)
		}
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				if _, err := h.Call(ctx, "s__echo", json.RawMessage(`{"text":"b"}`), nil); err != nil {
					fails.Add(1)
					t.Logf("round %d: call after the crash: %v", i, err)
				}
			})
		}
		wg.Wait()
		h.Close()
	}
	if n := fails.Load(); n > 0 {
		t.Errorf("%d of %d calls right after a crash failed", n, rounds*callers)
	}
}
