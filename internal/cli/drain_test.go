package cli_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestServeDrainDelay: a replica sent SIGTERM is not ready (/readyz and
// /healthz?ready answer 503) at once, while it lives (/healthz 200) and
// serves calls as before, on a connection kept alive from before the
// signal and on new ones, for --drain-delay; only then does it refuse
// connections, and it exits.
func TestServeDrainDelay(t *testing.T) {
	// Serial: it bounds in wall-clock time how a real process drains.
	exe, _ := os.Executable()
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"kit": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer), "eager": true},
	}})
	const delay, grace = 2 * time.Second, 3 * time.Second
	r := startReplica(t, nil, "--config", cfg, "--drain-delay", delay.String(), "--grace", grace.String())
	if !proc.Eventually(10*time.Second, func() bool { return r.get("/readyz") == 200 }) {
		t.Fatalf("not ready:\n%s", r.stderr.String())
	}
	var dials atomic.Int64
	kept := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}}
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	call := func(c *http.Client) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.endpoint, strings.NewReader(modernCall))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "kit__echo")
		resp, err := c.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := call(kept); status != 200 || !strings.Contains(body, `"text":"stateless"`) {
		t.Fatalf("a call before SIGTERM: %d %s", status, body)
	}

	signalled := time.Now()
	r.cmd.Process.Signal(syscall.SIGTERM)
	if !proc.Eventually(time.Second, func() bool { return r.get("/readyz") == 503 }) {
		t.Fatalf("/readyz %d a second after SIGTERM, want 503:\n%s", r.get("/readyz"), r.stderr.String())
	}
	t.Logf("not ready %v after SIGTERM", time.Since(signalled).Round(time.Millisecond))
	calls := 0
	for time.Since(signalled) < delay-300*time.Millisecond {
		for _, c := range []*http.Client{kept, fresh} {
			if status, body := call(c); status != 200 || !strings.Contains(body, `"text":"stateless"`) {
				t.Fatalf("a call %v after SIGTERM, within --drain-delay %v: %d %s", time.Since(signalled).Round(time.Millisecond), delay, status, body)
			}
			calls++
		}
		if got := r.get("/healthz?ready"); got != 503 {
			t.Errorf("/healthz?ready while draining: %d, want 503", got)
		}
		if got := r.get("/healthz"); got != 200 {
			t.Errorf("/healthz while draining: %d, want 200", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the kept-alive client dialled %d times; want its one connection kept through the drain delay", n)
	}
	t.Logf("%d calls answered within the drain delay", calls)

	// Then connections are refused, and the process exits.
	if !proc.Eventually(grace, func() bool {
		c, err := net.Dial("tcp", strings.TrimPrefix(r.base, "http://"))
		if err == nil {
			c.Close()
		}
		return err != nil
	}) {
		t.Fatalf("connections still accepted %v after SIGTERM:\n%s", time.Since(signalled), r.stderr.String())
	}
	if took := time.Since(signalled); took < delay {
		t.Errorf("connections refused %v after SIGTERM, before --drain-delay %v", took, delay)
	}
	select {
	case <-r.exited:
		t.Logf("exited %v after SIGTERM", time.Since(signalled).Round(time.Millisecond))
	case <-time.After(grace + 3*time.Second):
		t.Fatalf("still running %v after SIGTERM:\n%s", time.Since(signalled), r.stderr.String())
	}
	for _, want := range []string{"serving for 2s more (--drain-delay)", "no new connections", "switchboard: stopped"} {
		if !strings.Contains(r.stderr.String(), want) {
			t.Errorf("stderr has no %q:\n%s", want, r.stderr.String())
		}
	}
}
