package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// take takes one call of key and fails t on an error.
func take(t *testing.T, db store.Store, key string, q store.Quota, now time.Time) (bool, time.Duration) {
	t.Helper()
	ok, retry, err := db.TakeQuota(t.Context(), key, q, now)
	if err != nil {
		t.Fatalf("TakeQuota(%q, %+v, %v): %v", key, q, now, err)
	}
	return ok, retry
}

// testQuota: a fixed window per key, opened by its first call, admitting
// q.Calls calls; refusals consume nothing and say when the window closes;
// keys are counted apart.
func testQuota(t *testing.T, open Opener) {
	db := open(t, Options{})
	q := store.Quota{Calls: 3, Per: time.Minute}
	t0 := When
	type step struct {
		key       string
		at        time.Duration // after t0
		wantOK    bool
		wantRetry time.Duration
	}
	for i, s := range []step{
		{"a", 0, true, 0},
		{"a", time.Second, true, 0},
		{"b", 2 * time.Second, true, 0}, // another key: a window of its own
		{"a", 10 * time.Second, true, 0},
		{"a", 20 * time.Second, false, 40 * time.Second}, // a's window is full
		{"a", 30 * time.Second, false, 30 * time.Second}, // and the refusal took nothing
		{"b", 30 * time.Second, true, 0},
		{"a", 5 * time.Second, false, 55 * time.Second},                        // the clock went back, still in the window
		{"a", -10 * time.Second, false, time.Minute},                           // back before the window opened: one window at most
		{"a", time.Minute, true, 0},                                            // a's window closed: a new one opens
		{"a", time.Minute + time.Second, true, 0},                              //
		{"a", time.Minute + 2*time.Second, true, 0},                            //
		{"a", time.Minute + 3*time.Second, false, time.Minute - 3*time.Second}, // and fills up
		{"b", 2*time.Second + time.Minute, true, 0},                            // b's closed too (swept or reopened)
	} {
		ok, retry := take(t, db, s.key, q, t0.Add(s.at))
		if ok != s.wantOK || retry != s.wantRetry {
			t.Errorf("step %d: take %q at t0+%v = %v, retry %v; want %v, retry %v", i, s.key, s.at, ok, retry, s.wantOK, s.wantRetry)
		}
	}
}

// testQuotaConcurrent: takes racing on one key admit exactly q.Calls.
func testQuotaConcurrent(t *testing.T, open Opener) {
	db := open(t, Options{})
	q := store.Quota{Calls: 37, Per: time.Hour}
	const workers, each = 8, 10
	var admitted atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				ok, _, err := db.TakeQuota(t.Context(), "k", q, When.Add(time.Duration(w*each+i)*time.Millisecond))
				if err != nil {
					errs <- err
					return
				}
				if ok {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := admitted.Load(); n != int64(q.Calls) {
		t.Errorf("%d of %d racing calls admitted, want exactly %d", n, workers*each, q.Calls)
	}
}

// testQuotaWindows: keys counted under quotas of different windows (two
// processes sharing the store, configured apart, or a reload between
// them): a take under a short window forgets only the windows that have
// closed under their own length, never one still open under a longer one.
func testQuotaWindows(t *testing.T, open Opener) {
	db := open(t, Options{})
	long, short := store.Quota{Calls: 1, Per: time.Hour}, store.Quota{Calls: 1, Per: time.Second}
	t0 := When
	for i, s := range []struct {
		key       string
		q         store.Quota
		at        time.Duration
		wantOK    bool
		wantRetry time.Duration
	}{
		{"long", long, 0, true, 0},
		{"short", short, 0, true, 0},
		{"short", short, 2 * time.Second, true, 0}, // short's window closed; this take sweeps closed windows
		{"short", short, 2*time.Second + 500*time.Millisecond, false, 500 * time.Millisecond},
		{"long", long, 3 * time.Second, false, time.Hour - 3*time.Second}, // long's is still open, and full
		{"long", long, time.Hour, true, 0},                                // long's window has closed
	} {
		ok, retry := take(t, db, s.key, s.q, t0.Add(s.at))
		if ok != s.wantOK || retry != s.wantRetry {
			t.Errorf("step %d: take %q under %v at t0+%v = %v, retry %v; want %v, retry %v", i, s.key, s.q.Per, s.at, ok, retry, s.wantOK, s.wantRetry)
		}
	}
}

// testQuotaInvalid: a quota without calls or without a period is an error,
// not a silent "unlimited".
func testQuotaInvalid(t *testing.T, open Opener) {
	db := open(t, Options{})
	for _, q := range []store.Quota{{}, {Calls: 1}, {Per: time.Second}, {Calls: -1, Per: time.Second}} {
		t.Run(fmt.Sprintf("%d_per_%v", q.Calls, q.Per), func(t *testing.T) {
			if ok, _, err := db.TakeQuota(t.Context(), "k", q, When); err == nil {
				t.Errorf("TakeQuota with %+v = %v, nil; want an error", q, ok)
			}
		})
	}
}
