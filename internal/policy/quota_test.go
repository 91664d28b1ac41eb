package policy

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 6, 18, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestQuotaWindow(t *testing.T) {
	clock := newFakeClock()
	e := mustNew(t, Config{Quota: Quota{Calls: 3, Per: time.Minute}, Now: clock.Now})
	call := func() Decision { return e.Decide(Request{ID: "gh:x", Trust: Trusted}) }

	for i := 0; i < 3; i++ {
		if d := call(); d.Verdict != Permit {
			t.Fatalf("call %d: %+v", i, d)
		}
		clock.Advance(10 * time.Second)
	}
	// 30s into the window, the 4th call is refused until the window ends.
	d := call()
	want := Decision{
		Verdict:    Refuse,
		Reason:     ReasonQuota,
		Rule:       -1,
		Detail:     "quota: 3 calls per 1m0s exceeded; retry in 30s",
		RetryAfter: 30 * time.Second,
	}
	if d != want {
		t.Fatalf("over quota: got %+v, want %+v", d, want)
	}
	// Refusals consume nothing and RetryAfter counts down, rounded up in
	// Detail so that a client that waits as told is admitted.
	clock.Advance(17*time.Second + 300*time.Millisecond)
	d = call()
	if d.RetryAfter != 12*time.Second+700*time.Millisecond || d.Detail != "quota: 3 calls per 1m0s exceeded; retry in 13s" {
		t.Fatalf("later refusal: %+v", d)
	}
	clock.Advance(12 * time.Second)
	if d := call(); d.RetryAfter != 700*time.Millisecond || d.Detail != "quota: 3 calls per 1m0s exceeded; retry in 700ms" {
		t.Fatalf("sub-second refusal: %+v", d)
	}

	// Rollover: exactly at the window's end a new window opens, at now.
	clock.Advance(700 * time.Millisecond)
	for i := 0; i < 3; i++ {
		if d := call(); d.Verdict != Permit {
			t.Fatalf("new window, call %d: %+v", i, d)
		}
	}
	if d := call(); d.Verdict != Refuse || d.RetryAfter != time.Minute {
		t.Fatalf("new window over quota: %+v", d)
	}
}

func TestQuotaPerClient(t *testing.T) {
	clock := newFakeClock()
	e := mustNew(t, Config{Quota: Quota{Calls: 1, Per: time.Second}, Now: clock.Now})
	for _, c := range []string{"", "alice", "bob"} {
		if d := e.Decide(Request{ID: "x:y", Client: c}); d.Verdict != Permit {
			t.Errorf("client %q first call: %+v", c, d)
		}
	}
	for _, c := range []string{"", "alice", "bob"} {
		d := e.Decide(Request{ID: "x:y", Client: c})
		if d.Verdict != Refuse || d.Detail != "quota: 1 call per 1s exceeded; retry in 1s" {
			t.Errorf("client %q second call: %+v", c, d)
		}
	}
	clock.Advance(time.Second)
	if d := e.Decide(Request{ID: "x:y", Client: "alice"}); d.Verdict != Permit {
		t.Errorf("alice after rollover: %+v", d)
	}
}

func TestQuotaConsumption(t *testing.T) {
	clock := newFakeClock()
	e := mustNew(t, Config{
		Rules:   []Rule{{Action: Deny, Pattern: "x:bad"}, {Action: Allow, Pattern: "*"}},
		Confirm: ConfirmDestructive,
		Quota:   Quota{Calls: 2, Per: time.Minute},
		Now:     clock.Now,
	})
	// Calls refused by a rule consume nothing.
	for i := 0; i < 10; i++ {
		if d := e.Decide(Request{ID: "x:bad"}); d.Reason != ReasonRule {
			t.Fatalf("deny rule: %+v", d)
		}
	}
	// A call that needs confirmation consumes quota like a permitted one.
	if d := e.Decide(Request{ID: "x:ok", Trust: Untrusted}); d.Verdict != AskUser {
		t.Fatalf("untrusted: %+v", d)
	}
	yes := true
	if d := e.Decide(Request{ID: "x:ok", Trust: Trusted, Annotations: &Annotations{ReadOnly: &yes}}); d.Verdict != Permit {
		t.Fatalf("read-only: %+v", d)
	}
	// The quota outranks confirmation, and the rule that allowed is reported.
	if d := e.Decide(Request{ID: "x:ok", Trust: Untrusted}); d.Reason != ReasonQuota || d.Rule != 1 {
		t.Fatalf("over quota: %+v", d)
	}
}

// TestQuotaMemoryBound drives 1e5 distinct keys through the limiter: it
// holds at most MaxKeys of them, never refuses a new key for lack of room,
// and drops keys whose windows have closed.
func TestQuotaMemoryBound(t *testing.T) {
	clock := newFakeClock()
	e := mustNew(t, Config{Quota: Quota{Calls: 1, Per: time.Minute}, Now: clock.Now})
	const n = 100_000
	for i := 0; i < n; i++ {
		if d := e.Decide(Request{ID: "x:y", Client: fmt.Sprint("client-", i)}); d.Verdict != Permit {
			t.Fatalf("key %d: %+v", i, d)
		}
		if i%1000 == 0 {
			clock.Advance(time.Millisecond)
		}
		if got := e.limit.len(); got > DefaultMaxKeys {
			t.Fatalf("after %d keys the limiter holds %d", i+1, got)
		}
	}
	if got := e.limit.len(); got != DefaultMaxKeys {
		t.Errorf("limiter holds %d keys, want %d", got, DefaultMaxKeys)
	}
	// The most recent keys are still limited; the oldest were forgotten.
	if d := e.Decide(Request{ID: "x:y", Client: fmt.Sprint("client-", n-1)}); d.Verdict != Refuse {
		t.Errorf("newest key was forgotten: %+v", d)
	}
	// Once every window has closed, one call sweeps them all away.
	clock.Advance(time.Minute)
	e.Decide(Request{ID: "x:y", Client: "late"})
	if got := e.limit.len(); got != 1 {
		t.Errorf("after all windows closed the limiter holds %d keys, want 1", got)
	}
}

func TestQuotaMaxKeysEvictsOldestWindow(t *testing.T) {
	clock := newFakeClock()
	e := mustNew(t, Config{Quota: Quota{Calls: 1, Per: time.Minute, MaxKeys: 2}, Now: clock.Now})
	call := func(c string) Verdict { return e.Decide(Request{ID: "x:y", Client: c}).Verdict }
	call("a")
	clock.Advance(time.Second)
	call("b")
	call("a") // refused; a's window stays the oldest despite the recent use
	call("c") // evicts a
	if e.limit.len() != 2 {
		t.Fatalf("holds %d keys", e.limit.len())
	}
	if v := call("b"); v != Refuse {
		t.Errorf("b was evicted instead of a: %v", v)
	}
	if v := call("a"); v != Permit {
		t.Errorf("a was not evicted: %v", v)
	}
}

func TestQuotaClockStepsBack(t *testing.T) {
	clock := newFakeClock()
	e := mustNew(t, Config{Quota: Quota{Calls: 1, Per: time.Minute}, Now: clock.Now})
	e.Decide(Request{ID: "x:y"})
	clock.Advance(-time.Hour)
	if d := e.Decide(Request{ID: "x:y"}); d.Verdict != Refuse || d.RetryAfter != time.Minute {
		t.Errorf("after the clock stepped back: %+v", d)
	}
}

// sharedCounter is a Counter two Engines share, as two processes share a
// store: it keeps its windows with the Engine's own limiter. fail makes
// it answer with an error.
type sharedCounter struct {
	l     *limiter
	fail  bool
	takes []Quota // what each Take was asked, in order
}

func (c *sharedCounter) Take(key string, q Quota, now time.Time) (bool, time.Duration, error) {
	c.takes = append(c.takes, q)
	if c.fail {
		return false, 0, errors.New("store unreachable")
	}
	ok, retry := c.l.take(key, now)
	return ok, retry, nil
}

// TestQuotaCounter: Engines with one Counter share the quota, the Counter
// says when to retry, and a failing Counter leaves each Engine to count
// in its own memory.
func TestQuotaCounter(t *testing.T) {
	clock := newFakeClock()
	q := Quota{Calls: 2, Per: time.Minute}
	c := &sharedCounter{l: newLimiter(q)}
	a := mustNew(t, Config{Quota: q, Now: clock.Now, Counter: c})
	b := mustNew(t, Config{Quota: q, Now: clock.Now, Counter: c})
	req := Request{ID: "gh:x", Trust: Trusted, Client: "alice"}

	if d := a.Decide(req); d.Verdict != Permit {
		t.Fatalf("a's first call: %+v", d)
	}
	clock.Advance(10 * time.Second)
	if d := b.Decide(req); d.Verdict != Permit {
		t.Fatalf("b's first call: %+v", d)
	}
	clock.Advance(5 * time.Second)
	for name, e := range map[string]*Engine{"a": a, "b": b} {
		if d := e.Decide(req); d.Verdict != Refuse || d.Reason != ReasonQuota || d.RetryAfter != 45*time.Second {
			t.Errorf("%s's call past the shared quota: %+v, want refused, retry in 45s", name, d)
		}
	}
	if len(c.takes) != 4 || c.takes[0] != q {
		t.Errorf("Counter asked %+v, want 4 takes of %+v", c.takes, q)
	}

	// The store is lost: each Engine counts alone, so the quota still
	// holds per process.
	c.fail = true
	for i := range q.Calls {
		if d := a.Decide(req); d.Verdict != Permit {
			t.Fatalf("a's call %d counted in memory: %+v", i, d)
		}
	}
	if d := a.Decide(req); d.Verdict != Refuse || d.Reason != ReasonQuota {
		t.Errorf("a's call past its own count: %+v, want refused", d)
	}
}

// TestQuotaCounted: a second decision for a call already counted (its
// definition changed after the first) takes no slot, and is still
// refused by a rule.
func TestQuotaCounted(t *testing.T) {
	clock := newFakeClock()
	e := mustNew(t, Config{Quota: Quota{Calls: 1, Per: time.Minute}, Now: clock.Now, Rules: []Rule{{Action: Deny, Pattern: "x:denied"}}})
	if d := e.Decide(Request{ID: "x:y"}); d.Verdict != Permit {
		t.Fatalf("first call: %+v", d)
	}
	for range 3 {
		if d := e.Decide(Request{ID: "x:y", Counted: true}); d.Verdict != Permit {
			t.Fatalf("the same call decided again: %+v, want permit (no second slot)", d)
		}
	}
	if d := e.Decide(Request{ID: "x:denied", Counted: true}); d.Verdict != Refuse || d.Reason != ReasonRule {
		t.Errorf("a denied tool decided again: %+v, want refused by its rule", d)
	}
	if d := e.Decide(Request{ID: "x:y"}); d.Verdict != Refuse || d.Reason != ReasonQuota {
		t.Errorf("the next call: %+v, want refused by the quota", d)
	}
}
