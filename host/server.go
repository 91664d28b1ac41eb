package host

import (
	"context"
	"errors"
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
// Each server owns its state: a call touches only its own server's locks
// and atomics, never the Host's. Its mutable state is in parts, each with
// its own lock over its own fields, that the rest of the package reaches
// only through their methods: life (the connection and its lifecycle,
// life.go), cat (the lists, catalogue.go) and holds (approvals and held
// tools, holds.go).
//
// Lock order: Host.reloadMu, then Host.mu, then one part's lock, then the
// supervisor's and the trust score's own locks. At most one part lock is
// held at a time, of one server: an operation that needs two parts (a
// dial puts in lists and a connection; a relist checks the connection and
// replaces the lists; view copies all three) takes them one after the
// other, never one inside the other. Only life.mu is held while taking the
// supervisor's lock. schedMu and rd's lock are taken with no part lock
// held, schedMu before the supervisor's. No part lock is held while
// calling upstream (dialling, discovering, calling, closing a
// connection), the store, or back into the Host (rebuild, changed, vet).
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

	life  life      // the connection and its lifecycle; has its own lock
	cat   catalogue // the lists; has its own lock
	holds holds     // approvals and held tools; has its own lock
}

// currentState returns the server's state.
func (s *server) currentState() State { return s.life.currentState() }

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
		c := s.life.claim(s.sup)
		switch c.kind {
		case claimRefused:
			return nil, c.err
		case claimClosing:
			// Being closed for idleness: a call must not start on it.
			// Wait for the close, then dial afresh.
			select {
			case <-c.conn.Done():
				s.dropped(c.conn, c.attempt, nil)
				continue
			case <-ctx.Done():
				return nil, fault.New(fault.CodeTimeout, s.name, "connect", ctx.Err())
			}
		case claimLive:
			s.touch()
			select {
			case <-c.conn.Done():
				// Ended, and watch has not noticed yet: record the drop
				// here, so this call redials instead of failing.
				s.dropped(c.conn, c.attempt, nil)
				continue
			default:
			}
			return c.conn, nil
		case claimWait:
			select {
			case <-c.wait:
				continue
			case <-ctx.Done():
				return nil, fault.New(fault.CodeTimeout, s.name, "connect", ctx.Err())
			}
		case claimLogin:
			if s.retryAfterLogin() {
				continue
			}
			return nil, s.life.leftOut(c.after)
		}
		err := s.dial(ctx, c.attempt)
		s.life.dialed(c.dialing)
		if err != nil {
			return nil, err
		}
	}
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
		s.life.failed(err, start, s.sup)
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
	// The lists go in before the connection, so that whoever sees the
	// connection (life before catalogue, as view reads them) sees its lists.
	changed := s.cat.swap(cat, vetted)
	ok, restarted := s.life.connected(conn, a, func() { s.watch(conn, a) })
	if !ok {
		conn.Close()
		return fault.New(fault.CodeUnavailable, s.name, "", errors.New("the host is closed"))
	}
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
	err := cause
	if err == nil {
		err = conn.Err()
	}
	err = maskErr(s.cfg.Load(), err)
	ok, idle := s.life.drop(conn, a, s.sup, err)
	if !ok {
		return
	}
	if idle {
		h.log.Debug("idle server stopped", "server", s.name)
		return
	}
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
		if s.life.settled() || h.closed.Load() {
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
// and ensure (life.claim) never hands out a connection marked idling; so
// checking again under life.mu leaves no call on a connection being closed.
func (s *server) idleConn(now time.Time) *upstream.Conn {
	idle := func() bool {
		it := s.cfg.Load().Lifecycle.IdleTimeout
		return it > 0 && s.inflight.Load() == 0 && now.Sub(time.Unix(0, s.lastUse.Load())) >= it
	}
	if !idle() {
		return nil
	}
	return s.life.markIdle(idle)
}

// stop stops the server for good (Reload removed it, or the Host closes)
// and returns its connection, for the caller to close.
func (s *server) stop() *upstream.Conn {
	if s.sup != nil {
		s.sup.Stop()
	}
	return s.life.stop()
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
	// The life before the catalogue: dial puts the lists in before the
	// connection, so a connection seen here comes with its lists.
	lv := s.life.view()
	cv := s.cat.view()
	hv := s.holds.view(s.h.lock != nil, s.cfg.Load().Lifecycle.OnDrift)
	return serverView{
		cfg: s.cfg.Load(), state: lv.state, since: lv.since, err: lv.err, conn: lv.conn, caps: lv.caps,
		catalog: cv.catalog, vetted: cv.vetted, flags: cv.flags, launch: lv.launch, warned: hv.warned,
		held: hv.held, injHeld: hv.injHeld,
		sandbox: lv.sandbox, sandboxSet: lv.sandboxSet, limits: lv.limits,
	}
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
