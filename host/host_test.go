package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/demo"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

func TestMain(m *testing.M) {
	launcher.MaybeRunShim()
	testkit.MaybeRunChild()
	hostile.MaybeRunChild()
	maybeRunDoomedHost()
	if len(os.Args) > 1 && os.Args[1] == "demo-server" {
		// The embedded default config launches "<self> demo-server".
		if err := demo.ServeStdio(context.Background(), "test"); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The sandbox's private directories of the servers started here go
	// to a directory of this run, not the user's cache.
	cache, err := os.MkdirTemp("", "switchboard-test-cache-")
	if err == nil {
		os.Setenv("XDG_CACHE_HOME", cache)
	}
	testkit.WaitingParallel()
	code := pgtest.Main(m)
	os.RemoveAll(cache)
	os.Exit(code)
}

// self is the test binary, re-executed as MCP servers.
func self(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// child returns a stdio server entry running the test binary in mode.
func child(t testing.TB, mode string, extra map[string]any) map[string]any {
	s := map[string]any{"command": self(t), "env": testkit.ChildEnv(mode)}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// parse builds a configuration through the real parser. A stdio server
// that says nothing of its sandbox runs in the default one, with the
// machine's temporary directory granted, where tests keep the files their
// servers read and write.
func parse(t testing.TB, servers map[string]any, lookup map[string]string) *config.Config {
	t.Helper()
	for _, s := range servers {
		m, ok := s.(map[string]any)
		if !ok {
			continue
		}
		if m["command"] != nil && m["sandbox"] == nil {
			m["sandbox"] = testSandbox
		}
		if m["startupTimeoutMs"] == nil {
			m["startupTimeoutMs"] = testStartupMs
		}
	}
	data, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data, "test.json", &config.LoadOptions{LookupEnv: func(k string) (string, bool) {
		v, ok := lookup[k]
		return v, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// testStartupMs is a test server's startup timeout unless it sets its
// own: a minute, as a machine busy with other test packages under the
// race detector needs to start and list even an in-process server. A
// test of the startup timeout sets a shorter one.
const testStartupMs = 60000

// testSandbox is the default sandbox with the temporary directory granted.
var testSandbox = map[string]any{"write": []string{os.TempDir()}}

var fastOpts = &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond}

func open(t testing.TB, cfg *config.Config) *host.Host {
	t.Helper()
	return openWith(t, cfg, fastOpts)
}

func openWith(t testing.TB, cfg *config.Config, opts *host.Options) *host.Host {
	t.Helper()
	h, err := host.Open(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func status(h *host.Host, name string) host.ServerStatus {
	for _, s := range h.Servers() {
		if s.Name == name {
			return s
		}
	}
	return host.ServerStatus{}
}

func call(t testing.TB, h *host.Host, name, args string) *host.Result {
	t.Helper()
	res, err := h.Call(context.Background(), name, json.RawMessage(args), nil)
	if err != nil {
		t.Fatalf("Call(%s): %v", name, err)
	}
	return res
}

// TestOneBadServerDoesNotStopTheOthers starts good and bad stdio servers
// side by side: each bad one is reported with a reason naming it, the good
// ones work, and Open is bounded by the startup timeouts.
func TestOneBadServerDoesNotStopTheOthers(t *testing.T) {
	t.Parallel()
	cfg := parse(t, map[string]any{
		"good":     child(t, testkit.ModeServer, nil),
		"noisy":    child(t, testkit.ModeNoisy, nil),
		"hang":     child(t, testkit.ModeHang, map[string]any{"startupTimeoutMs": 1500}),
		"exits":    child(t, testkit.ModeExit, nil),
		"missing":  map[string]any{"command": "no-such-program-switchboard-test"},
		"disabled": child(t, testkit.ModeServer, map[string]any{"enabled": false}),
	}, nil)
	// The hanging server never answers: Open returns only because its
	// startup timeout ends the wait for it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := host.Open(ctx, cfg, fastOpts)
	if err != nil {
		t.Fatalf("Open waited on the hanging server: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	// hang and exits failed their first start-up attempt and are retried
	// in the background (backoff); a missing program is not retried.
	want := map[string][]host.State{
		"good": {host.StateReady}, "noisy": {host.StateReady}, "hang": {host.StateBackoff, host.StateStarting, host.StateFailed},
		"exits": {host.StateBackoff, host.StateStarting, host.StateFailed}, "missing": {host.StateFailed}, "disabled": {host.StateDisabled},
	}
	for name, st := range want {
		if got := status(h, name); !slices.Contains(st, got.State) {
			t.Errorf("server %s: state %s, want one of %v (error: %s)", name, got.State, st, got.LastError)
		}
	}
	if e := status(h, "missing").LastError; !strings.Contains(e, `"missing"`) || !strings.Contains(e, "no-such-program-switchboard-test") {
		t.Errorf("missing program error does not name server and program: %s", e)
	}
	if e := status(h, "exits").LastError; !strings.Contains(e, "cannot open database") || strings.Contains(e, "\x1b") {
		t.Errorf("exit error should carry the escaped stderr tail: %q", e)
	}
	if e := status(h, "hang").LastError; !strings.Contains(e, "timeout") {
		t.Errorf("hang error should be a timeout: %s", e)
	}
	noisy := status(h, "noisy")
	if len(noisy.Stderr) == 0 || len(noisy.Stderr) > 80<<10 || strings.Contains(noisy.Stderr, "\x1b") {
		t.Errorf("noisy stderr tail: %d bytes, escaped=%v; want a bounded, escaped tail", len(noisy.Stderr), !strings.Contains(noisy.Stderr, "\x1b"))
	}
	if got := call(t, h, "good__echo", `{"text":"hi"}`).Text; got != "hi" {
		t.Errorf("echo = %q", got)
	}
	if got := call(t, h, "noisy:echo", `{"text":"yo"}`).Text; got != "yo" {
		t.Errorf("echo via canonical ID = %q", got)
	}
	_, err = h.Call(context.Background(), "disabled__echo", nil, nil)
	if !errors.Is(err, host.ErrUnavailable) || !strings.Contains(err.Error(), "disabled") {
		t.Errorf("model-facing name on a disabled server: %v, want unavailable naming why", err)
	}
	_, err = h.Call(context.Background(), "disabled:echo", nil, nil)
	if !errors.Is(err, host.ErrUnavailable) || !strings.Contains(err.Error(), "disabled") {
		t.Errorf("canonical ID on a disabled server: %v, want unavailable naming why", err)
	}
}

// TestDiscoveryDrainsPages drains every list of a stdio server in both
// eras: the default (2026-07-28) and pinned to 2025-11-25.
func TestDiscoveryDrainsPages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ pin, want string }{{"", "2026-07-28"}, {"2025-11-25", "2025-11-25"}} {
		t.Run("version "+tc.want, func(t *testing.T) {
			var extra map[string]any
			if tc.pin != "" {
				extra = map[string]any{"protocolVersion": tc.pin}
			}
			h := open(t, parse(t, map[string]any{"s": child(t, testkit.ModeServer, extra)}, nil))
			// The test server pages every list two items at a time.
			var got []string
			for _, tl := range h.Tools() {
				got = append(got, tl.Name)
			}
			want := "s__ask s__big s__bigframe s__crash s__echo s__fail s__grow s__roots s__sample s__slow s__stubborn"
			if strings.Join(got, " ") != want {
				t.Errorf("tools = %v, want %s", got, want)
			}
			st := status(h, "s")
			if st.ProtocolVersion != tc.want || st.Resources != 1 || st.Templates != 1 || st.Prompts != 1 || st.Instructions == "" {
				t.Errorf("status = %+v, want protocol %s", st, tc.want)
			}
			tl, err := h.Tool("s:echo")
			if err != nil || tl.Name != "s__echo" || !strings.Contains(string(tl.InputSchema), `"text"`) {
				t.Errorf("Tool(s:echo) = %+v, %v", tl, err)
			}
			r, err := h.ReadResource(context.Background(), "s:test://items/42")
			if err != nil || r.Text != "item 42" {
				t.Errorf("read template instance = %+v, %v", r, err)
			}
			p, err := h.GetPrompt(context.Background(), "s:greet", map[string]string{"name": "Ada"}, nil)
			if err != nil || p.Text != "user: Hello, Ada" {
				t.Errorf("prompt = %+v, %v", p, err)
			}
		})
	}
}

func TestCallOutcomes(t *testing.T) {
	t.Parallel()
	h := open(t, parse(t, map[string]any{
		"s": child(t, testkit.ModeServer, nil),
		// callTimeoutMs bounds its start's lists too: long enough for
		// those on a busy machine, far below the slow call below.
		"quick": child(t, testkit.ModeServer, map[string]any{"callTimeoutMs": 5000}),
	}, nil))
	ctx := context.Background()

	t.Run("tool error is data", func(t *testing.T) {
		res := call(t, h, "s__fail", `{}`)
		if !res.IsError || !strings.Contains(res.Text, "on purpose") {
			t.Errorf("fail = %+v", res)
		}
	})
	t.Run("progress routed to the call", func(t *testing.T) {
		var mu sync.Mutex
		var seen []host.Progress
		opts := &host.CallOptions{Progress: func(p host.Progress) { mu.Lock(); seen = append(seen, p); mu.Unlock() }}
		// Two concurrent calls must each get only their own progress.
		var wg sync.WaitGroup
		wg.Go(func() { h.Call(ctx, "s__slow", json.RawMessage(`{"steps":2,"delay_ms":10}`), nil) })
		res, err := h.Call(ctx, "s__slow", json.RawMessage(`{"steps":3,"delay_ms":20}`), opts)
		wg.Wait()
		if err != nil || res.Text != "done" {
			t.Fatalf("slow = %+v, %v", res, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 3 || seen[2].Progress != 3 || seen[2].Total != 3 {
			t.Errorf("progress = %+v, want 3 reports ending 3/3", seen)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		// The call would take two minutes: one that returns within one
		// was ended by its deadline, not by the server.
		start := time.Now()
		_, err := h.Call(cctx, "s__slow", json.RawMessage(`{"steps":1200,"delay_ms":100}`), nil)
		if err == nil || time.Since(start) > time.Minute {
			t.Errorf("cancelled call: %v after %v", err, time.Since(start))
		}
		if !errors.Is(err, host.ErrTimeout) {
			t.Errorf("caller deadline: %v, want ErrTimeout", err)
		}
		// The server is still usable.
		if got := call(t, h, "s__echo", `{"text":"after"}`).Text; got != "after" {
			t.Errorf("echo after cancel = %q", got)
		}
	})
	t.Run("server timeout", func(t *testing.T) {
		// Two minutes: only the server's call timeout ends it.
		_, err := h.Call(ctx, "quick__slow", json.RawMessage(`{"steps":1200,"delay_ms":100}`), nil)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.CodeTimeout || fe.Server != "quick" {
			t.Errorf("err = %v, want a timeout naming server quick", err)
		}
	})
	t.Run("unknown tool suggests", func(t *testing.T) {
		_, err := h.Call(ctx, "s__ecoh", nil, nil)
		if !errors.Is(err, host.ErrNotFound) || !strings.Contains(err.Error(), `"s__echo"`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("arguments must be an object", func(t *testing.T) {
		_, err := h.Call(ctx, "s__echo", json.RawMessage(`[1]`), nil)
		if !errors.Is(err, host.ErrInvalidParams) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("large result", func(t *testing.T) {
		// The text reaches the host whole; a model gets a preview and the
		// whole text in pages (context.spillBytes); a person (KeepWhole)
		// gets it cut to the configured cap (security.resultTextMaxBytes),
		// with a marker that says so.
		res := call(t, h, "s__big", `{"bytes":300000}`)
		if whole := readSpilled(t, h, res); whole != strings.Repeat("b", 300000) {
			t.Errorf("spilled text = %d bytes", len(whole))
		}
		res, err := h.Call(context.Background(), "s__big", json.RawMessage(`{"bytes":300000}`), &host.CallOptions{KeepWhole: true})
		if err != nil || len(res.Text) != config.DefaultResultTextMaxBytes || !strings.HasSuffix(res.Text, "[switchboard: result truncated: 300000 bytes, showing the first 102328]") {
			t.Errorf("big result text = %d bytes, ending %q", len(res.Text), res.Text[max(0, len(res.Text)-80):])
		}
	})
}

// TestCrashMidCall: the call reports that its outcome is unknown and is
// not retried (the tool ran exactly once), the server is degraded, the next
// call reconnects, and the other server is untouched.
func TestCrashMidCall(t *testing.T) {
	t.Parallel()
	mark := filepath.Join(t.TempDir(), "runs")
	env := testkit.ChildEnv(testkit.ModeServer)
	env[testkit.MarkVar] = mark
	h := open(t, parse(t, map[string]any{
		"crashy": map[string]any{"command": self(t), "env": env},
		"other":  child(t, testkit.ModeServer, nil),
	}, nil))
	_, err := h.Call(context.Background(), "crashy__crash", nil, nil)
	if !errors.Is(err, host.ErrUnknownOutcome) {
		t.Fatalf("crash mid-call: %v, want unknown outcome", err)
	}
	if !proc.Eventually(5*time.Second, func() bool { return status(h, "crashy").State == host.StateDegraded }) {
		t.Fatalf("state = %s, want degraded", status(h, "crashy").State)
	}
	if e := status(h, "crashy").LastError; !strings.Contains(e, "exit status 7") {
		t.Errorf("last error = %q, want the exit status", e)
	}
	if runs, _ := os.ReadFile(mark); string(runs) != "crash\n" {
		t.Errorf("the crashing tool ran %d times, want exactly once", strings.Count(string(runs), "crash"))
	}
	if got := call(t, h, "crashy__echo", `{"text":"back"}`).Text; got != "back" {
		t.Errorf("call after crash = %q: the next call must reconnect", got)
	}
	if st := status(h, "crashy"); st.State != host.StateReady || st.LastError != "" {
		t.Errorf("after reconnecting: %s %q", st.State, st.LastError)
	}
	if got := call(t, h, "other__echo", `{"text":"fine"}`).Text; got != "fine" {
		t.Errorf("other server: %q", got)
	}
}

// TestOversizedFrame: a server writing an endless line is failed with a
// clear error once it passes the cap, and memory does not follow it.
func TestOversizedFrame(t *testing.T) {
	t.Parallel()
	h, err := host.Open(context.Background(), parse(t, map[string]any{"s": child(t, testkit.ModeBigFrameAfter, nil)}, nil),
		&host.Options{Ephemeral: true, ProbeTimeout: time.Second, StopTimeout: 500 * time.Millisecond, MaxFrame: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	_, err = h.Call(context.Background(), "s__bigframe", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "frame") || !strings.Contains(err.Error(), "4 MiB") {
		t.Fatalf("err = %v, want the frame cap named", err)
	}
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Server != "s" {
		t.Errorf("err = %#v, want a fault naming the server", err)
	}
}

// TestLegacyFallback: servers that ignore or die on server/discover still
// connect on the legacy handshake; results with content types unknown to
// go-sdk arrive whole, with a diagnostic line in the text.
func TestLegacyFallback(t *testing.T) {
	t.Parallel()
	h := openWith(t, parse(t, map[string]any{
		"silent": child(t, testkit.ModeLegacySilent, nil),
		"dies":   child(t, testkit.ModeLegacyDie, nil),
		"novel":  child(t, testkit.ModeLegacyNovel, nil),
	}, nil), &host.Options{Ephemeral: true, ProbeTimeout: time.Second, StopTimeout: 500 * time.Millisecond})
	for _, name := range []string{"silent", "dies", "novel"} {
		st := status(h, name)
		if st.State != host.StateReady || st.ProtocolVersion != "2025-11-25" {
			t.Errorf("%s: %s %s %s", name, st.State, st.ProtocolVersion, st.LastError)
		}
	}
	res := call(t, h, "novel__novel", `{}`)
	if !strings.Contains(string(res.Raw), `"hologram"`) || !strings.Contains(string(res.Raw), `"futureField"`) {
		t.Errorf("raw result lost data: %s", res.Raw)
	}
	// Its 8-byte "image" is not a PNG: the result guard replaces it
	// with a placeholder and keeps the rest.
	want := "before\n[unsupported content type \"hologram\", 30 bytes of JSON]\n[switchboard: image rejected from server novel: bad_header: no complete header in the first 8 bytes]"
	if res.Text != want {
		t.Errorf("text = %q, want %q", res.Text, want)
	}
}

// TestProtocolEras: which era a stdio server speaks, by configuration. The
// test server speaks both; unpinned, it gets 2026-07-28, and so does a
// server that refuses initialize. A pinned version is spoken or the server
// fails, with no fallback.
func TestProtocolEras(t *testing.T) {
	t.Parallel()
	pin := func(v string) map[string]any { return map[string]any{"protocolVersion": v} }
	h := openWith(t, parse(t, map[string]any{
		"default":       child(t, testkit.ModeServer, nil),
		"modern":        child(t, testkit.ModeServer, pin("2026-07-28")),
		"old":           child(t, testkit.ModeServer, pin("2025-06-18")),
		"modernonly":    child(t, testkit.ModeModernOnly, nil),
		"pinnedonly":    child(t, testkit.ModeModernOnly, pin("2026-07-28")),
		"nodiscover":    child(t, testkit.ModeLegacyNovel, map[string]any{"protocolVersion": "2026-07-28", "startupAttempts": 1}),
		"refusedlegacy": child(t, testkit.ModeModernOnly, map[string]any{"protocolVersion": "2025-11-25", "startupAttempts": 1}),
	}, nil), &host.Options{Ephemeral: true, ProbeTimeout: time.Second, StopTimeout: 500 * time.Millisecond})
	for name, want := range map[string]string{
		"default":    "2026-07-28",
		"modern":     "2026-07-28",
		"old":        "2025-06-18",
		"modernonly": "2026-07-28",
		"pinnedonly": "2026-07-28",
	} {
		st := status(h, name)
		if st.State != host.StateReady || st.ProtocolVersion != want {
			t.Errorf("%s: %s %q %s, want ready on %s", name, st.State, st.ProtocolVersion, st.LastError, want)
			continue
		}
		if got := call(t, h, name+"__echo", `{"text":"via `+name+`"}`).Text; got != "via "+name {
			t.Errorf("%s echo = %q", name, got)
		}
	}
	// Pinned to 2026-07-28, a server that refuses server/discover is not
	// offered initialize.
	if st := status(h, "nodiscover"); st.State == host.StateReady || !strings.Contains(st.LastError, "server/discover") || !strings.Contains(st.LastError, "Method not found") {
		t.Errorf("nodiscover: %s %q, want a failure naming its refusal of server/discover", st.State, st.LastError)
	}
	// Pinned to a legacy version, a refusal of initialize is final.
	if st := status(h, "refusedlegacy"); st.State == host.StateReady || !strings.Contains(st.LastError, "initialize is not supported") {
		t.Errorf("refusedlegacy: %s %q, want the refusal of initialize", st.State, st.LastError)
	}
}

// TestHTTPProtocolVersion: a pinned version reaches HTTP and SSE servers:
// a stateless server, which would negotiate 2026-07-28, speaks the legacy
// version it is pinned to, or 2026-07-28 when pinned to it; an SSE server
// speaks its pinned legacy version.
func TestHTTPProtocolVersion(t *testing.T) {
	t.Parallel()
	get := func(*http.Request) *mcp.Server { return testkit.NewServer() }
	stateless := httptest.NewServer(mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(stateless.Close)
	sse := httptest.NewServer(mcp.NewSSEHandler(get, nil))
	t.Cleanup(sse.Close)
	h := open(t, parse(t, map[string]any{
		"http-legacy": map[string]any{"url": stateless.URL, "protocolVersion": "2025-06-18", "trust": "trusted"},
		"http-modern": map[string]any{"url": stateless.URL, "protocolVersion": "2026-07-28", "trust": "trusted"},
		"sse":         map[string]any{"type": "sse", "url": sse.URL, "protocolVersion": "2025-03-26", "trust": "trusted"},
	}, nil))
	for name, want := range map[string]string{"http-legacy": "2025-06-18", "http-modern": "2026-07-28", "sse": "2025-03-26"} {
		if st := status(h, name); st.State != host.StateReady || st.ProtocolVersion != want {
			t.Errorf("%s: %s %q %s, want ready on %s", name, st.State, st.ProtocolVersion, st.LastError, want)
		}
		if got := call(t, h, name+"__echo", `{"text":"via `+name+`"}`).Text; got != "via "+name {
			t.Errorf("%s echo = %q", name, got)
		}
	}
}

// TestHTTP serves the test server over Streamable HTTP (stateless, so the
// modern era; and stateful, so the legacy era) and legacy SSE, with a
// bearer token from the environment.
func TestHTTP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	auth := map[string]string{}
	record := func(name string, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			auth[name] = r.Header.Get("Authorization")
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}
	get := func(*http.Request) *mcp.Server { return testkit.NewServer() }
	// Cleanups run last-in first-out: the host closes before the servers.
	modern := httptest.NewServer(record("modern", mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})))
	t.Cleanup(modern.Close)
	legacy := httptest.NewServer(record("legacy", mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{})))
	t.Cleanup(legacy.Close)
	sse := httptest.NewServer(record("sse", mcp.NewSSEHandler(get, nil)))
	t.Cleanup(sse.Close)

	h := open(t, parse(t, map[string]any{
		"modern": map[string]any{"url": modern.URL, "bearerTokenEnvVar": "TEST_TOKEN", "trust": "trusted"},
		"legacy": map[string]any{"type": "streamable-http", "url": legacy.URL, "trust": "trusted"},
		"sse":    map[string]any{"type": "sse", "url": sse.URL, "headers": map[string]any{"X-Team": "${TEAM}"}, "trust": "trusted"},
	}, map[string]string{"TEST_TOKEN": "s3cret", "TEAM": "blue"}))

	wantVersion := map[string]string{"modern": "2026-07-28", "legacy": "2025-11-25", "sse": "2025-11-25"}
	for name, v := range wantVersion {
		if st := status(h, name); st.State != host.StateReady || st.ProtocolVersion != v {
			t.Errorf("%s: %s %q %s, want ready %s", name, st.State, st.ProtocolVersion, st.LastError, v)
		}
		if got := call(t, h, name+"__echo", `{"text":"via `+name+`"}`).Text; got != "via "+name {
			t.Errorf("%s echo = %q", name, got)
		}
		if whole := readSpilled(t, h, call(t, h, name+"__big", `{"bytes":200000}`)); len(whole) != 200000 {
			t.Errorf("%s big = %d bytes", name, len(whole))
		}
		var n int
		res, err := h.Call(context.Background(), name+"__slow", json.RawMessage(`{"steps":2,"delay_ms":5}`),
			&host.CallOptions{Progress: func(host.Progress) { n++ }})
		if err != nil || res.Text != "done" || n != 2 {
			t.Errorf("%s slow: %v %v, %d progress reports", name, res, err, n)
		}
		if r, err := h.ReadResource(context.Background(), name+":test://static"); err != nil || r.Text != "static text" {
			t.Errorf("%s read: %v %v", name, r, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if auth["modern"] != "Bearer s3cret" {
		t.Errorf("modern server saw Authorization %q", auth["modern"])
	}
	if auth["legacy"] != "" {
		t.Errorf("legacy server saw Authorization %q; tokens must only go where configured", auth["legacy"])
	}
}

// TestProcessHygiene: after Close no child, grandchild or zombie remains,
// including a grandchild started by a shell wrapper.
func TestProcessHygiene(t *testing.T) {
	cfg := parse(t, map[string]any{
		"a": child(t, testkit.ModeGrandchild, nil),
		// sh -c 'sleep 1000 & exec server': the shell leaves a grandchild.
		"b": map[string]any{"command": "sh", "args": []string{"-c", `sleep 1000 & exec "$0"`, self(t)}, "env": testkit.ChildEnv(testkit.ModeServer)},
		"c": child(t, testkit.ModeServer, nil),
	}, nil)
	h, err := host.Open(context.Background(), cfg, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	kids := proc.Children(os.Getpid())
	var groups []int
	for _, k := range kids {
		if k.PGID == k.PID {
			groups = append(groups, k.PGID)
		}
	}
	if len(groups) < 3 {
		t.Fatalf("expected 3 child process groups, found %v", kids)
	}
	var members int
	for _, g := range groups {
		members += len(proc.Live(proc.InGroup(g)))
	}
	if members < 5 { // 3 servers + 2 sleeps
		t.Fatalf("expected the servers and their grandchildren alive, found %d processes", members)
	}
	if err := h.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	for _, g := range groups {
		if left := proc.Live(proc.InGroup(g)); len(left) > 0 {
			t.Errorf("group %d still has live processes %v", g, left)
		}
		// Killed grandchildren were reparented to init; give it a moment
		// to reap them.
		if !proc.Eventually(5*time.Second, func() bool { return len(proc.InGroup(g)) == 0 }) {
			t.Errorf("group %d still has %v", g, proc.InGroup(g))
		}
	}
	if z := proc.Zombies(os.Getpid()); len(z) > 0 {
		t.Errorf("zombies: %v", z)
	}
	left := slices.DeleteFunc(proc.Live(proc.Children(os.Getpid())), func(p proc.Info) bool { return p.PID == pgtest.ServerPID() })
	if len(left) > 0 {
		t.Errorf("children left: %v", left)
	}
}

// TestEmbeddedDefault runs the demo server the way a fresh install does.
func TestEmbeddedDefault(t *testing.T) {
	t.Parallel()
	h := open(t, config.Default(self(t)))
	if st := status(h, "demo"); st.State != host.StateReady {
		t.Fatalf("demo: %+v", st)
	}
	if got := call(t, h, "demo__echo", `{"text":"hello"}`).Text; got != "hello" {
		t.Errorf("demo echo = %q", got)
	}
	res := call(t, h, "demo__image", `{}`)
	if !strings.Contains(res.Text, "[image image/png") {
		t.Errorf("demo image text = %q", res.Text)
	}
}

// TestCloseDoesNotWaitForCalls: Close cancels calls in flight (they fail
// unavailable) instead of waiting out their timeout, and no progress
// reaches a caller after its call has returned.
func TestCloseDoesNotWaitForCalls(t *testing.T) {
	t.Parallel()
	h, err := host.Open(context.Background(), parse(t, map[string]any{"s": child(t, testkit.ModeServer, map[string]any{"callTimeoutMs": 60000})}, nil), fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	var returned atomic.Bool
	var late atomic.Int32
	progress := &host.CallOptions{Progress: func(host.Progress) {
		if returned.Load() {
			late.Add(1)
		}
	}}
	// A cancelled call whose server keeps reporting: nothing after return.
	cctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err = h.Call(cctx, "s__stubborn", json.RawMessage(`{"delay_ms":600}`), progress)
	returned.Store(true)
	cancel()
	if !errors.Is(err, host.ErrTimeout) {
		t.Errorf("cancelled stubborn call: %v, want timeout", err)
	}
	// The server answers the echo only after stubborn finishes (stdio
	// handlers run concurrently, so it may answer earlier); either way the
	// late progress of the abandoned call has had time to arrive.
	call(t, h, "s__echo", `{"text":"x"}`)
	time.Sleep(700 * time.Millisecond)
	if n := late.Load(); n != 0 {
		t.Errorf("%d progress reports arrived after the call returned", n)
	}

	errc := make(chan error, 1)
	go func() {
		_, err := h.Call(context.Background(), "s__stubborn", json.RawMessage(`{"delay_ms":30000}`), nil)
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond) // let the call reach the server
	closed := make(chan struct{})
	go func() { h.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close waited for a 30 s call")
	}
	if err := <-errc; !errors.Is(err, host.ErrUnavailable) {
		t.Errorf("call in flight at Close: %v, want unavailable", err)
	}
}

// TestHTTPSizeCaps: an oversized HTTP response fails that call as a
// protocol error naming the cap, and the connection keeps classifying
// later errors correctly.
func TestHTTPSizeCaps(t *testing.T) {
	t.Parallel()
	get := func(*http.Request) *mcp.Server { return testkit.NewServer() }
	jsonSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	t.Cleanup(jsonSrv.Close)
	sseSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(sseSrv.Close)
	h := openWith(t, parse(t, map[string]any{
		"j": map[string]any{"url": jsonSrv.URL, "trust": "trusted"},
		"e": map[string]any{"url": sseSrv.URL, "trust": "trusted"},
	}, nil), &host.Options{Ephemeral: true, MaxFrame: 100 << 10, StopTimeout: 500 * time.Millisecond})
	for _, name := range []string{"j", "e"} {
		_, err := h.Call(context.Background(), name+"__big", json.RawMessage(`{"bytes":200000}`), nil)
		if !errors.Is(err, host.ErrProtocol) || !strings.Contains(err.Error(), "100 KiB") {
			t.Errorf("%s: oversized result: %v, want a protocol error naming the 100 KiB cap", name, err)
		}
		if got := call(t, h, name+"__echo", `{"text":"still here"}`).Text; got != "still here" {
			t.Errorf("%s: echo after the oversized result = %q", name, got)
		}
		if _, err := h.Call(context.Background(), name+":nope", nil, nil); !errors.Is(err, host.ErrNotFound) {
			t.Errorf("%s: unknown tool after the oversized result: %v, want not found", name, err)
		}
	}
}

// TestFailedServerNames: a model-facing name with the prefix of a server
// that failed to start says the server is unavailable, not that the tool
// does not exist.
func TestFailedServerNames(t *testing.T) {
	t.Parallel()
	h := open(t, parse(t, map[string]any{"broken": child(t, testkit.ModeExit, nil)}, nil))
	_, err := h.Call(context.Background(), "broken__anything", nil, nil)
	if !errors.Is(err, host.ErrUnavailable) || !strings.Contains(err.Error(), "failed to start") {
		t.Errorf("err = %v, want unavailable, failed to start", err)
	}
}
