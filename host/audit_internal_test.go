package host

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/postgres"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestAuditLog: rows queued before close are all written; a row recorded
// after close (a call that ends while the Host closes) is dropped, without
// a panic; close may be called twice.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := newAuditLog(st, slog.New(slog.DiscardHandler), nil)
	start := time.Now()
	const rows = 100
	for i := range rows {
		a.record(&store.Call{Time: start, Tool: fmt.Sprintf("s:t%d", i), Server: "s", Outcome: outcomeOK})
	}
	a.close()
	a.record(&store.Call{Time: start, Tool: "s:late", Server: "s", Outcome: outcomeOK})
	a.close()
	got, err := st.Calls(context.Background(), store.CallFilter{Server: "s", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != rows {
		t.Errorf("%d rows written, want %d", len(got), rows)
	}
	for _, c := range got {
		if c.Tool == "s:late" {
			t.Error("a row recorded after close was written")
		}
	}
	var none *auditLog // a Host without a store
	none.record(&store.Call{})
	none.close()
}

// TestAuditLogBound: while the store is unreachable rows wait, up to the
// bound; past it the oldest are dropped and counted. Once the store is
// back the rows kept are written, in order. Rows the store still refuses
// at close are dropped and counted.
func TestAuditLogBound(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st, err := postgres.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var failures atomic.Int64
	a := newAuditLog(st, slog.New(slog.DiscardHandler), func(err error) {
		if err != nil {
			failures.Add(1)
		}
	})
	a.maxWait = 10
	end := pgtest.Outage(t, url)
	start := time.Now()
	for i := range 30 {
		a.record(&store.Call{Time: start.Add(time.Duration(i)), Tool: fmt.Sprintf("s:t%02d", i), Server: "s", Outcome: outcomeOK})
	}
	if !proc.Eventually(time.Minute, func() bool { return a.waiting.Load() == 10 && a.dropped.Load() == 20 }) {
		t.Fatalf("waiting %d, dropped %d; want 10 and 20", a.waiting.Load(), a.dropped.Load())
	}
	if failures.Load() == 0 {
		t.Error("the failed write was not reported")
	}
	end()
	if !proc.Eventually(time.Minute, func() bool { return a.waiting.Load() == 0 }) {
		t.Fatalf("%d rows still waiting after the outage", a.waiting.Load())
	}
	got, err := st.Calls(context.Background(), store.CallFilter{Server: "s", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, c := range got {
		tools = append([]string{c.Tool}, tools...) // oldest first
	}
	want := []string{"s:t20", "s:t21", "s:t22", "s:t23", "s:t24", "s:t25", "s:t26", "s:t27", "s:t28", "s:t29"}
	if !slices.Equal(tools, want) {
		t.Errorf("rows written %v, want the newest ten %v", tools, want)
	}

	pgtest.Outage(t, url)
	for i := range 5 {
		a.record(&store.Call{Time: start, Tool: fmt.Sprintf("s:late%d", i), Server: "s", Outcome: outcomeOK})
	}
	a.close()
	if n := a.dropped.Load(); n != 25 {
		t.Errorf("dropped %d after a close during an outage, want 25", n)
	}
}

// flakyStore is a real store whose writes of audit rows fail while down.
type flakyStore struct {
	store.Store
	down   atomic.Bool
	writes atomic.Int64 // attempts
}

var errDiskFull = fmt.Errorf("disk full")

func (f *flakyStore) RecordCalls(ctx context.Context, calls ...*store.Call) error {
	f.writes.Add(1)
	if f.down.Load() {
		return errDiskFull
	}
	return f.Store.RecordCalls(ctx, calls...)
}

// Ping answers while writes fail, as a store on a full disk does.
func (f *flakyStore) Ping(ctx context.Context) error { return f.Store.(store.Pinger).Ping(ctx) }

func newFlakyStore(t *testing.T) *flakyStore {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &flakyStore{Store: st}
}

// TestAuditLogNoDropWhileUp: rows that would overflow the rows waiting
// are dropped only if the store still refuses them; once it takes writes
// again nothing is dropped, even before the retry is due; and a nudge
// (the store answered something) writes the waiting rows at once.
func TestAuditLogNoDropWhileUp(t *testing.T) {
	t.Parallel()
	st := newFlakyStore(t)
	a := newAuditLogStopped(st, slog.New(slog.DiscardHandler), nil)
	a.maxWait = 10
	a.retryMin, a.retryMax = time.Hour, time.Hour // only writes and nudges retry
	go a.write()
	defer a.close()
	start := time.Now()
	row := func(i int) *store.Call {
		return &store.Call{Time: start.Add(time.Duration(i)), Tool: fmt.Sprintf("s:t%02d", i), Server: "s", Outcome: outcomeOK}
	}
	st.down.Store(true)
	for i := range 10 {
		a.record(row(i))
	}
	if !proc.Eventually(time.Minute, func() bool { return a.waiting.Load() == 10 }) {
		t.Fatalf("waiting %d, want 10", a.waiting.Load())
	}
	st.down.Store(false)
	for i := 10; i < 15; i++ {
		a.record(row(i))
	}
	if !proc.Eventually(time.Minute, func() bool { return a.waiting.Load() == 0 }) {
		t.Fatalf("waiting %d after the store came back, want 0", a.waiting.Load())
	}
	if n := a.dropped.Load(); n != 0 {
		t.Errorf("dropped %d rows while the store took writes", n)
	}

	st.down.Store(true)
	for i := 15; i < 20; i++ {
		a.record(row(i))
	}
	if !proc.Eventually(time.Minute, func() bool { return a.waiting.Load() == 5 }) {
		t.Fatalf("waiting %d, want 5", a.waiting.Load())
	}
	st.down.Store(false)
	a.nudge()
	if !proc.Eventually(time.Minute, func() bool { return a.waiting.Load() == 0 }) {
		t.Fatalf("waiting %d after a nudge, want 0", a.waiting.Load())
	}
	got, err := st.Calls(context.Background(), store.CallFilter{Server: "s", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 20 || a.dropped.Load() != 0 {
		t.Errorf("%d rows written, %d dropped; want 20 and 0", len(got), a.dropped.Load())
	}
}

// TestStoreUpSaysAuditRowsWait: a store that answers pings but refuses
// audit rows (a full disk) is not up, and the Host is not ready, until
// the rows are written.
func TestStoreUpSaysAuditRowsWait(t *testing.T) {
	t.Parallel()
	st := newFlakyStore(t)
	h, err := Open(context.Background(), &config.Config{}, &Options{Logger: slog.New(slog.DiscardHandler), store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if !h.storeUp() || h.readiness(context.Background()) != nil {
		t.Fatalf("before: StoreUp %v, Ready %v", h.storeUp(), h.readiness(context.Background()))
	}
	st.down.Store(true)
	h.audit.record(&store.Call{Time: time.Now(), Tool: "s:t", Server: "s", Outcome: outcomeOK})
	if !proc.Eventually(time.Minute, func() bool { return h.auditStats().Waiting == 1 }) {
		t.Fatal("the refused row is not waiting")
	}
	if h.storeUp() {
		t.Error("StoreUp with an audit row the store refused")
	}
	if err := h.readiness(context.Background()); err == nil || !strings.Contains(err.Error(), "audit rows") {
		t.Errorf("Ready = %v, want not ready for the audit rows", err)
	}
	st.down.Store(false)
	h.readiness(context.Background()) // a ping that answers nudges the writer
	if !proc.Eventually(time.Minute, func() bool { return h.storeUp() && h.readiness(context.Background()) == nil }) {
		t.Errorf("after the store took writes again: StoreUp %v, Ready %v", h.storeUp(), h.readiness(context.Background()))
	}
}
