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
// connections, and it exits without waiting out its --grace, having no
// call in flight.
//
// No answer it gives bounds time from above: it announces the drain, and
// its readiness has failed by then; it may stop answering only once the
// drain delay has passed since the test sent the signal (a lower bound),
// and the test checks everything it sees until then. The delay is long,
// so that even a busy machine has the test make its calls within it.
func TestServeDrainDelay(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"kit": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer), "eager": true},
	}})
	const delay, grace = 10 * time.Second, time.Minute
	r := startReplica(t, nil, "--config", cfg, "--drain-delay", delay.String(), "--grace", grace.String())
	if !proc.Eventually(30*time.Second, func() bool { return r.get("/readyz") == 200 }) {
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
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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
	if !proc.Eventually(30*time.Second, func() bool { return strings.Contains(r.stderr.String(), "serving for 10s more (--drain-delay)") }) {
		t.Fatalf("no word of the drain delay after SIGTERM:\n%s", r.stderr.String())
	}
	// over reports whether what answered got, where want was due within
	// the drain delay, shows the drain has ended: no answer (0), once the
	// delay has passed since the signal. Any other answer fails t.
	over := func(what string, got, want int, body string) bool {
		switch {
		case got == want:
			return false
		case got == 0 && time.Since(signalled) >= delay:
			return true
		}
		t.Fatalf("%s %v after SIGTERM, within --drain-delay %v: %d %s, want %d\n%s",
			what, time.Since(signalled).Round(time.Millisecond), delay, got, body, want, r.stderr.String())
		return true
	}
	answered := map[*http.Client]int{}
	for ended := false; !ended; {
		for _, c := range []*http.Client{kept, fresh} {
			status, body := call(c)
			if status == 200 && !strings.Contains(body, `"text":"stateless"`) {
				t.Fatalf("a call %v after SIGTERM: %s", time.Since(signalled).Round(time.Millisecond), body)
			}
			if ended = over("a call", status, 200, body); ended {
				break
			}
			answered[c]++
			if n := dials.Load(); c == kept && n != 1 {
				t.Fatalf("the kept-alive client dialled %d times; want its one connection kept through the drain delay", n)
			}
		}
		if ended {
			break
		}
		ended = over("/readyz", r.get("/readyz"), 503, "") ||
			over("/healthz?ready", r.get("/healthz?ready"), 503, "") ||
			over("/healthz", r.get("/healthz"), 200, "") ||
			time.Since(signalled) >= delay
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d calls on the kept connection and %d on new ones answered within the drain delay", answered[kept], answered[fresh])
	if answered[kept] == 0 || answered[fresh] == 0 {
		t.Fatalf("no call answered within the drain delay on the kept connection (%d) or on a new one (%d)", answered[kept], answered[fresh])
	}

	// Then connections are refused, not before the delay, and the process
	// exits: it has nothing in flight to give its grace to.
	if !proc.Eventually(30*time.Second, func() bool {
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
	case <-time.After(grace / 2):
		t.Fatalf("still running %v after SIGTERM, with no call in flight (--grace %v):\n%s", time.Since(signalled), grace, r.stderr.String())
	}
	for _, want := range []string{"no new connections", "switchboard: stopped"} {
		if !strings.Contains(r.stderr.String(), want) {
			t.Errorf("stderr has no %q:\n%s", want, r.stderr.String())
		}
	}
}
