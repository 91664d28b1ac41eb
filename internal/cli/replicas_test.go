package cli_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// replica is a `switchboard serve --http` running as a real process.
type replica struct {
	cmd      *exec.Cmd
	stderr   *testkit.Buffer
	endpoint string // http://127.0.0.1:PORT/mcp
	base     string // http://127.0.0.1:PORT
	exited   chan struct{}
}

// startReplica starts `switchboard serve --http 127.0.0.1:0 --no-auth
// args...` and waits for its banner; it is killed at cleanup if still
// running.
func startReplica(t *testing.T, env []string, args ...string) *replica {
	t.Helper()
	return startReplicaIn(t, t.TempDir(), env, args...)
}

// startReplicaIn is startReplica with the home home.
func startReplicaIn(t testing.TB, home string, env []string, args ...string) *replica {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, append([]string{"serve", "--http", "127.0.0.1:0", "--no-auth", "--home", home}, args...)...)
	cmd.Env = append(append(os.Environ(), "SWITCHBOARD_CLI_RUN=1"), env...)
	r := &replica{cmd: cmd, stderr: &testkit.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(r.exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-r.exited
	})
	var m []string
	if !proc.Eventually(20*time.Second, func() bool { m = bannerRE.FindStringSubmatch(r.stderr.String()); return m != nil }) {
		t.Fatalf("no banner:\n%s", r.stderr.String())
	}
	r.endpoint, r.base = m[1]+m[2], m[1]
	return r
}

// get returns the status of GET path on r, or 0 when it has no answer
// (it cannot connect, or none comes within 30 s).
func (r *replica) get(path string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.base+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// connect opens an MCP client session on r.
func (r *replica) connect(ctx context.Context) (*mcp.ClientSession, error) {
	return mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: r.endpoint, HTTPClient: &http.Client{Transport: &http.Transport{}}}, nil)
}

// TestServeDrainsOnSIGTERM: a replica sent SIGTERM with no drain delay
// stops taking new sessions at once (a new initialize is refused, not left
// hanging), lets the call in flight finish and answer, and exits then,
// without waiting out its grace period. (TestServeDrainDelay: with one.)
//
// At once: while the call in flight still runs. The call runs for 10 s,
// the grace is 2 minutes, and each wait has a guard of 30 s, so that only
// the behaviour described ends in time, however busy the machine.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	j := t.TempDir() + "/journal"
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"kit": map[string]any{"command": exe, "env": map[string]string{journalVar: j}, "eager": true},
	}})
	const grace, guard = 2 * time.Minute, 30 * time.Second
	r := startReplica(t, nil, "--config", cfg, "--grace", grace.String(), "--drain-delay", "0")
	ctx, cancel := context.WithTimeout(context.Background(), grace+guard)
	defer cancel()
	cs, err := r.connect(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	slow := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "kit__slow", Arguments: map[string]any{"steps": 20, "delay_ms": 500}})
		slow <- answer{res, err}
	}()
	if !proc.Eventually(guard, func() bool { return strings.Contains(journal(j), "call") }) {
		t.Fatalf("the slow call never reached the server:\n%s", r.stderr.String())
	}

	signalled := time.Now()
	r.cmd.Process.Signal(syscall.SIGTERM)
	if !proc.Eventually(guard, func() bool { return strings.Contains(r.stderr.String(), "draining") }) {
		t.Fatalf("no word of draining after SIGTERM:\n%s", r.stderr.String())
	}
	// A new session is refused while the call in flight still runs, and
	// from then on; an attempt never hangs.
	refusals := 0
	for refusals < 3 {
		finished := len(slow) > 0 // before the attempt: it may be refused as the call ends
		ictx, icancel := context.WithTimeout(ctx, guard)
		s, err := r.connect(ictx)
		hung := ictx.Err() != nil
		icancel()
		switch {
		case hung:
			t.Fatalf("an initialize during the drain still had no answer after %v", guard)
		case refusals == 0 && finished:
			t.Fatalf("a new initialize was not refused before the call in flight finished, %v after SIGTERM (%v)", time.Since(signalled).Round(time.Millisecond), err)
		case err == nil && refusals > 0:
			t.Fatal("a new session was accepted after one had been refused")
		case err == nil:
			s.Close()
		default:
			refusals++
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("refusing new sessions %v after SIGTERM", time.Since(signalled).Round(time.Millisecond))

	var answered time.Time
	select {
	case a := <-slow:
		answered = time.Now()
		if a.err != nil || a.res.IsError || len(a.res.Content) == 0 || a.res.Content[0].(*mcp.TextContent).Text != "done" {
			t.Errorf("the call in flight at SIGTERM: %+v, %v; want done", a.res, a.err)
		}
	case <-time.After(guard):
		t.Fatalf("the call in flight at SIGTERM did not finish within %v", guard)
	}
	select {
	case <-r.exited:
		t.Logf("exited %v after SIGTERM, %v after the call in flight answered", time.Since(signalled).Round(time.Millisecond), time.Since(answered).Round(time.Millisecond))
	case <-time.After(guard):
		t.Fatalf("still running %v after the call in flight answered, with nothing left to finish (--grace %v):\n%s", guard, grace, r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "switchboard: stopped") {
		t.Errorf("stderr:\n%s", r.stderr.String())
	}
}

// TestServeReplicas: two replicas on one PostgreSQL database. Each is
// ready (/readyz, /healthz?ready) while the database answers; a reload of
// one makes the other re-read its own configuration file, through the
// store's change feed (the replicas do not watch their files), and not
// itself again; while the database is unreachable both stay alive
// (/healthz) and serve calls but are not ready (503), and they are ready
// again when it is back.
func TestServeReplicas(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	exe, _ := os.Executable()
	kit := map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer), "eager": true}
	cfgA := writeConfig(t, map[string]any{"mcpServers": map[string]any{"kit": kit}})
	cfgB := writeConfig(t, map[string]any{"mcpServers": map[string]any{"kit": kit}})
	a := startReplica(t, nil, "--config", cfgA, "--store", url, "--watch=false")
	b := startReplica(t, nil, "--config", cfgB, "--store", url, "--watch=false")
	for _, r := range []*replica{a, b} {
		if !proc.Eventually(30*time.Second, func() bool { return r.get("/readyz") == 200 && r.get("/healthz?ready") == 200 }) {
			t.Fatalf("not ready: /readyz %d, /healthz?ready %d\n%s", r.get("/readyz"), r.get("/healthz?ready"), r.stderr.String())
		}
	}

	// A 2026-07-28 call needs no session: either replica answers it.
	for _, r := range []*replica{a, b} {
		if status, body := rawPost(t, r.endpoint, "", modernCall); status != 200 || !strings.Contains(body, `"text":"stateless"`) {
			t.Errorf("a 2026-07-28 call: %d %s", status, body)
		}
	}
	// A legacy session opened on A is unknown to B: 404, at once, so that
	// a client sent there initializes again.
	status, _, session := rawInitialize(t, a.endpoint)
	if status != 200 || session == "" {
		t.Fatalf("legacy initialize on A: %d, session %q", status, session)
	}
	if status, body := rawPost(t, b.endpoint, session, legacyList); status != 404 {
		t.Errorf("A's session on B: %d %s, want 404", status, body)
	}
	if status, body := rawPost(t, a.endpoint, session, legacyList); status != 200 {
		t.Errorf("A's session on A: %d %s, want 200", status, body)
	}

	// A reload of A makes B follow.
	const followed = "(another replica reloaded)"
	signalled := time.Now()
	a.cmd.Process.Signal(syscall.SIGHUP)
	if !proc.Eventually(30*time.Second, func() bool { return strings.Contains(b.stderr.String(), followed) }) {
		t.Fatalf("B did not follow A's reload:\nA: %s\nB: %s", a.stderr.String(), b.stderr.String())
	}
	t.Logf("B reloaded %v after A was sent SIGHUP", time.Since(signalled).Round(time.Millisecond))
	// Then a reload of B makes A follow, re-reading its own file, which
	// names a second server by then: A's line for it says "from 2
	// servers". The database delivers the notices in the order they were
	// sent, so A has had its own before B's; had it followed that one, it
	// would have said so first.
	two, err := os.ReadFile(writeConfig(t, map[string]any{"mcpServers": map[string]any{"kit": kit, "kit2": map[string]any{"command": exe, "env": kit["env"]}}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgA, two, 0o600); err != nil {
		t.Fatal(err)
	}
	b.cmd.Process.Signal(syscall.SIGHUP)
	followedB := regexp.MustCompile(`\(another replica reloaded\): [^\n]* from 2 servers`)
	if !proc.Eventually(30*time.Second, func() bool { return followedB.MatchString(a.stderr.String()) }) {
		t.Fatalf("A did not follow B's reload:\nA: %s\nB: %s", a.stderr.String(), b.stderr.String())
	}
	if n := strings.Count(a.stderr.String(), followed); n != 1 {
		t.Errorf("a reload echoed back: A followed %d reloads, want B's one:\nA: %s\nB: %s", n, a.stderr.String(), b.stderr.String())
	}

	end := pgtest.Outage(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := b.connect(ctx)
	if err != nil {
		t.Fatalf("connect to B during the outage: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "kit__echo", Arguments: map[string]any{"text": "during"}})
	if err != nil || res.IsError {
		t.Errorf("a call during the outage: %+v, %v", res, err)
	}
	for _, r := range []*replica{a, b} {
		if got := r.get("/readyz"); got != 503 {
			t.Errorf("/readyz during the outage: %d, want 503", got)
		}
		if got := r.get("/healthz?ready"); got != 503 {
			t.Errorf("/healthz?ready during the outage: %d, want 503", got)
		}
		if got := r.get("/healthz"); got != 200 {
			t.Errorf("/healthz during the outage: %d, want 200", got)
		}
	}
	end()
	for _, r := range []*replica{a, b} {
		if !proc.Eventually(30*time.Second, func() bool { return r.get("/readyz") == 200 }) {
			t.Errorf("not ready again after the outage: /readyz %d", r.get("/readyz"))
		}
	}
}

// Raw requests, as a load balancer passes them on.
const (
	modernCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"kit__echo","arguments":{"text":"stateless"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	legacyInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	legacyList = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
)

// rawPost posts body to endpoint, on the legacy session if not "", and
// returns the status and body; it fails t if there is no answer within 30s.
func rawPost(t *testing.T, endpoint, session, body string) (int, string) {
	t.Helper()
	status, b, _ := post(t, endpoint, session, body)
	return status, b
}

// rawInitialize opens a legacy session on endpoint.
func rawInitialize(t *testing.T, endpoint string) (status int, body, session string) {
	t.Helper()
	return post(t, endpoint, "", legacyInit)
}

func post(t *testing.T, endpoint, session, body string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	switch {
	case strings.Contains(body, "2026-07-28"):
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "kit__echo")
	case session != "":
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id")
}
