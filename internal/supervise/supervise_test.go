package supervise

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ---------------------------------------------------------------------------
// Fakes and helpers
// ---------------------------------------------------------------------------

var t0 = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

var (
	errRefused = errors.New("connection refused")
	errAuth    = errors.New("HTTP 401")
	errEOF     = errors.New("EOF")
)

// clock is a fake clock, safe for concurrent use.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// recorder collects events.
type recorder struct {
	mu  sync.Mutex
	evs []Event
}

func (r *recorder) add(e Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

func (r *recorder) events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.evs...)
}

// fixed returns a random source that always draws v.
func fixed(v float64) func() float64 { return func() float64 { return v } }

// harness is a Supervisor of server "s" on a fake clock at t0.
type harness struct {
	*Supervisor
	clk *clock
	rec *recorder
}

func newHarness(t *testing.T, p Policy, rnd func() float64) *harness {
	t.Helper()
	h := &harness{clk: &clock{t: t0}, rec: &recorder{}}
	h.Supervisor = New("s", p, &Options{Now: h.clk.Now, Rand: rnd, OnChange: h.rec.add})
	return h
}

// acquire takes the permission that must be there.
func (h *harness) acquire(t *testing.T) Attempt {
	t.Helper()
	a, wait, ok := h.Acquire()
	if !ok {
		st := h.Snapshot()
		t.Fatalf("at %v: Acquire = not ok, wait %v; want ok (state %s, %q, dialing %v)",
			h.clk.Now().Sub(t0), wait, st.State, st.Reason, st.Dialing)
	}
	return a
}

// deny checks that Acquire says no with the given wait.
func (h *harness) deny(t *testing.T, wantWait time.Duration) {
	t.Helper()
	if _, wait, ok := h.Acquire(); ok || wait != wantWait {
		t.Fatalf("at %v: Acquire = ok %v, wait %v; want not ok, wait %v", h.clk.Now().Sub(t0), ok, wait, wantWait)
	}
}

// due is the wait until the next allowed attempt.
func (h *harness) due(t *testing.T) time.Duration {
	t.Helper()
	st := h.Snapshot()
	if st.Next.IsZero() {
		t.Fatalf("no next attempt scheduled (state %s, %q)", st.State, st.Reason)
	}
	return st.Next.Sub(h.clk.Now())
}

func (h *harness) wantState(t *testing.T, want State, reason string) {
	t.Helper()
	if got, r := h.State(); got != want || r != reason {
		t.Fatalf("State() = %s, %q; want %s, %q", got, r, want, reason)
	}
}

// connect makes the server Ready now.
func (h *harness) connect(t *testing.T) Attempt {
	t.Helper()
	a := h.acquire(t)
	a.Succeeded()
	h.wantState(t, Ready, "connected")
	return a
}

// failAll fails attempts as they fall due until the server is Failed and
// returns the waits it was given.
func (h *harness) failAll(t *testing.T) []time.Duration {
	t.Helper()
	var waits []time.Duration
	if d := h.due(t); d > 0 {
		h.clk.Advance(d)
	}
	for {
		h.acquire(t).Failed(errRefused, true)
		if st, _ := h.State(); st == Failed {
			return waits
		}
		d := h.due(t)
		waits = append(waits, d)
		h.clk.Advance(d)
	}
}

// ---------------------------------------------------------------------------
// Policy
// ---------------------------------------------------------------------------

func TestPolicyDefaults(t *testing.T) {
	def := Policy{Attempts: 3, BaseDelay: time.Second, MaxDelay: 8 * time.Second,
		RetryAfter: 30 * time.Second, RetryMaxFactor: 20, CrashLoops: 5, CrashWindow: time.Minute}
	tests := []struct {
		name string
		in   Policy
		want Policy
	}{
		{"zero", Policy{}, def},
		{"negative", Policy{Attempts: -1, BaseDelay: -1, MaxDelay: -1, RetryAfter: -1, RetryMaxFactor: -1, CrashLoops: -1, CrashWindow: -1}, def},
		{"kept", Policy{Attempts: 7, BaseDelay: 2 * time.Second, MaxDelay: time.Minute, RetryAfter: time.Second, RetryMaxFactor: 1, CrashLoops: 2, CrashWindow: time.Hour},
			Policy{Attempts: 7, BaseDelay: 2 * time.Second, MaxDelay: time.Minute, RetryAfter: time.Second, RetryMaxFactor: 1, CrashLoops: 2, CrashWindow: time.Hour}},
		{"attempts capped", Policy{Attempts: 11}, func() Policy { p := def; p.Attempts = 10; return p }()},
		{"max below base", Policy{BaseDelay: 20 * time.Second}, func() Policy { p := def; p.BaseDelay, p.MaxDelay = 20*time.Second, 20*time.Second; return p }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.in.withDefaults()); diff != "" {
				t.Errorf("withDefaults (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDoubledNoOverflow(t *testing.T) {
	const maxDur = time.Duration(1<<63 - 1)
	if got := doubled(time.Hour, 1000, maxDur); got != maxDur {
		t.Errorf("doubled(1h, 1000, max) = %v, want %v", got, maxDur)
	}
	p := Policy{RetryAfter: maxDur / 2, RetryMaxFactor: 20}.withDefaults()
	if got := p.probe(5); got != maxDur {
		t.Errorf("probe with overflowing cap = %v, want %v", got, maxDur)
	}
}

// ---------------------------------------------------------------------------
// Start-up
// ---------------------------------------------------------------------------

func TestBackoffSequence(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		rnd  float64
		want []time.Duration
	}{
		{"rnd=0", 0, []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * s, 6 * s, 6 * s, 6 * s, 6 * s, 6 * s, 6 * s}},
		{"rnd=1", 1, []time.Duration{1 * s, 2 * s, 4 * s, 8 * s, 8 * s, 8 * s, 8 * s, 8 * s, 8 * s}},
		{"rnd=0.5", 0.5, []time.Duration{875 * time.Millisecond, 1750 * time.Millisecond, 3500 * time.Millisecond, 7 * s, 7 * s, 7 * s, 7 * s, 7 * s, 7 * s}},
		{"rnd clamped below", -3, []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * s, 6 * s, 6 * s, 6 * s, 6 * s, 6 * s, 6 * s}},
		{"rnd clamped above", 2, []time.Duration{1 * s, 2 * s, 4 * s, 8 * s, 8 * s, 8 * s, 8 * s, 8 * s, 8 * s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Policy{Attempts: 10}, fixed(tt.rnd))
			got := h.failAll(t)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("backoff waits (-want +got):\n%s", diff)
			}
			h.wantState(t, Failed, "gave up after 10 attempts: connection refused")
		})
	}
}

func TestJitterBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	h := newHarness(t, Policy{Attempts: 10}, r.Float64)
	nominal := []time.Duration{1, 2, 4, 8, 8, 8, 8, 8, 8}
	lo := make([]time.Duration, len(nominal))
	hi := make([]time.Duration, len(nominal))
	const rounds = 1000
	for round := range rounds {
		h.Reset()
		waits := h.failAll(t)
		if len(waits) != len(nominal) {
			t.Fatalf("round %d: %d waits, want %d", round, len(waits), len(nominal))
		}
		for i, w := range waits {
			n := nominal[i] * time.Second
			if w < n*3/4 || w > n {
				t.Fatalf("round %d wait %d = %v, outside [%v, %v]", round, i+1, w, n*3/4, n)
			}
			if round == 0 || w < lo[i] {
				lo[i] = w
			}
			if round == 0 || w > hi[i] {
				hi[i] = w
			}
		}
	}
	// The jitter uses its whole range: over 1000 draws each extreme is
	// approached within 1% of the nominal delay.
	for i := range nominal {
		n := nominal[i] * time.Second
		if lo[i] > n*76/100 || hi[i] < n*99/100 {
			t.Errorf("wait %d ranged over [%v, %v]; want close to [%v, %v]", i+1, lo[i], hi[i], n*3/4, n)
		}
	}
}

func TestStartup(t *testing.T) {
	type outcome struct {
		err       error
		retryable bool
	}
	ok := outcome{}
	refused := outcome{errRefused, true}
	auth := outcome{errAuth, false}
	tests := []struct {
		name     string
		p        Policy
		outcomes []outcome
		want     []Event // At is the offset from t0
	}{
		{
			name:     "first attempt",
			outcomes: []outcome{ok},
			want:     []Event{{From: Starting, To: Ready, Reason: "connected"}},
		},
		{
			name:     "third attempt",
			outcomes: []outcome{refused, refused, ok},
			want: []Event{
				{From: Starting, To: Backoff, Reason: "attempt 1 of 3 failed: connection refused"},
				{From: Backoff, To: Backoff, Reason: "attempt 2 of 3 failed: connection refused", At: t0.Add(time.Second)},
				{From: Backoff, To: Ready, Reason: "connected", At: t0.Add(3 * time.Second)},
			},
		},
		{
			name:     "attempts exhausted",
			outcomes: []outcome{refused, refused, refused},
			want: []Event{
				{From: Starting, To: Backoff, Reason: "attempt 1 of 3 failed: connection refused"},
				{From: Backoff, To: Backoff, Reason: "attempt 2 of 3 failed: connection refused", At: t0.Add(time.Second)},
				{From: Backoff, To: Failed, Reason: "gave up after 3 attempts: connection refused", At: t0.Add(3 * time.Second)},
			},
		},
		{
			name:     "one attempt",
			p:        Policy{Attempts: 1},
			outcomes: []outcome{refused},
			want:     []Event{{From: Starting, To: Failed, Reason: "gave up after 1 attempts: connection refused"}},
		},
		{
			name:     "401 not retried",
			outcomes: []outcome{auth},
			want:     []Event{{From: Starting, To: Failed, Reason: "not retried: HTTP 401"}},
		},
		{
			name:     "401 after a retryable failure",
			outcomes: []outcome{refused, auth},
			want: []Event{
				{From: Starting, To: Backoff, Reason: "attempt 1 of 3 failed: connection refused"},
				{From: Backoff, To: Failed, Reason: "not retried: HTTP 401", At: t0.Add(time.Second)},
			},
		},
		{
			name:     "nil error",
			outcomes: []outcome{{nil, true}},
			want:     []Event{{From: Starting, To: Backoff, Reason: "attempt 1 of 3 failed: unknown error"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.p, fixed(1))
			for i, o := range tt.outcomes {
				if i > 0 {
					h.clk.Advance(h.due(t))
				}
				a := h.acquire(t)
				if o == ok {
					a.Succeeded()
				} else {
					a.Failed(o.err, o.retryable)
				}
			}
			want := make([]Event, len(tt.want))
			for i, e := range tt.want {
				e.Server = "s"
				if e.At.IsZero() {
					e.At = t0
				}
				want[i] = e
			}
			if diff := cmp.Diff(want, h.rec.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			// Failed, however it got there, allows nothing before
			// RetryAfter.
			if st, _ := h.State(); st == Failed {
				h.deny(t, DefaultRetryAfter)
			}
		})
	}
}

func TestAcquireWait(t *testing.T) {
	h := newHarness(t, Policy{}, fixed(1))
	a := h.acquire(t)
	h.deny(t, 0) // in flight
	a.Failed(errRefused, true)
	h.deny(t, time.Second)
	h.clk.Advance(999 * time.Millisecond)
	h.deny(t, time.Millisecond)
	h.clk.Advance(time.Millisecond - time.Nanosecond)
	h.deny(t, time.Nanosecond)
	h.clk.Advance(time.Nanosecond)
	a = h.acquire(t)
	a.Succeeded()
	h.deny(t, 0) // Ready
	// Asking late is fine: the permission does not expire.
	h.Stop()
	h.deny(t, 0)
}

// ---------------------------------------------------------------------------
// Failed: the probe schedule
// ---------------------------------------------------------------------------

func TestProbeSchedule(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		p    Policy
		want []time.Duration
	}{
		{"defaults", Policy{Attempts: 1},
			[]time.Duration{30 * s, 60 * s, 120 * s, 240 * s, 480 * s, 600 * s, 600 * s, 600 * s}},
		{"factor 3", Policy{Attempts: 1, RetryAfter: s, RetryMaxFactor: 3},
			[]time.Duration{1 * s, 2 * s, 3 * s, 3 * s, 3 * s}},
		{"factor 1", Policy{Attempts: 1, RetryAfter: 5 * s, RetryMaxFactor: 1},
			[]time.Duration{5 * s, 5 * s, 5 * s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.p, fixed(1))
			h.acquire(t).Failed(errRefused, true)
			h.wantState(t, Failed, "gave up after 1 attempts: connection refused")
			var got []time.Duration
			for i := range tt.want {
				d := h.due(t)
				got = append(got, d)
				h.clk.Advance(d - time.Millisecond)
				h.deny(t, time.Millisecond)
				h.clk.Advance(time.Millisecond)
				a := h.acquire(t)
				h.wantState(t, Failed, h.Snapshot().Reason) // a probe does not change the state
				if !h.Snapshot().Dialing {
					t.Fatal("Status.Dialing = false during a probe")
				}
				// Non-retryable failures follow the same schedule.
				a.Failed(errAuth, i%2 == 0)
				h.wantState(t, Failed, "probe failed: HTTP 401")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("probe waits (-want +got):\n%s", diff)
			}
			h.clk.Advance(h.due(t))
			h.connect(t)
			if st := h.Snapshot(); st.Attempts != 0 || st.LastError != "HTTP 401" {
				t.Errorf("after a successful probe: Attempts %d, LastError %q; want 0, %q", st.Attempts, st.LastError, "HTTP 401")
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Dropped connections and the crash-loop circuit
// ---------------------------------------------------------------------------

func TestDegraded(t *testing.T) {
	t.Run("redial fails", func(t *testing.T) {
		h := newHarness(t, Policy{}, fixed(1))
		h.connect(t).Dropped(errEOF)
		h.wantState(t, Degraded, "connection lost: EOF")
		a := h.acquire(t) // at once
		h.deny(t, 0)      // once
		a.Failed(errRefused, true)
		h.wantState(t, Backoff, "attempt 1 of 3 failed: connection refused")
		if d := h.due(t); d != time.Second {
			t.Errorf("wait after the redial = %v, want 1s", d)
		}
		if got := h.failAll(t); !cmp.Equal(got, []time.Duration{2 * time.Second}) {
			t.Errorf("wait after attempt 2 = %v, want [2s]", got)
		}
		h.wantState(t, Failed, "gave up after 3 attempts: connection refused")
		h.deny(t, 30*time.Second)
		want := []State{Starting, Ready, Degraded, Backoff, Backoff, Failed}
		if diff := cmp.Diff(want, path(h.rec.events())); diff != "" {
			t.Errorf("path (-want +got):\n%s", diff)
		}
	})
	t.Run("redial works", func(t *testing.T) {
		h := newHarness(t, Policy{}, fixed(1))
		h.connect(t).Dropped(nil)
		h.wantState(t, Degraded, "connection lost")
		h.connect(t)
		if st := h.Snapshot(); st.Drops != 1 || st.Prev != Degraded {
			t.Errorf("Status: Drops %d, Prev %s; want 1, degraded", st.Drops, st.Prev)
		}
	})
	t.Run("redial not retryable", func(t *testing.T) {
		h := newHarness(t, Policy{}, fixed(1))
		h.connect(t).Dropped(errEOF)
		h.acquire(t).Failed(errAuth, false)
		h.wantState(t, Failed, "not retried: HTTP 401")
	})
}

// path is the sequence of states the events went through.
func path(evs []Event) []State {
	if len(evs) == 0 {
		return nil
	}
	p := []State{evs[0].From}
	for _, e := range evs {
		p = append(p, e.To)
	}
	return p
}

func TestCrashLoop(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	s := func(n int) time.Duration { return time.Duration(n) * time.Second }
	tests := []struct {
		name  string
		p     Policy
		drops []time.Duration // offsets from t0; each drop follows a connection at the same time
		open  bool
	}{
		{"5 in 60s", Policy{}, []time.Duration{0, s(10), s(20), s(30), s(40)}, true},
		{"5 at once", Policy{}, []time.Duration{0, ms(1), ms(2), ms(3), ms(4)}, true},
		{"5 over 10 min", Policy{}, []time.Duration{0, s(150), s(300), s(450), s(600)}, false},
		{"4 in 60s", Policy{}, []time.Duration{0, s(10), s(20), s(30)}, false},
		{"a drop a full window old does not count", Policy{}, []time.Duration{0, s(15), s(30), s(45), s(60)}, false},
		{"just inside the window", Policy{}, []time.Duration{0, s(15), s(30), s(45), s(60) - ms(1)}, true},
		{"old drops age out", Policy{}, []time.Duration{0, s(1), s(2), s(3), s(70), s(71), s(72)}, false},
		{"CrashLoops 2", Policy{CrashLoops: 2, CrashWindow: s(10)}, []time.Duration{0, s(9)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.p, fixed(1))
			for i, off := range tt.drops {
				h.clk.Set(t0.Add(off))
				if st, _ := h.State(); st == Failed {
					t.Fatalf("circuit open before drop %d", i+1)
				}
				h.connect(t).Dropped(errEOF)
			}
			st := h.Snapshot()
			if !tt.open {
				if st.State != Degraded {
					t.Fatalf("state %s (%q), want degraded", st.State, st.Reason)
				}
				h.acquire(t) // the redial may go at once
				return
			}
			if st.State != Failed || st.Reason != ReasonCrashLoop {
				t.Fatalf("state %s (%q), want failed (%q)", st.State, st.Reason, ReasonCrashLoop)
			}
			if want := h.policy.CrashLoops; st.Drops != want {
				t.Errorf("Status.Drops = %d, want %d", st.Drops, want)
			}
			h.deny(t, h.policy.RetryAfter)
		})
	}
}

func TestCrashLoopProbation(t *testing.T) {
	h := newHarness(t, Policy{}, fixed(1))
	for range 5 {
		h.connect(t).Dropped(errEOF)
	}
	h.wantState(t, Failed, ReasonCrashLoop)

	// A probe that connects but dies at once, long after the drops that
	// opened the circuit aged out, is a failed probe: the circuit reopens
	// and the interval doubles.
	for _, wait := range []time.Duration{30 * time.Second, 60 * time.Second, 120 * time.Second} {
		if d := h.due(t); d != wait {
			t.Fatalf("probe due in %v, want %v", d, wait)
		}
		h.clk.Advance(wait + time.Hour) // late on purpose: nothing ages out
		h.connect(t).Dropped(errEOF)
		h.wantState(t, Failed, ReasonCrashLoop)
	}

	// A probe whose connection lives a full window closes the circuit: its
	// drop is an ordinary one, and the probe schedule starts over.
	h.clk.Advance(h.due(t))
	a := h.connect(t)
	h.clk.Advance(DefaultCrashWindow)
	a.Dropped(errEOF)
	h.wantState(t, Degraded, "connection lost: EOF")
	h.failAll(t)
	h.wantState(t, Failed, "gave up after 3 attempts: connection refused")
	if d := h.due(t); d != DefaultRetryAfter {
		t.Errorf("after the circuit closed, first probe due in %v, want %v", d, DefaultRetryAfter)
	}
}

// ---------------------------------------------------------------------------
// Never spins
// ---------------------------------------------------------------------------

// TestNeverSpins runs an hour of fake time against a server that fails at
// once, with a caller that asks Acquire every millisecond (3.6 million
// times), and counts the dials the supervisor allows.
//
// Failing instantly, default policy (any jitter): 3 start-up attempts within
// the first 3 s, Failed at ≤ 3 s, then probes at +30, +60, +120, +240, +480,
// +600, +600, +600, +600 s: the 9th probe starts at ≤ 3333 s and the 10th
// would start at ≥ 3932 s, past the hour. 3 + 9 = 12.
//
// Failing with a non-retryable error: 1 attempt, then the same 9 probes
// (the 9th at 3330 s): 10.
//
// Failing instantly, Attempts 10: the attempts end by 55 s (1+2+4+8×6 s), the
// 9th probe starts at ≤ 3385 s, the 10th would at ≥ 3971 s: 10 + 9 = 19.
//
// Crashing instantly after connecting: 5 connections in the first 5 ms open
// the circuit; each probe connects and dies at once, which reopens it with
// the interval doubled: probes at 30, 90, 210, 450, 930, 1530, 2130, 2730,
// 3330 s (+4 ms), the next would be at 3930 s: 5 + 9 = 14.
func TestNeverSpins(t *testing.T) {
	tests := []struct {
		name      string
		p         Policy
		rnd       func() float64
		retryable bool
		crash     bool // connect, then drop at once; otherwise fail at once
		want      int
		race      bool // also run under -race
	}{
		{"fail, random", Policy{}, rand.New(rand.NewPCG(3, 4)).Float64, true, false, 12, true},
		{"fail, rnd=0", Policy{}, fixed(0), true, false, 12, false},
		{"fail, rnd=1", Policy{}, fixed(1), true, false, 12, false},
		{"fail, not retryable", Policy{}, fixed(1), false, false, 10, false},
		{"fail, Attempts 10, rnd=0", Policy{Attempts: 10}, fixed(0), true, false, 19, false},
		{"fail, Attempts 10, rnd=1", Policy{Attempts: 10}, fixed(1), true, false, 19, false},
		{"crash", Policy{}, fixed(1), true, true, 14, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if raceEnabled && !tt.race {
				// The loop is single-goroutine, so the race detector finds
				// nothing in it, and it makes 3.6 million Acquires 20×
				// slower (~8 s a case). The full table runs without -race.
				t.Skip("run without -race")
			}
			t.Parallel()
			// One goroutine: a plain variable is the clock, which keeps
			// 3.6 million iterations fast under -race.
			now := t0
			s := New("s", tt.p, &Options{Now: func() time.Time { return now }, Rand: tt.rnd})
			var dials []time.Duration
			for end := t0.Add(time.Hour); now.Before(end); now = now.Add(time.Millisecond) {
				a, _, ok := s.Acquire()
				if !ok {
					continue
				}
				dials = append(dials, now.Sub(t0))
				if tt.crash {
					a.Succeeded()
					a.Dropped(errEOF)
				} else {
					a.Failed(errRefused, tt.retryable)
				}
			}
			if len(dials) != tt.want {
				t.Errorf("%d dials in an hour, want %d; at %v", len(dials), tt.want, dials)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Concurrency
// ---------------------------------------------------------------------------

// TestAcquireExclusive has 50 goroutines ask at once in each window; exactly
// one gets the permission, which none gets again before the outcome.
func TestAcquireExclusive(t *testing.T) {
	const callers = 50
	h := newHarness(t, Policy{Attempts: 10}, rand.New(rand.NewPCG(5, 6)).Float64)
	for window := range 12 {
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			won   []Attempt
			start = make(chan struct{})
		)
		for range callers {
			wg.Go(func() {
				<-start
				for range 10 {
					if a, _, ok := h.Acquire(); ok {
						mu.Lock()
						won = append(won, a)
						mu.Unlock()
					}
					_ = h.Snapshot()
				}
			})
		}
		close(start)
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("window %d: %d callers got the permission, want 1", window, len(won))
		}
		// The outcome is reported while others keep asking: still at most
		// one more permission, and only once the schedule allows it.
		var extra sync.WaitGroup
		var extraWins int
		for range callers {
			extra.Go(func() {
				if _, _, ok := h.Acquire(); ok {
					mu.Lock()
					extraWins++
					mu.Unlock()
				}
			})
		}
		won[0].Failed(errRefused, true)
		extra.Wait()
		if extraWins != 0 {
			t.Fatalf("window %d: %d permissions before the backoff passed", window, extraWins)
		}
		if st, _ := h.State(); st == Failed {
			break
		}
		h.clk.Advance(h.due(t))
	}
	if diff := cmp.Diff(Failed, h.Snapshot().State); diff != "" {
		t.Errorf("final state (-want +got):\n%s", diff)
	}
}

// TestEventsInOrder drives transitions from many goroutines and checks that
// OnChange saw a single chain: each event starts where the previous ended,
// and the last ends in the current state.
func TestEventsInOrder(t *testing.T) {
	h := newHarness(t, Policy{Attempts: 10, BaseDelay: time.Nanosecond, MaxDelay: time.Nanosecond,
		RetryAfter: time.Nanosecond, CrashWindow: time.Nanosecond}, rand.New(rand.NewPCG(7, 8)).Float64)
	var wg sync.WaitGroup
	for g := range 20 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for range 500 {
				h.clk.Advance(time.Nanosecond)
				switch r.IntN(20) {
				case 0:
					h.Reset()
				case 1:
					h.Stop()
				}
				a, _, ok := h.Acquire()
				if !ok {
					continue
				}
				switch r.IntN(3) {
				case 0:
					a.Failed(errRefused, r.IntN(4) != 0)
				case 1:
					a.Succeeded()
				default:
					a.Succeeded()
					a.Dropped(errEOF)
				}
			}
		})
	}
	wg.Wait()
	evs := h.rec.events()
	if len(evs) < 100 {
		t.Fatalf("only %d events", len(evs))
	}
	from := Starting
	for i, e := range evs {
		if e.From != from {
			t.Fatalf("event %d: from %s, want %s (the previous event's To)", i, e.From, from)
		}
		if i > 0 && e.At.Before(evs[i-1].At) {
			t.Fatalf("event %d at %v, before event %d at %v", i, e.At, i-1, evs[i-1].At)
		}
		from = e.To
	}
	st := h.Snapshot()
	last := evs[len(evs)-1]
	if st.State != last.To || st.Reason != last.Reason || !st.Since.Equal(last.At) || st.Prev != last.From {
		t.Errorf("Status %s %q since %v prev %s; last event %+v", st.State, st.Reason, st.Since, st.Prev, last)
	}
}

// TestOnChangeReentrant checks that the hook may call back into the
// Supervisor, and that events it causes are delivered after its own.
func TestOnChangeReentrant(t *testing.T) {
	clk := &clock{t: t0}
	var (
		s   *Supervisor
		got []string
	)
	s = New("s", Policy{Attempts: 1}, &Options{Now: clk.Now, Rand: fixed(1), OnChange: func(e Event) {
		st, _ := s.State()
		got = append(got, string(e.From)+"→"+string(e.To)+" (now "+string(st)+")")
		if e.To == Failed {
			s.Stop() // e.g. a host that gives up on a server at once
		}
	}})
	a, _, _ := s.Acquire()
	a.Failed(errRefused, true)
	want := []string{"starting→failed (now failed)", "failed→stopped (now stopped)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// ---------------------------------------------------------------------------
// Stop, Reset and stale reports
// ---------------------------------------------------------------------------

func TestStopReset(t *testing.T) {
	h := newHarness(t, Policy{}, fixed(1))
	old := h.acquire(t) // in flight when the server is stopped
	h.Stop()
	h.wantState(t, Stopped, "stopped")
	h.deny(t, 0)
	old.Succeeded() // late: ignored
	h.wantState(t, Stopped, "stopped")
	h.Stop() // idempotent: no event
	h.clk.Advance(time.Hour)
	h.deny(t, 0) // terminal, however long one waits

	h.Reset()
	h.wantState(t, Starting, "reset")
	if st := h.Snapshot(); st.Next != h.clk.Now() || st.Attempts != 0 || st.Drops != 0 || st.LastError != "" {
		t.Errorf("after Reset: %+v", st)
	}
	a := h.acquire(t) // at once
	old.Failed(errRefused, true)
	h.wantState(t, Starting, "reset") // the abandoned attempt cannot report
	a.Succeeded()

	// Reset from Ready abandons the live connection too: its drop, reported
	// late, must not degrade the new one.
	h.Reset()
	b := h.connect(t)
	a.Dropped(errEOF)
	h.wantState(t, Ready, "connected")
	b.Dropped(errEOF)
	h.wantState(t, Degraded, "connection lost: EOF")

	want := []State{Starting, Stopped, Starting, Ready, Starting, Ready, Degraded}
	if diff := cmp.Diff(want, path(h.rec.events())); diff != "" {
		t.Errorf("path (-want +got):\n%s", diff)
	}
}

func TestResetClearsHistory(t *testing.T) {
	h := newHarness(t, Policy{}, fixed(1))
	for range 4 {
		h.connect(t).Dropped(errEOF)
	}
	h.Reset()
	h.connect(t).Dropped(errEOF) // would be the 5th drop without the Reset
	h.wantState(t, Degraded, "connection lost: EOF")
	h.failAll(t)
	if d := h.due(t); d != DefaultRetryAfter {
		t.Errorf("first probe due in %v, want %v", d, DefaultRetryAfter)
	}
}

func TestStaleReports(t *testing.T) {
	h := newHarness(t, Policy{}, fixed(1))
	var zero Attempt
	zero.Succeeded()
	zero.Failed(errRefused, true)
	zero.Dropped(errEOF)

	a := h.acquire(t)
	a.Dropped(errEOF) // not connected yet
	h.wantState(t, Starting, "not connected yet")
	a.Succeeded()
	a.Succeeded()               // twice
	a.Failed(errRefused, false) // after success
	h.wantState(t, Ready, "connected")
	a.Dropped(errEOF)
	a.Dropped(errEOF) // the connection dropped already
	h.wantState(t, Degraded, "connection lost: EOF")
	a.Succeeded() // the consumed permission cannot revive it
	h.wantState(t, Degraded, "connection lost: EOF")
	if n := len(h.rec.events()); n != 2 {
		t.Errorf("%d events, want 2: %+v", n, h.rec.events())
	}
}

func TestSnapshot(t *testing.T) {
	h := newHarness(t, Policy{}, fixed(0))
	st := h.Snapshot()
	want := Status{Server: "s", State: Starting, Reason: "not connected yet", Since: t0, Next: t0}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("initial (-want +got):\n%s", diff)
	}

	a := h.acquire(t)
	if st := h.Snapshot(); !st.Dialing || !st.Next.IsZero() {
		t.Errorf("dialing: Dialing %v, Next %v; want true, zero", st.Dialing, st.Next)
	}
	h.clk.Advance(time.Second)
	a.Failed(errRefused, true)
	want = Status{Server: "s", State: Backoff, Reason: "attempt 1 of 3 failed: connection refused", Prev: Starting,
		Since: t0.Add(time.Second), Attempts: 1, Next: t0.Add(1750 * time.Millisecond), LastError: "connection refused"}
	if diff := cmp.Diff(want, h.Snapshot()); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}

	h.clk.Advance(time.Second)
	h.connect(t).Dropped(errEOF)
	h.clk.Advance(DefaultCrashWindow - time.Nanosecond)
	if st := h.Snapshot(); st.Drops != 1 {
		t.Errorf("Drops = %d just inside the window, want 1", st.Drops)
	}
	h.clk.Advance(time.Nanosecond)
	if st := h.Snapshot(); st.Drops != 0 {
		t.Errorf("Drops = %d after the window, want 0", st.Drops)
	}
}

func TestNilOptions(t *testing.T) {
	s := New("s", Policy{}, nil)
	a, wait, ok := s.Acquire()
	if !ok || wait != 0 {
		t.Fatalf("Acquire = %v, %v; want ok", ok, wait)
	}
	a.Failed(errRefused, true)
	st := s.Snapshot()
	if d := st.Next.Sub(st.Since); d < 750*time.Millisecond || d > time.Second {
		t.Errorf("real-clock backoff %v, want within [750ms, 1s]", d)
	}
}

// ---------------------------------------------------------------------------
// Schedule and Restore: the schedule across processes
// ---------------------------------------------------------------------------

func TestScheduleRestore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fails int // failed attempts before the Schedule is taken
		want  State
	}{
		{"backoff", 1, Backoff},
		{"failed", 3, Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Policy{}, fixed(1))
			for i := range tc.fails {
				if i > 0 {
					h.clk.Advance(h.due(t))
				}
				h.acquire(t).Failed(errRefused, true)
			}
			sch, ok := h.Schedule()
			if !ok || sch.State != tc.want || sch.Attempts != tc.fails || sch.LastError != errRefused.Error() {
				t.Fatalf("Schedule() = %+v, %v; want %s after %d attempts", sch, ok, tc.want, tc.fails)
			}
			// A new process: a new Supervisor on the same clock.
			later := newHarness(t, Policy{}, fixed(1))
			later.clk.Set(h.clk.Now())
			if !later.Restore(sch) {
				t.Fatal("Restore on a fresh Supervisor = false")
			}
			later.wantState(t, tc.want, sch.Reason)
			later.deny(t, sch.Next.Sub(later.clk.Now()))
			later.clk.Set(sch.Next)
			a := later.acquire(t)
			a.Failed(errRefused, true)
			// The series went on where it stopped: one more failure after
			// a backoff is the second attempt of three; a failed probe
			// doubles the probe wait.
			switch tc.want {
			case Backoff:
				later.wantState(t, Backoff, "attempt 2 of 3 failed: connection refused")
			case Failed:
				if got := later.due(t); got != 2*DefaultRetryAfter {
					t.Errorf("after a failed restored probe, next probe in %v; want %v", got, 2*DefaultRetryAfter)
				}
			}
			if later.Restore(sch) {
				t.Error("Restore after an attempt = true; want false")
			}
		})
	}
	h := newHarness(t, Policy{}, fixed(1))
	if _, ok := h.Schedule(); ok {
		t.Error("Schedule() of a Starting server = ok; want nothing to keep")
	}
	if h.Restore(Schedule{State: Ready}) {
		t.Error("Restore(Ready) = true; want false")
	}
	h.connect(t)
	if _, ok := h.Schedule(); ok {
		t.Error("Schedule() of a Ready server = ok; want nothing to keep")
	}
}
