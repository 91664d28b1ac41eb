package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/ingest"
	"github.com/switchboard-mcp/switchboard/internal/sandbox"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/supervise"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// server is one configured server and, when connected, its connection.
// Each server owns its state: a call touches only its own server's lock
// and atomics, never the Host's.
//
// Lock order: Host.reloadMu, then Host.mu, then server.mu, then the
// supervisor's and the trust score's own locks. At most one server.mu is
// held at a time. server.schedMu is taken without server.mu, before the
// supervisor's lock. server.mu is never held while calling upstream (dialling,
// discovering, calling, closing a connection), the store, or back into the
// Host (rebuild, changed, vet).
type server struct {
	// Fixed at creation.
	name  string
	h     *Host
	sup   *supervise.Supervisor // decides when a dial may happen; nil when disabled
	trust *trustScore           // has its own lock
	// runArgs are the arguments the server is launched with when they
	// differ from its configuration's: an npx-style launch rewritten to
	// the exact package version of its launch (launch.go). nil otherwise.
	runArgs []string

	// cfg is the server's settings, never mutated: Reload swaps in new
	// ones that keep the connection (see sameConnection), so a call reads
	// one consistent value without a lock.
	cfg atomic.Pointer[config.Server]

	inflight atomic.Int64 // requests in progress, for the idle timeout
	lastUse  atomic.Int64 // UnixNano of the last request's start or end

	relistAsked atomic.Bool // the server said its lists changed; the relister clears it when it takes note (relist.go)
	rd          rediscovery // shares one re-discovery among its callers (rediscover.go); has its own lock

	// schedMu serialises writes of the start-up schedule to the store
	// (keepSchedule), so that the last write is of the latest schedule,
	// and guards scheduled. It is held across the store write, never
	// together with mu.
	schedMu   sync.Mutex
	scheduled bool // the store may hold a schedule of this server

	// mu guards state, since, err, loginAsked, conn, attempt, caps, dialing,
	// idling, stopped (the connection and its lifecycle), launchHeld
	// (launch.go).
	mu    sync.Mutex
	state State     // changed only by setState
	since time.Time // when state last changed
	err   error     // why the last dial or connection failed; nil after a dial succeeds
	// loginAsked is when the dial that failed for want of an OAuth login
	// started; zero otherwise. A grant kept after it (login.go) starts
	// the server afresh.
	loginAsked time.Time
	conn       *upstream.Conn
	attempt    supervise.Attempt       // the Attempt that made conn
	caps       *mcp.ServerCapabilities // declared at the last handshake; kept when the connection ends
	dialing    chan struct{}           // closed when the dial in progress ends; nil when none
	idling     bool                    // conn is being closed for idleness
	stopped    bool                    // removed by Reload or closed with the Host: no connection is kept
	launchHeld string                  // "new" or "changed" while the server is held for its launch (launch.go); "" otherwise
	sandbox    sandbox.Status          // the sandbox of the last start (sandbox.go)
	sandboxSet bool                    // sandbox is known: the server started, or was refused, in this process
	limits     sandbox.Events          // what the limits did to the last process

	cat   catalogue // the lists; has its own lock
	holds holds     // approvals and held tools; has its own lock
}

// setState is the one way a server's state changes. Called with s.mu held.
func (s *server) setState(to State) {
	if s.state == to {
		return
	}
	s.h.log.Debug("server state", "server", s.name, "from", s.state, "to", to)
	s.state, s.since = to, time.Now()
}

// currentState returns the server's state.
func (s *server) currentState() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// beginCall and endCall count the server's requests in progress, for the
// idle timeout; they take no lock.
func (s *server) beginCall() {
	s.inflight.Add(1)
	s.touch()
}

func (s *server) endCall() {
	s.touch()
	s.inflight.Add(-1)
}

func (s *server) touch() { s.lastUse.Store(time.Now().UnixNano()) }

// ensure returns the server's live connection, dialling it when the
// supervisor allows. Concurrent callers share one dial. The dial is bounded
// by the server's startup timeout (and ctx: a call waits at most its own
// deadline).
func (s *server) ensure(ctx context.Context) (*upstream.Conn, error) {
	for {
		sc := s.cfg.Load()
		switch {
		case s.h.closed.Load():
			return nil, fault.New(fault.CodeUnavailable, s.name, "", errors.New("the host is closed"))
		case !sc.Enabled:
			return nil, fault.New(fault.CodeUnavailable, s.name, "", errors.New(`the server is disabled ("enabled": false in the configuration)`))
		case sc.Unusable != nil:
			return nil, fault.New(fault.CodeUnavailable, s.name, "", sc.Unusable)
		}
		s.mu.Lock()
		if s.launchHeld != "" {
			err := s.err
			s.mu.Unlock()
			return nil, err
		}
		switch {
		case s.conn != nil && s.idling:
			// Being closed for idleness: a call must not start on it.
			// Wait for the close, then dial afresh.
			c, a := s.conn, s.attempt
			s.mu.Unlock()
			select {
			case <-c.Done():
				s.dropped(c, a, nil)
				continue
			case <-ctx.Done():
				return nil, fault.New(fault.CodeTimeout, s.name, "connect", ctx.Err())
			}
		case s.conn != nil:
			c, a := s.conn, s.attempt
			s.mu.Unlock()
			s.touch()
			select {
			case <-c.Done():
				// Ended, and watch has not noticed yet: record the drop
				// here, so this call redials instead of failing.
				s.dropped(c, a, nil)
				continue
			default:
			}
			return c, nil
		case s.dialing != nil:
			ch := s.dialing
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, fault.New(fault.CodeTimeout, s.name, "connect", ctx.Err())
			}
		}
		a, wait, ok := s.sup.Acquire()
		if !ok && !s.loginAsked.IsZero() {
			s.mu.Unlock()
			if s.retryAfterLogin() {
				continue
			}
			s.mu.Lock()
		}
		if !ok {
			err := s.leftOutLocked(wait)
			s.mu.Unlock()
			return nil, err
		}
		ch := make(chan struct{})
		s.dialing = ch
		s.setState(StateStarting)
		s.mu.Unlock()
		err := s.dial(ctx, a)
		s.mu.Lock()
		s.dialing = nil
		close(ch)
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
}

// leftOutLocked explains why the server cannot be dialled now. Called
// with s.mu held.
func (s *server) leftOutLocked(wait time.Duration) error {
	msg := "the server is not connected"
	if s.err != nil {
		msg = fmt.Sprintf("the server failed: %s", withoutServer(s.err, s.name))
	}
	if wait > 0 {
		msg += fmt.Sprintf("; next attempt in %v", wait.Round(time.Second))
	}
	return fault.New(fault.CodeUnavailable, s.name, "", privateAs(s.err, errors.New(msg)))
}

// dial connects and discovers the server under an Attempt, and records the
// outcome. A catalogue that differs from the saved one is saved, and the
// aggregate is rebuilt (after Open).
func (s *server) dial(ctx context.Context, a supervise.Attempt) error {
	h, sc := s.h, s.cfg.Load()
	start := time.Now()
	dctx, cancel := upstream.WithStartup(context.WithoutCancel(ctx), sc)
	defer cancel()
	stop := context.AfterFunc(h.life, cancel) // Close cancels a dial in progress
	defer stop()
	lsc := s.launched(sc)
	conn, err := upstream.Dial(dctx, lsc, &h.opts)
	s.sandboxStarted(lsc, conn, err)
	var cat *catalog.Catalog
	if err == nil {
		if cat, err = conn.Discover(dctx); err != nil {
			conn.Close()
		}
	}
	if err != nil && h.life.Err() != nil {
		// Close cut the dial short: not the server's failure, and nothing
		// to keep for the next run.
		return fault.New(fault.CodeUnavailable, s.name, "", errors.New("the host is closed"))
	}
	if err != nil {
		err = maskErr(sc, err)
		a.Failed(err, retryable(err))
		s.mu.Lock()
		s.err = err
		s.loginAsked = time.Time{}
		if fault.CodeOf(err) == fault.CodeNeedsLogin {
			s.loginAsked = start
		}
		s.setState(stateOf(s.sup))
		s.mu.Unlock()
		s.keepSchedule()
		s.trust.add(outcomeError)
		if h.opened.Load() {
			h.changed() // the capability tools' gates may have closed
		}
		h.log.Warn("server failed to start; the others are unaffected", "server", s.name, "err", err)
		kind := EventBackoff
		if stateOf(s.sup) == StateFailed {
			kind = EventFailed
		}
		h.event(ServerEvent{Server: s.name, Kind: kind, Err: err})
		return err
	}
	vetted := h.vet(sc, cat)
	s.touch() // before conn is set: the idle reaper reads both
	s.mu.Lock()
	if h.closed.Load() || s.stopped {
		s.mu.Unlock()
		conn.Close()
		return fault.New(fault.CodeUnavailable, s.name, "", errors.New("the host is closed"))
	}
	changed := s.cat.swap(cat, vetted)
	s.conn, s.attempt = conn, a
	s.caps = conn.Info().Capabilities
	restarted := s.err != nil // the last connection ended, or the last attempt failed
	s.err, s.loginAsked = nil, time.Time{}
	s.setState(StateReady)
	// Started under s.mu, after the closed check: Close, which sets closed
	// before it takes each s.mu, waits for it.
	h.watchers.Go(func() { s.watch(conn, a) })
	s.mu.Unlock()
	a.Succeeded()
	s.keepSchedule()
	if restarted {
		h.log.Debug("server restarted", "server", s.name, "protocol", conn.Info().ProtocolVersion)
		h.event(ServerEvent{Server: s.name, Kind: EventRestarted})
	}
	opened := h.opened.Load()
	if changed {
		h.saveCatalog(sc, cat)
		if opened {
			h.rebuild()
		}
	}
	if opened {
		h.changed() // new lists, or the capability tools' gates may have opened
	}
	return nil
}

// watch records the end of a connection: a drop (the next call redials)
// or an idle stop.
func (s *server) watch(conn *upstream.Conn, a supervise.Attempt) {
	<-conn.Done()
	s.dropped(conn, a, nil)
}

// dropped records that conn ended, once (watch, ensure and call may all
// see it); cause nil means the connection's own error.
func (s *server) dropped(conn *upstream.Conn, a supervise.Attempt, cause error) {
	h := s.h
	s.mu.Lock()
	if s.conn != conn || h.closed.Load() {
		s.mu.Unlock()
		return
	}
	s.conn = nil
	select {
	case <-conn.Done():
	default:
		// Seen broken by a call before it ended by itself: close it, so
		// its watcher (and Close) are not left waiting.
		h.watchers.Go(func() { conn.Close() })
	}
	if s.idling {
		s.idling = false
		s.setState(StateIdle)
		s.mu.Unlock()
		s.sup.Reset() // not a failure: the next call starts it afresh
		h.log.Debug("idle server stopped", "server", s.name)
		return
	}
	err := cause
	if err == nil {
		err = conn.Err()
	}
	err = maskErr(s.cfg.Load(), err)
	s.err = err
	s.mu.Unlock()
	a.Dropped(err)
	s.mu.Lock()
	if !s.stopped {
		s.setState(stateOf(s.sup))
	}
	s.mu.Unlock()
	s.keepSchedule() // a crash loop is kept; a drop leaves nothing to keep
	h.changed()      // the capability tools' gates may have closed
	s.sandboxEnded(conn)
	status := conn.ExitStatus()
	if status != "" {
		h.log.Warn("server exited; the next call restarts it", "server", s.name, "status", status, "err", err)
	} else {
		h.log.Warn("server connection ended; the next call reconnects", "server", s.name, "err", err)
	}
	h.event(ServerEvent{Server: s.name, Kind: EventExited, Status: status, Err: err})
}

// keepSchedule writes the supervisor's start-up schedule to the store when
// the server is in backoff or failed, so that the next run does not dial
// it before its next attempt is due, and deletes it otherwise.
func (s *server) keepSchedule() {
	h := s.h
	if h.store == nil || s.sup == nil {
		return
	}
	sc := s.cfg.Load()
	s.schedMu.Lock()
	defer s.schedMu.Unlock()
	// Bounded: a dial that a call waits for ends here, and a store that
	// hangs must not hold it.
	ctx, cancel := context.WithTimeout(context.Background(), auditPutTimeout)
	defer cancel()
	sch, ok := s.sup.Schedule()
	if !ok {
		if s.scheduled {
			err := h.store.DeleteSchedule(ctx, s.name)
			h.storeReached(err)
			if err != nil {
				h.log.Warn("start-up schedule not deleted", "server", s.name, "err", err)
				return
			}
			s.scheduled = false
		}
		return
	}
	err := h.store.SaveSchedule(ctx, &store.Schedule{
		Server: s.name, Fingerprint: sc.Fingerprint(), State: string(sch.State), Reason: sch.Reason,
		Attempts: sch.Attempts, Probes: sch.Probes, Next: sch.Next, LastError: sch.LastError,
	})
	h.storeReached(err)
	if err != nil {
		h.log.Warn("start-up schedule not saved", "server", s.name, "err", err)
		return
	}
	s.scheduled = true
}

// retryStartup keeps trying a server whose first attempt failed, on the
// supervisor's schedule, until it connects, its start-up attempts are
// exhausted, or the host closes.
func (s *server) retryStartup() {
	h := s.h
	for {
		s.mu.Lock()
		done := s.conn != nil || s.stopped
		s.mu.Unlock()
		if done || h.closed.Load() {
			return
		}
		if st, _ := s.sup.State(); st == supervise.Failed || st == supervise.Stopped {
			return // left out: later activity probes it
		}
		wait := time.Until(s.sup.Snapshot().Next)
		if wait <= 0 {
			wait = 10 * time.Millisecond
		}
		select {
		case <-h.stop:
			return
		case <-time.After(wait):
		}
		s.ensure(h.life) //nolint:errcheck // the outcome is recorded
	}
}

// idleConn marks the connection for an idle stop and returns it, when the
// server has had no request in progress for its idleTimeoutMs.
//
// A call counts itself in flight before it asks ensure for the connection,
// and ensure, under s.mu, never hands out a connection marked idling; so
// checking again under s.mu leaves no call on a connection being closed.
func (s *server) idleConn(now time.Time) *upstream.Conn {
	idle := func() bool {
		it := s.cfg.Load().Lifecycle.IdleTimeout
		return it > 0 && s.inflight.Load() == 0 && now.Sub(time.Unix(0, s.lastUse.Load())) >= it
	}
	if !idle() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil || s.idling || !idle() {
		return nil
	}
	s.idling = true
	return s.conn
}

// stop stops the server for good (Reload removed it, or the Host closes)
// and returns its connection, for the caller to close.
func (s *server) stop() *upstream.Conn {
	if s.sup != nil {
		s.sup.Stop()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	c := s.conn
	s.conn = nil
	if s.state != StateDisabled {
		s.setState(StateClosed)
	}
	return c
}

// revet vets the server's lists again, under its settings and the
// security settings in force (Reload changed them), unless they were
// replaced meanwhile.
func (s *server) revet() {
	raw := s.cat.rawLists()
	if raw == nil {
		return
	}
	s.cat.replace(raw, raw, s.h.vet(s.cfg.Load(), raw))
}

// serverView is a copy of a server's state at one moment, for readers that
// must not hold its lock. What it points to is never mutated.
type serverView struct {
	cfg     *config.Server
	state   State
	since   time.Time
	err     error
	conn    *upstream.Conn
	caps    *mcp.ServerCapabilities
	catalog *catalog.Catalog // vetted; nil until known
	vetted  *ingest.Result
	flags   []Finding
	launch  string   // launchHeld: "new" or "changed" while the server is held for its launch
	warned  bool     // launchWarn
	held    []string // tools held back (see holds.isHeldLocked), sorted; "" is the instructions
	injHeld []string // tools held back for an injection pattern until approved, sorted

	sandbox    sandbox.Status
	sandboxSet bool
	limits     sandbox.Events
}

// view returns the server's status snapshot.
func (s *server) view() serverView {
	cv := s.cat.view()
	hv := s.holds.view(s.h.lock != nil, s.cfg.Load().Lifecycle.OnDrift)
	s.mu.Lock()
	defer s.mu.Unlock()
	v := serverView{
		cfg: s.cfg.Load(), state: s.state, since: s.since, err: s.err, conn: s.conn, caps: s.caps,
		catalog: cv.catalog, vetted: cv.vetted, flags: cv.flags, launch: s.launchHeld, warned: hv.warned,
		held: hv.held, injHeld: hv.injHeld,
		sandbox: s.sandbox, sandboxSet: s.sandboxSet, limits: s.limits,
	}
	return v
}

// isHeld reports whether tool ("" for the instructions) is held back.
func (v *serverView) isHeld(tool string) bool { return slices.Contains(v.held, tool) }

// healthy reports whether the server's lists count for the capability
// gates: they are known and the server has not failed or been turned off.
func (v *serverView) healthy() bool {
	if v.catalog == nil {
		return false
	}
	switch v.state {
	case StateFailed, StateBackoff, StateDisabled, StateClosed:
		return false
	}
	return true
}

// stateOf maps the supervisor's state to the host's.
func stateOf(sup *supervise.Supervisor) State {
	st, _ := sup.State()
	switch st {
	case supervise.Ready:
		return StateReady
	case supervise.Degraded:
		return StateDegraded
	case supervise.Backoff:
		return StateBackoff
	case supervise.Failed:
		return StateFailed
	case supervise.Stopped:
		return StateClosed
	}
	return StateStarting
}

// retryable reports whether another start-up attempt could succeed where
// this one failed (see upstream.Permanent).
func retryable(err error) bool { return !upstream.Permanent(err) }
