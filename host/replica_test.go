package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/postgres"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// openPostgres opens a store on the database at url, closed at cleanup
// (after the hosts opened later, which are closed first).
func openPostgres(t *testing.T, url string) *postgres.DB {
	t.Helper()
	st, err := postgres.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestReplicasShareApprovals: two Hosts on one PostgreSQL database, as two
// replicas of a gateway. A tool changed since replica A pinned it is held
// on replica B; an approval written to the store by a third process (what
// `switchboard approve` does) releases it on B through the change feed;
// also when the feed's connections were just killed, and the approval's
// notice is lost: the feed says it missed notices once it is back, and B
// re-reads. The periodic re-read, the feed's fallback, is made an hour
// apart here, so that only the feed can bring the approval.
func TestReplicasShareApprovals(t *testing.T) {
	t.Parallel()
	for _, killFeed := range []bool{false, true} {
		name := "feed"
		if killFeed {
			name = "feed lost"
		}
		t.Run(name, func(t *testing.T) { shareApproval(t, killFeed) })
	}
}

func shareApproval(t *testing.T, killFeed bool) {
	url := pgtest.URL(t)
	cfg := parse(t, map[string]any{"sleeper": sleeper(t)}, nil)

	a := openWith(t, cfg, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, openPostgres(t, url)))
	if got := call(t, a, "sleeper__echo", `{"text":"first"}`).Text; got != "first" {
		t.Fatalf("A: echo = %q", got)
	}
	// B advertises A's saved catalogue; its first call starts its own
	// server, whose second start changes echo's description.
	blog := &testkit.Buffer{}
	b := openWith(t, cfg, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond, PinsRecheck: time.Hour, Logger: slog.New(slog.NewTextHandler(blog, &slog.HandlerOptions{Level: slog.LevelDebug}))}, openPostgres(t, url)))
	if got := call(t, b, "sleeper__slow", `{"steps":1,"delay_ms":1}`).Text; got != "done" {
		t.Fatalf("B: slow = %q", got)
	}
	approver := openPostgres(t, url)
	var drifts []store.Drift
	if !proc.Eventually(time.Minute, func() bool {
		var err error
		drifts, err = approver.Drifts(context.Background(), "sleeper")
		_, held := b.Tool("sleeper__echo")
		return err == nil && len(drifts) == 1 && held != nil
	}) {
		t.Fatalf("B did not hold the changed tool: drifts %+v", drifts)
	}
	if _, err := a.Tool("sleeper__echo"); err != nil {
		t.Errorf("A, whose server did not change, lost the tool: %v", err)
	}

	if killFeed {
		if n := pgtest.CutListeners(t, url); n != 2 {
			t.Fatalf("cut %d change feeds, want A's and B's", n)
		}
	}
	d := drifts[0]
	start := time.Now()
	if err := approver.Pin(context.Background(), store.Pin{Server: d.Server, Tool: d.Tool, Hash: d.Hash, Definition: d.Definition}); err != nil {
		t.Fatal(err)
	}
	// The re-read is an hour away: only the feed brings the approval.
	if !proc.Eventually(time.Minute, func() bool { _, err := b.Tool("sleeper__echo"); return err == nil }) {
		t.Fatalf("the approval did not reach B (store up: %v); B's log:\n%s", b.StoreUp(), blog.String())
	}
	t.Logf("approval in force on the other replica after %v", time.Since(start))
	if got := call(t, b, "sleeper__echo", `{"text":"approved"}`).Text; got != "approved" {
		t.Errorf("B: echo after approval = %q", got)
	}
}

// TestReplicaStoreOutage: a Host whose PostgreSQL store becomes
// unreachable goes on serving calls, reports that it is not ready, and
// keeps the audit rows of those calls; when the store is back it is ready
// again and writes them, every one.
func TestReplicaStoreOutage(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := openPostgres(t, url)
	h := openWith(t, parse(t, map[string]any{"s": child(t, testkit.ModeServer, nil)}, nil),
		hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	if err := h.Readiness(context.Background()); err != nil {
		t.Fatalf("Ready before the outage: %v", err)
	}
	calls := func() int {
		cs, err := st.Calls(context.Background(), store.CallFilter{Server: "s", Limit: 1000})
		if err != nil {
			return -1
		}
		return len(cs)
	}
	for range 3 {
		call(t, h, "s__echo", `{"text":"before"}`)
	}
	if !proc.Eventually(time.Minute, func() bool { return calls() == 3 }) {
		t.Fatalf("%d audit rows before the outage, want 3", calls())
	}

	end := pgtest.Outage(t, url)
	if err := h.Readiness(context.Background()); !errors.Is(err, hostlink.ErrNotReady) {
		t.Errorf("Ready during the outage: %v, want ErrNotReady", err)
	}
	for range 5 {
		if got := call(t, h, "s__echo", `{"text":"during"}`).Text; got != "during" {
			t.Errorf("echo during the outage = %q", got)
		}
	}
	if !proc.Eventually(time.Minute, func() bool { return h.AuditStats().Waiting == 5 && !h.StoreUp() }) {
		t.Errorf("during the outage: audit %+v, store up %v; want 5 rows waiting, store down", h.AuditStats(), h.StoreUp())
	}

	end()
	if !proc.Eventually(time.Minute, func() bool { return calls() == 8 }) {
		t.Errorf("%d audit rows after the outage, want 8", calls())
	}
	// The writer counts its rows written, and the store up, once their
	// commit has returned: a moment after they can be read.
	if !proc.Eventually(time.Minute, func() bool { return h.AuditStats() == (hostlink.AuditStats{}) && h.StoreUp() }) {
		t.Errorf("audit after the outage: %+v, store up %v; want nothing waiting or dropped, store up", h.AuditStats(), h.StoreUp())
	}
	if err := h.Readiness(context.Background()); err != nil {
		t.Errorf("after the outage: Ready %v", err)
	}
}

// TestAuditRowsUnderLoadAcrossAnOutage: 16 callers call on through a 5 s
// outage of the PostgreSQL store; no caller fails, and once the store is
// back no audit row is dropped: every row not dropped during the outage
// (past the bound of rows kept) is written, while the callers go on with
// 25 calls each. (Had the rows waiting and those calls been more than the
// bound of 10,000, the writer would have had to drop some whatever its
// speed: that is not asked of it, so no speed of this machine decides.)
func TestAuditRowsUnderLoadAcrossAnOutage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a 5 s outage")
	}
	url := pgtest.URL(t)
	st, err := postgres.Open(t.Context(), url, &postgres.Options{MaxCalls: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := openWith(t, parse(t, map[string]any{"s": child(t, testkit.ModeServer, map[string]any{"eager": true})}, nil),
		hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	if err := h.Ready(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
	const callers, after, bound = 16, 25, 10_000
	var made, failed atomic.Int64
	back := make(chan struct{}) // closed once the store is back
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			left := -1 // calls still to make once the store is back
			for left != 0 {
				select {
				case <-back:
					if left < 0 {
						left = after
					}
				default:
				}
				if _, err := h.Call(context.Background(), "s__echo", json.RawMessage(`{"text":"x"}`), nil); err != nil {
					failed.Add(1)
				}
				made.Add(1)
				if left > 0 {
					left--
				}
			}
		})
	}
	end := pgtest.Outage(t, url)
	time.Sleep(5 * time.Second)
	droppedInOutage := h.AuditStats().Dropped
	end()
	waitingAtBack := h.AuditStats().Waiting
	close(back)
	t.Log("the store is back")
	atBack := made.Load()
	wg.Wait()
	total := made.Load()
	if !proc.Eventually(30*time.Second, func() bool { return h.AuditStats().Waiting == 0 }) {
		t.Fatalf("rows still waiting after the outage: %+v", h.AuditStats())
	}
	written := 0
	settled := proc.Eventually(30*time.Second, func() bool {
		rows, err := st.Calls(context.Background(), store.CallFilter{Server: "s", Limit: 1 << 30})
		written = len(rows)
		return err == nil && int64(written)+h.AuditStats().Dropped == total
	})
	s := h.AuditStats()
	t.Logf("%d calls (%d by the end of the outage, %d rows waiting then), %d failed; %d rows written, %d dropped (%d of them during the outage)",
		total, atBack, waitingAtBack, failed.Load(), written, s.Dropped, droppedInOutage)
	if failed.Load() > 0 {
		t.Errorf("%d calls failed", failed.Load())
	}
	if s.Dropped != droppedInOutage && waitingAtBack+callers*(after+1) <= bound {
		t.Errorf("%d rows dropped after the store was back, with %d waiting and at most %d calls to come", s.Dropped-droppedInOutage, waitingAtBack, callers*(after+1))
	}
	if !settled {
		t.Errorf("%d written + %d dropped, want %d calls", written, s.Dropped, total)
	}
}
