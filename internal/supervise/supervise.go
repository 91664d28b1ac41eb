package supervise

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// State is where a server stands.
type State string

// The states of a server. A Supervisor starts in Starting.
const (
	// Starting: not connected yet; the first attempt may go now (or is in
	// flight).
	Starting State = "starting"
	// Ready: connected and discovered.
	Ready State = "ready"
	// Degraded: a Ready connection ended; one redial may go at once.
	Degraded State = "degraded"
	// Backoff: an attempt failed; the next may go when its delay has passed.
	Backoff State = "backoff"
	// Failed: left out, because its attempts were exhausted, a failure was
	// not retryable, or it crash-looped (reason "crash loop"). It may be
	// probed on the slow schedule (Policy.RetryAfter).
	Failed State = "failed"
	// Stopped: terminal until Reset.
	Stopped State = "stopped"
)

// ReasonCrashLoop is the reason of a server whose circuit opened.
const ReasonCrashLoop = "crash loop"

// Event is one transition, as given to Options.OnChange. From may equal To: a
// retry that failed again (Backoff → Backoff) or a failed probe (Failed →
// Failed) is a transition with a new reason and schedule.
type Event struct {
	Server   string
	From, To State
	Reason   string
	At       time.Time
}

// Options are the injected dependencies of a Supervisor. A nil *Options
// means all defaults.
type Options struct {
	// Now is the clock. Default time.Now.
	Now func() time.Time

	// Rand returns a number in [0, 1] for the backoff jitter (values
	// outside are clamped). Default math/rand/v2.Float64.
	Rand func() float64

	// OnChange, if set, is called for every transition, in order, one call
	// at a time, never with the Supervisor's lock held: it may call the
	// Supervisor's methods. The call may come from the goroutine of a later
	// transition, so it should return promptly. Default none.
	OnChange func(Event)
}

// Supervisor is the state machine of one server. It is safe for concurrent
// use.
type Supervisor struct {
	// Fixed at creation.
	server   string
	policy   Policy // defaults applied
	now      func() time.Time
	rnd      func() float64
	onChange func(Event) // nil: no events are queued

	mu sync.Mutex
	// Guarded by mu. state, prev, reason, since and next change only in set.
	state  State
	prev   State     // the state before state; "" at creation
	reason string    // why state was entered
	since  time.Time // when state was entered
	next   time.Time // earliest start of the next dial; zero: none due

	gen      uint64 // the generation of the live Attempt: bumped by Acquire, Stop and Reset
	dialing  bool   // the Attempt of generation gen has not reported its outcome
	attempts int    // consecutive failed attempts since the last connection
	lastErr  string // the last failure or drop, for Status

	out       int         // waits served on the probe schedule without a lasting connection: the next is Policy.probe(out)
	probation bool        // the circuit opened and no connection has lived CrashWindow since
	readyAt   time.Time   // when the live connection became Ready
	drops     []time.Time // drops of Ready connections, oldest first; pruned to CrashWindow

	pending    []Event // transitions not yet given to onChange
	delivering bool    // a goroutine is giving pending to onChange
}

// New returns the Supervisor of the named server, in state Starting with its
// first attempt due at once. p's zero fields take their defaults; opts may
// be nil.
func New(server string, p Policy, opts *Options) *Supervisor {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	now := o.Now()
	return &Supervisor{
		server:   server,
		policy:   p.withDefaults(),
		now:      o.Now,
		rnd:      o.Rand,
		onChange: o.OnChange,
		state:    Starting,
		reason:   "not connected yet",
		since:    now,
		next:     now,
	}
}

// An Attempt is the permission to make one connection attempt, granted by
// Acquire. Its outcome must be reported exactly once, with Succeeded or
// Failed; until then no other attempt is granted. If it succeeded, Dropped
// reports the end of the connection it made.
//
// Reports on an Attempt that is no longer current (reported already, or
// abandoned by Stop or Reset) are ignored, so a late report from a dial
// that outlived a reload cannot disturb the new series. The zero Attempt
// ignores all reports.
type Attempt struct {
	s   *Supervisor
	gen uint64
}

// Acquire asks whether a connection attempt may start now. If so, it returns
// ok and the Attempt, which holds the permission until its outcome is
// reported. If not, wait is how long until the schedule allows one; wait is
// zero when waiting alone will not help: the server is Ready or Stopped, or
// an attempt is in flight (its outcome decides what comes next).
//
// Acquire does not change the State: a server stays, for instance, Failed
// while a probe is in flight (Status.Dialing reports it).
func (s *Supervisor) Acquire() (a Attempt, wait time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == Ready || s.state == Stopped || s.dialing {
		return Attempt{}, 0, false
	}
	if d := s.next.Sub(s.now()); d > 0 {
		return Attempt{}, d, false
	}
	s.gen++
	s.dialing = true
	return Attempt{s: s, gen: s.gen}, 0, true
}

// Succeeded reports that the attempt connected and discovery worked: the
// server is Ready.
func (a Attempt) Succeeded() {
	s := a.s
	if s == nil {
		return
	}
	s.mu.Lock()
	if !s.dialingFor(a) {
		s.mu.Unlock()
		return
	}
	now := s.now()
	s.dialing = false
	s.attempts = 0
	s.readyAt = now
	s.set(Ready, "connected", now, time.Time{})
	s.mu.Unlock()
	s.deliver()
}

// Failed reports that the attempt failed. retryable is the caller's
// classification: false for a failure that more attempts cannot fix (an
// HTTP 401 or 403), which leaves the server Failed at once. While Failed,
// every failure, retryable or not, schedules the next probe.
func (a Attempt) Failed(err error, retryable bool) {
	s := a.s
	if s == nil {
		return
	}
	s.mu.Lock()
	if !s.dialingFor(a) {
		s.mu.Unlock()
		return
	}
	now := s.now()
	msg := "unknown error"
	if err != nil {
		msg = err.Error()
	}
	s.dialing = false
	s.attempts++
	s.lastErr = msg
	p := s.policy
	switch {
	case s.state == Failed:
		s.leaveOut("probe failed: "+msg, now)
	case !retryable:
		s.leaveOut("not retried: "+msg, now)
	case s.attempts >= p.Attempts:
		s.leaveOut(fmt.Sprintf("gave up after %d attempts: %s", s.attempts, msg), now)
	default:
		reason := fmt.Sprintf("attempt %d of %d failed: %s", s.attempts, p.Attempts, msg)
		s.set(Backoff, reason, now, now.Add(p.backoff(s.attempts, s.rnd())))
	}
	s.mu.Unlock()
	s.deliver()
}

// Dropped reports that the connection this attempt made has ended. The
// server becomes Degraded (one redial may go at once), or Failed with reason
// "crash loop" when the circuit opens. Reports for a connection that is not
// the live one are ignored.
func (a Attempt) Dropped(err error) {
	s := a.s
	if s == nil {
		return
	}
	s.mu.Lock()
	if a.gen != s.gen || s.state != Ready {
		s.mu.Unlock()
		return
	}
	now := s.now()
	p := s.policy
	reason := "connection lost"
	if err != nil {
		reason += ": " + err.Error()
		s.lastErr = err.Error()
	}
	s.attempts = 0
	s.drops = append(s.recentDrops(now), now)
	lived := now.Sub(s.readyAt)
	switch {
	case s.probation && lived < p.CrashWindow:
		// The first connection after the circuit opened did not last: a
		// failed probe.
		s.leaveOut(ReasonCrashLoop, now)
	case len(s.drops) >= p.CrashLoops:
		s.probation = true
		s.leaveOut(ReasonCrashLoop, now)
	default:
		if lived >= p.CrashWindow {
			// A lasting connection: forget earlier probing.
			s.probation = false
			s.out = 0
		}
		s.set(Degraded, reason, now, now)
	}
	s.mu.Unlock()
	s.deliver()
}

// Stop makes the server Stopped: Acquire says no until Reset, and reports on
// outstanding Attempts are ignored. Closing a live connection is the
// caller's business. Stopping a stopped server does nothing.
func (s *Supervisor) Stop() {
	s.mu.Lock()
	if s.state == Stopped {
		s.mu.Unlock()
		return
	}
	s.gen++
	s.dialing = false
	s.set(Stopped, "stopped", s.now(), time.Time{})
	s.mu.Unlock()
	s.deliver()
}

// Reset starts over from any state: Starting with the first attempt due at
// once, all counts and history cleared, outstanding Attempts abandoned.
func (s *Supervisor) Reset() {
	s.mu.Lock()
	now := s.now()
	s.gen++
	s.dialing = false
	s.attempts = 0
	s.lastErr = ""
	s.out = 0
	s.probation = false
	s.readyAt = time.Time{}
	s.drops = nil
	s.set(Starting, "reset", now, now)
	s.mu.Unlock()
	s.deliver()
}

// State returns the current state and the reason it was entered.
func (s *Supervisor) State() (State, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.reason
}

// Status is a snapshot of a Supervisor.
type Status struct {
	Server string
	State  State
	Reason string    // why State was entered
	Prev   State     // the state before State; "" if there was none
	Since  time.Time // when State was entered

	Attempts  int       // consecutive failed attempts (probes included) since the server was last Ready
	Dialing   bool      // an Attempt is in flight
	Next      time.Time // earliest start of the next attempt; zero if none is due (Ready, Stopped, Dialing)
	Drops     int       // drops of a Ready connection within the last CrashWindow
	LastError string    // the last failure or drop error; "" if none since creation or Reset
}

// Snapshot returns the current status.
func (s *Supervisor) Snapshot() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{
		Server:    s.server,
		State:     s.state,
		Reason:    s.reason,
		Prev:      s.prev,
		Since:     s.since,
		Attempts:  s.attempts,
		Dialing:   s.dialing,
		Drops:     len(s.recentDrops(s.now())),
		LastError: s.lastErr,
	}
	if !s.dialing {
		st.Next = s.next
	}
	return st
}

// set is the one place where the state changes (STYLE practice 5): it
// records the previous state, the reason, the time and the next dial time,
// and queues the event. The caller holds mu and calls deliver after
// unlocking.
func (s *Supervisor) set(to State, reason string, now, next time.Time) {
	from := s.state
	s.prev, s.state, s.reason, s.since, s.next = from, to, reason, now, next
	if s.onChange != nil {
		s.pending = append(s.pending, Event{Server: s.server, From: from, To: to, Reason: reason, At: now})
	}
}

// leaveOut makes the server Failed with its next probe on the probe
// schedule. The caller holds mu.
func (s *Supervisor) leaveOut(reason string, now time.Time) {
	wait := s.policy.probe(s.out)
	s.out = min(s.out+1, 64) // the wait is capped long before
	s.set(Failed, reason, now, now.Add(wait))
}

// dialingFor reports whether a is the attempt in flight. The caller holds
// mu.
func (s *Supervisor) dialingFor(a Attempt) bool {
	return s.dialing && a.gen == s.gen
}

// recentDrops prunes drops to those less than CrashWindow old. The caller
// holds mu.
func (s *Supervisor) recentDrops(now time.Time) []time.Time {
	i := 0
	for i < len(s.drops) && now.Sub(s.drops[i]) >= s.policy.CrashWindow {
		i++
	}
	s.drops = s.drops[i:]
	return s.drops
}

// deliver gives queued events to onChange outside the lock. One goroutine
// delivers at a time and takes the queue whole, so events arrive in order;
// a goroutine that finds another delivering leaves its events to it, which
// also lets onChange call back into the Supervisor.
func (s *Supervisor) deliver() {
	for {
		s.mu.Lock()
		if s.delivering || len(s.pending) == 0 {
			s.mu.Unlock()
			return
		}
		evs := s.pending
		s.pending = nil
		s.delivering = true
		s.mu.Unlock()
		s.hand(evs)
	}
}

func (s *Supervisor) hand(evs []Event) {
	defer func() {
		s.mu.Lock()
		s.delivering = false
		s.mu.Unlock()
	}()
	for _, e := range evs {
		s.onChange(e)
	}
}

// Schedule is what of a Supervisor outlives the process, so that a server
// in Backoff or Failed stays there across runs instead of being dialled
// afresh by every one: its state, why it was entered, the consecutive
// failed attempts, the probes served, and when the next attempt may go.
type Schedule struct {
	State     State     // Backoff or Failed; other states have nothing to keep
	Reason    string    // why State was entered
	Attempts  int       // consecutive failed attempts
	Probes    int       // waits served on the probe schedule (Failed)
	Next      time.Time // earliest start of the next attempt
	LastError string    // the last failure
}

// Schedule returns what to keep of the Supervisor, and false when there is
// nothing: the server is not in Backoff or Failed. An attempt in flight
// leaves the schedule it was granted under until it reports.
func (s *Supervisor) Schedule() (Schedule, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != Backoff && s.state != Failed {
		return Schedule{}, false
	}
	return Schedule{State: s.state, Reason: s.reason, Attempts: s.attempts, Probes: s.out, Next: s.next, LastError: s.lastErr}, true
}

// Restore puts a Supervisor that has made no attempt yet (Starting) in the
// Backoff or Failed state a Schedule kept, with its next attempt at
// sch.Next. It reports whether it did: a Supervisor that has moved on, or
// a Schedule in another state, is left as it is. Attempts are clamped to
// the policy's, so the series goes on where it stopped.
func (s *Supervisor) Restore(sch Schedule) bool {
	if sch.State != Backoff && sch.State != Failed {
		return false
	}
	s.mu.Lock()
	if s.state != Starting || s.dialing || s.gen != 0 {
		s.mu.Unlock()
		return false
	}
	s.attempts = min(max(sch.Attempts, 0), s.policy.Attempts)
	s.out = min(max(sch.Probes, 0), 64)
	s.lastErr = sch.LastError
	s.set(sch.State, sch.Reason, s.now(), sch.Next)
	s.mu.Unlock()
	s.deliver()
	return true
}
