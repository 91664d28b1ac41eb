package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// record records c and returns it as stored.
func record(t testing.TB, db store.Store, c *store.Call) store.Call {
	t.Helper()
	if err := db.RecordCalls(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	return *c
}

func calls(t testing.TB, db store.Store, f store.CallFilter) []store.Call {
	t.Helper()
	cs, err := db.Calls(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func testRecordCallRoundTrip(t *testing.T, open Opener) {
	clock := NewClock()
	db := open(t, Options{Now: clock.Now})

	a := record(t, db, NewCall("gh", "search", When))
	b := record(t, db, &store.Call{Tool: "fs:read", Server: "fs", Outcome: "ok"}) // zero Time: the clock's
	if a.ID <= 0 || b.ID <= a.ID {
		t.Errorf("IDs %d then %d, want positive and growing", a.ID, b.ID)
	}
	if !b.Time.Equal(clock.Now()) {
		t.Errorf("zero Time stored as %v, want the clock's %v", b.Time, clock.Now())
	}
	// The clock (2026-01-02) is before When (2026-03-04), so a is newer.
	if diff := cmp.Diff([]store.Call{a, b}, calls(t, db, store.CallFilter{})); diff != "" {
		t.Errorf("Calls (-want +got):\n%s", diff)
	}
}

func testCallsFilter(t *testing.T, open Opener) {
	// A clock at the calls' times, so retention by age keeps them.
	db := open(t, Options{Now: (&Clock{t: When}).Now})
	base := When
	var all []store.Call // newest first
	for i := range 12 {
		server := []string{"gh", "fs", "gh"}[i%3]
		tool := []string{"search", "read", "create"}[i%3]
		// Pairs of calls share a timestamp, so ID must break the tie.
		nc := NewCall(server, tool, base.Add(time.Duration(i/2)*time.Second))
		nc.Caller, nc.Profile = []string{"alice", "ci"}[i%2], []string{"", "readonly"}[i%2]
		if i%4 == 0 {
			nc.Outcome, nc.Code = "ok", ""
		}
		if i%5 == 0 {
			nc.Run = "run-1"
		}
		c := record(t, db, nc)
		all = append([]store.Call{c}, all...)
	}
	keep := func(f func(store.Call) bool) []store.Call {
		var out []store.Call
		for _, c := range all {
			if f(c) {
				out = append(out, c)
			}
		}
		return out
	}
	since := base.Add(3 * time.Second)
	for _, tt := range []struct {
		name string
		f    store.CallFilter
		want []store.Call
	}{
		{"all", store.CallFilter{}, all},
		{"server", store.CallFilter{Server: "gh"}, keep(func(c store.Call) bool { return c.Server == "gh" })},
		{"tool", store.CallFilter{Tool: "gh:create"}, keep(func(c store.Call) bool { return c.Tool == "gh:create" })},
		{"caller", store.CallFilter{Caller: "ci"}, keep(func(c store.Call) bool { return c.Caller == "ci" && c.Profile == "readonly" })},
		{"outcome", store.CallFilter{Outcome: "ok"}, keep(func(c store.Call) bool { return c.Outcome == "ok" })},
		{"outcome, limited", store.CallFilter{Outcome: "ok", Limit: 2}, keep(func(c store.Call) bool { return c.Outcome == "ok" })[:2]},
		{"since", store.CallFilter{Since: since}, keep(func(c store.Call) bool { return !c.Time.Before(since) })},
		{"limit", store.CallFilter{Limit: 3}, all[:3]},
		{"combined", store.CallFilter{Server: "gh", Since: since, Limit: 2},
			keep(func(c store.Call) bool { return c.Server == "gh" && !c.Time.Before(since) })[:2]},
		{"run", store.CallFilter{Run: "run-1"}, keep(func(c store.Call) bool { return c.Run == "run-1" })},
		{"none", store.CallFilter{Server: "nope"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, calls(t, db, tt.f)); diff != "" {
				t.Errorf("Calls(%+v) (-want +got):\n%s", tt.f, diff)
			}
		})
	}
}

func testCallsDefaultLimit(t *testing.T, open Opener) {
	db := open(t, Options{})
	for range store.DefaultCallLimit + 5 {
		record(t, db, NewCall("s", "t", time.Time{}))
	}
	if n := len(calls(t, db, store.CallFilter{})); n != store.DefaultCallLimit {
		t.Errorf("Calls with Limit 0 returned %d rows, want %d", n, store.DefaultCallLimit)
	}
}

func testRetentionByCount(t *testing.T, open Opener) {
	clock := NewClock()
	db := open(t, Options{Now: clock.Now, MaxCalls: 50})
	var ids []int64
	for range 500 {
		clock.Advance(time.Millisecond)
		ids = append(ids, record(t, db, NewCall("s", "t", time.Time{})).ID)
	}
	got := calls(t, db, store.CallFilter{Limit: 1000})
	if len(got) != 50 {
		t.Fatalf("%d calls remain, want 50", len(got))
	}
	for i, c := range got {
		if want := ids[len(ids)-1-i]; c.ID != want {
			t.Fatalf("calls[%d].ID = %d, want %d (the 50 newest)", i, c.ID, want)
		}
	}
}

// TestRecordCallsBatch: a batch is stored in order with growing IDs, its
// zero times take the clock's, retention counts the whole batch, and a
// batch with a bad row stores nothing.
func testRecordCallsBatch(t *testing.T, open Opener) {
	clock := NewClock()
	db := open(t, Options{Now: clock.Now, MaxCalls: 5})
	for _, n := range []int{1, 3, 8} {
		batch := make([]*store.Call, n)
		for i := range batch {
			batch[i] = NewCall("s", fmt.Sprint("t", i), time.Time{})
		}
		if err := db.RecordCalls(t.Context(), batch...); err != nil {
			t.Fatal(err)
		}
		for i, c := range batch {
			if i > 0 && c.ID != batch[i-1].ID+1 {
				t.Errorf("batch of %d: IDs %d then %d, want consecutive", n, batch[i-1].ID, c.ID)
			}
			if !c.Time.Equal(clock.Now()) {
				t.Errorf("batch of %d: zero Time stored as %v, want %v", n, c.Time, clock.Now())
			}
		}
		got := calls(t, db, store.CallFilter{Limit: 100})
		if want := min(n, 5); len(got) < want || len(got) > 5 {
			t.Fatalf("batch of %d: %d calls remain, want between %d and 5", n, len(got), want)
		}
		if got[0].ID != batch[n-1].ID {
			t.Errorf("batch of %d: newest is %d, want the batch's last, %d", n, got[0].ID, batch[n-1].ID)
		}
		clock.Advance(time.Second)
	}
	before := calls(t, db, store.CallFilter{Limit: 100})
	if err := db.RecordCalls(t.Context(), NewCall("s", "x", time.Time{}), nil); err == nil {
		t.Fatal("a batch with a nil row was recorded")
	}
	if diff := cmp.Diff(before, calls(t, db, store.CallFilter{Limit: 100})); diff != "" {
		t.Errorf("a refused batch changed the log (-before +after):\n%s", diff)
	}
	if err := db.RecordCalls(t.Context()); err != nil {
		t.Errorf("empty batch: %v", err)
	}
}

func testRetentionByAge(t *testing.T, open Opener) {
	clock := NewClock()
	db := open(t, Options{Now: clock.Now, MaxCallAge: time.Hour})

	record(t, db, NewCall("s", "old", time.Time{}))
	clock.Advance(30 * time.Minute)
	mid := record(t, db, NewCall("s", "mid", time.Time{}))
	clock.Advance(31 * time.Minute) // old is now 61 minutes old
	if got := calls(t, db, store.CallFilter{}); len(got) != 2 {
		t.Fatalf("before the next insert: %d calls, want 2 (retention runs on insert)", len(got))
	}
	recent := record(t, db, NewCall("s", "new", time.Time{}))
	if diff := cmp.Diff([]store.Call{recent, mid}, calls(t, db, store.CallFilter{})); diff != "" {
		t.Errorf("after an hour (-want +got):\n%s", diff)
	}

	// Retention is by age, not by count: the default MaxCalls is far away.
	clock.Advance(2 * time.Hour)
	last := record(t, db, NewCall("s", "last", time.Time{}))
	if diff := cmp.Diff([]store.Call{last}, calls(t, db, store.CallFilter{})); diff != "" {
		t.Errorf("after three hours (-want +got):\n%s", diff)
	}
}

func testRetentionDisabled(t *testing.T, open Opener) {
	clock := NewClock()
	db := open(t, Options{Now: clock.Now, MaxCalls: -1, MaxCallAge: -1})
	for range 20 {
		record(t, db, NewCall("s", "t", time.Time{}))
		clock.Advance(365 * 24 * time.Hour)
	}
	if n := len(calls(t, db, store.CallFilter{})); n != 20 {
		t.Errorf("%d calls remain with retention off, want 20", n)
	}
}

func testRecordCallConcurrent(t *testing.T, open Opener) {
	db := open(t, Options{})
	const workers, each = 16, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	ids := make(chan int64, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				c := NewCall(fmt.Sprint("s", w), fmt.Sprint("t", i), time.Time{})
				if err := db.RecordCalls(context.Background(), c); err != nil {
					errs <- err
					return
				}
				ids <- c.ID
				// Interleave reads, which use the other pool.
				if _, err := db.Calls(context.Background(), store.CallFilter{Server: c.Server, Limit: 5}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	close(ids)
	for err := range errs {
		t.Error(err)
	}
	seen := map[int64]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("ID %d assigned twice", id)
		}
		seen[id] = true
	}
	if len(seen) != workers*each {
		t.Errorf("%d distinct IDs, want %d", len(seen), workers*each)
	}
	if n := len(calls(t, db, store.CallFilter{Limit: 10_000})); n != workers*each {
		t.Errorf("%d calls stored, want %d", n, workers*each)
	}
}

// testRecordCallOddText: a call whose strings hold NUL or invalid UTF-8
// (a caller's or a tool's name as a client sent it) is recorded, not
// refused with its whole batch.
func testRecordCallOddText(t *testing.T, open Opener) {
	db := open(t, Options{})
	odd := NewCall("s", "t\x00\xff", time.Time{})
	odd.Caller = "client\x00\xfe"
	ok := NewCall("s", "fine", time.Time{})
	if err := db.RecordCalls(t.Context(), odd, ok); err != nil {
		t.Fatalf("RecordCalls: %v", err)
	}
	got := calls(t, db, store.CallFilter{Server: "s"})
	if len(got) != 2 || got[0].ID != ok.ID || got[1].ID != odd.ID || got[0].Tool != "s:fine" {
		t.Errorf("Calls = %+v, want both rows", got)
	}
}
