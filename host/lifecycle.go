package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/supervise"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// The lifecycle of a server: it is advertised from its saved catalogue
// when its fingerprint matches (no dial), dialled on first use or at start
// (eager, or no catalogue), supervised (internal/supervise decides when a
// dial may happen), redialled by the next call after its connection drops,
// and stopped when idle. Tool calls are never retried here.

// newSupervisor returns a server's state machine.
func newSupervisor(sc *config.Server) *supervise.Supervisor {
	return supervise.New(sc.Name, supervise.Policy{Attempts: sc.Lifecycle.StartupAttempts, RetryAfter: sc.Lifecycle.RetryAfter}, nil)
}

// newServer makes the record of a configured server: disabled, or
// supervised with its pins and trust score loaded and, when its saved
// catalogue matches its fingerprint, advertised at once (cached, idle)
// without being dialled.
func (h *Host) newServer(ctx context.Context, sc *config.Server) *server {
	s := &server{cfg: sc, state: StateDisabled, trust: neutralScore}
	if !sc.Enabled {
		return s
	}
	s.sup = newSupervisor(sc)
	s.state = StateStarting
	h.loadState(ctx, s)
	if cat := h.loadCatalog(ctx, sc); cat != nil {
		s.raw, s.cached, s.state = cat, true, StateIdle
		s.vetted = h.vet(sc, cat)
		s.catalog = s.vetted.Catalog
	}
	return s
}

// ensure returns a server's live connection, dialling it when the
// supervisor allows. Concurrent callers share one dial. The dial is bounded
// by the server's startup timeout (and ctx: a call waits at most its own
// deadline).
func (h *Host) ensure(ctx context.Context, s *server) (*upstream.Conn, error) {
	for {
		h.mu.Lock()
		switch {
		case h.closed:
			h.mu.Unlock()
			return nil, fault.New(fault.CodeUnavailable, s.cfg.Name, "", errors.New("the host is closed"))
		case !s.cfg.Enabled:
			h.mu.Unlock()
			return nil, fault.New(fault.CodeUnavailable, s.cfg.Name, "", errors.New(`the server is disabled ("enabled": false in the configuration)`))
		case s.conn != nil:
			c, a := s.conn, s.attempt
			s.lastUse = time.Now()
			h.mu.Unlock()
			select {
			case <-c.Done():
				// Ended, and watch has not noticed yet: record the drop
				// here, so this call redials instead of failing.
				h.dropped(s, c, a, nil)
				continue
			default:
			}
			return c, nil
		case s.dialing != nil:
			ch := s.dialing
			h.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, fault.New(fault.CodeTimeout, s.cfg.Name, "connect", ctx.Err())
			}
		}
		a, wait, ok := s.sup.Acquire()
		if !ok {
			err := h.leftOut(s, wait)
			h.mu.Unlock()
			return nil, err
		}
		ch := make(chan struct{})
		s.dialing = ch
		s.state = StateStarting
		h.mu.Unlock()
		err := h.dial(ctx, s, a)
		h.mu.Lock()
		s.dialing = nil
		close(ch)
		h.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
}

// leftOut explains why a server cannot be dialled now. Called with h.mu
// held.
func (h *Host) leftOut(s *server, wait time.Duration) error {
	msg := "the server is not connected"
	if s.err != nil {
		msg = fmt.Sprintf("the server failed: %s", withoutServer(s.err, s.cfg.Name))
	}
	if wait > 0 {
		msg += fmt.Sprintf("; next attempt in %v", wait.Round(time.Second))
	}
	return fault.New(fault.CodeUnavailable, s.cfg.Name, "", errors.New(msg))
}

// dial connects and discovers one server under an Attempt, and records the
// outcome. A catalogue that differs from the saved one is saved, and the
// aggregate is rebuilt (after Open).
func (h *Host) dial(ctx context.Context, s *server, a supervise.Attempt) error {
	name := s.cfg.Name
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.StartupTimeout)
	defer cancel()
	stop := context.AfterFunc(h.life, cancel) // Close cancels a dial in progress
	defer stop()
	conn, err := upstream.Dial(dctx, s.cfg, &h.opts)
	var cat *catalog.Catalog
	if err == nil {
		if cat, err = conn.Discover(dctx); err != nil {
			conn.Close()
		}
	}
	if err != nil {
		a.Failed(err, retryable(err))
		h.mu.Lock()
		s.err = err
		s.state = stateOf(s.sup)
		opened := h.opened
		h.mu.Unlock()
		h.score(s, outcomeError)
		if opened {
			h.changed() // the capability tools' gates may have closed
		}
		h.log.Warn("server failed to start; the others are unaffected", "server", name, "err", err)
		return err
	}
	vetted := h.vet(s.cfg, cat)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		conn.Close()
		return fault.New(fault.CodeUnavailable, name, "", errors.New("the host is closed"))
	}
	changed := s.raw == nil || !sameCatalog(s.raw, cat)
	s.conn, s.attempt, s.raw, s.catalog, s.vetted, s.cached = conn, a, cat, vetted.Catalog, vetted, false
	s.caps = conn.Info().Capabilities
	s.state, s.err, s.lastUse = StateReady, nil, time.Now()
	opened := h.opened
	h.mu.Unlock()
	a.Succeeded()
	h.watchers.Go(func() { h.watch(s, conn, a) })
	if changed {
		h.saveCatalog(s.cfg, cat)
		if opened {
			h.rebuild()
		}
	}
	if opened {
		h.changed() // new lists, or the capability tools' gates may have opened
	}
	return nil
}

// retryable reports whether another start-up attempt could succeed where
// this one failed: not when credentials were refused, a policy refused the
// address, or the program does not exist.
func retryable(err error) bool {
	switch fault.CodeOf(err) {
	case fault.CodeAuthFailure, fault.CodePolicyBlocked:
		return false
	}
	return !upstream.ProgramNotFound(err)
}

// watch records the end of a connection: a drop (the next call redials)
// or an idle stop.
func (h *Host) watch(s *server, conn *upstream.Conn, a supervise.Attempt) {
	<-conn.Done()
	h.dropped(s, conn, a, nil)
}

// dropped records that conn ended, once (watch, ensure and call may all
// see it); cause nil means the connection's own error.
func (h *Host) dropped(s *server, conn *upstream.Conn, a supervise.Attempt, cause error) {
	h.mu.Lock()
	if s.conn != conn || h.closed {
		h.mu.Unlock()
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
	idle := s.idling
	s.idling = false
	if idle {
		s.state = StateIdle
		h.mu.Unlock()
		s.sup.Reset() // not a failure: the next call starts it afresh
		h.log.Debug("idle server stopped", "server", s.cfg.Name)
		return
	}
	err := cause
	if err == nil {
		err = conn.Err()
	}
	s.err = err
	h.mu.Unlock()
	a.Dropped(err)
	h.mu.Lock()
	s.state = stateOf(s.sup)
	h.mu.Unlock()
	h.changed() // the capability tools' gates may have closed
	h.log.Warn("server connection ended; the next call reconnects", "server", s.cfg.Name, "err", err)
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

// retryStartup keeps trying a server whose first attempt failed, on the
// supervisor's schedule, until it connects, its start-up attempts are
// exhausted, or the host closes.
func (h *Host) retryStartup(s *server) {
	for {
		h.mu.RLock()
		done := h.closed || s.conn != nil
		h.mu.RUnlock()
		if done {
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
		h.ensure(h.life, s) //nolint:errcheck // the outcome is recorded
	}
}

// reapIdle stops stdio servers idle longer than their idleTimeoutMs.
func (h *Host) reapIdle() {
	now := time.Now()
	var stop []*upstream.Conn
	h.mu.Lock()
	for _, s := range h.servers {
		it := s.cfg.Lifecycle.IdleTimeout
		if it <= 0 || s.conn == nil || s.inflight > 0 || s.idling || now.Sub(s.lastUse) < it {
			continue
		}
		s.idling = true
		stop = append(stop, s.conn)
	}
	h.mu.Unlock()
	for _, c := range stop {
		go c.Close()
	}
}

// saveCatalog stores a server's raw catalogue under its fingerprint.
func (h *Host) saveCatalog(sc *config.Server, cat *catalog.Catalog) {
	if h.store == nil {
		return
	}
	data, err := json.Marshal(cat)
	if err == nil {
		err = h.store.SaveCatalog(context.Background(), &store.Catalog{Server: sc.Name, Fingerprint: sc.Fingerprint(), Data: data})
	}
	if err != nil {
		h.log.Warn("catalogue not saved", "server", sc.Name, "err", err)
	}
}

// loadCatalog returns the saved catalogue when it was made under the
// server's current fingerprint.
func (h *Host) loadCatalog(ctx context.Context, sc *config.Server) *catalog.Catalog {
	if h.store == nil {
		return nil
	}
	c, err := h.store.Catalog(ctx, sc.Name)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			h.log.Warn("saved catalogue unreadable; discovering", "server", sc.Name, "err", err)
		}
		return nil
	}
	if c.Fingerprint != sc.Fingerprint() {
		return nil // the configuration (or a credential) changed
	}
	var cat catalog.Catalog
	if err := json.Unmarshal(c.Data, &cat); err != nil {
		h.log.Warn("saved catalogue unreadable; discovering", "server", sc.Name, "err", err)
		return nil
	}
	return &cat
}

// sameCatalog compares two catalogues by their JSON.
func sameCatalog(a, b *catalog.Catalog) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// changed tells OnChange, on its own goroutine. It returns the change's
// sequence number, for waitChanged (0 without OnChange).
func (h *Host) changed() uint64 {
	if h.onChange == nil {
		return 0
	}
	seq := h.notify.seq.Add(1)
	select {
	case h.changes <- struct{}{}:
	default: // one pending notification covers it
	}
	return seq
}

// notifyState tracks which changes OnChange has seen.
type notifyState struct {
	seq  atomic.Uint64 // the last change made
	mu   sync.Mutex
	done uint64        // every change up to done was followed by a complete OnChange call
	wake chan struct{} // closed when done moves; replaced then
}

// notifier calls OnChange one call at a time.
func (h *Host) notifier() {
	for {
		select {
		case <-h.stop:
			return
		case <-h.changes:
			seq := h.notify.seq.Load() // changes up to here are in this call's view
			h.onChange()
			h.notify.mu.Lock()
			h.notify.done = seq
			if h.notify.wake != nil {
				close(h.notify.wake)
				h.notify.wake = nil
			}
			h.notify.mu.Unlock()
		}
	}
}

// waitChanged waits until OnChange has run after change seq (see
// changed), ctx ends or the host closes: a caller that changed what is
// listed can then answer knowing the gateway lists it.
func (h *Host) waitChanged(ctx context.Context, seq uint64) {
	for seq != 0 {
		h.notify.mu.Lock()
		if h.notify.done >= seq {
			h.notify.mu.Unlock()
			return
		}
		if h.notify.wake == nil {
			h.notify.wake = make(chan struct{})
		}
		wake := h.notify.wake
		h.notify.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return
		case <-h.stop:
			return
		}
	}
}

// Trust scores: successes raise a server's score towards 1, failures
// lower it towards 0, flagged metadata costs a step; a score above neutral
// decays back towards it (half-life 7 days), so good standing must be
// earned continually while bad standing is remembered.
const (
	neutralScore   = 0.5
	scoreHalfLife  = 7 * 24 * time.Hour
	outcomeOK      = "ok"
	outcomeToolErr = "tool_error"
	outcomeError   = "error"
	outcomeFlagged = "flagged"
)

// score updates a server's trust score for one outcome.
func (h *Host) score(s *server, outcome string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	v := decayed(s.trust, s.trustAt, now)
	switch outcome {
	case outcomeOK:
		v += 0.02 * (1 - v)
	case outcomeToolErr:
		v -= 0.01 * v
	case outcomeError:
		v -= 0.05 * v
	case outcomeFlagged:
		v -= 0.1 * v
	}
	s.trust, s.trustAt = v, now
	s.trustDirty = true
}

// decayed applies the decay of scores above neutral.
func decayed(v float64, at, now time.Time) float64 {
	if v <= neutralScore || at.IsZero() {
		return v
	}
	f := math.Exp2(-float64(now.Sub(at)) / float64(scoreHalfLife))
	return neutralScore + (v-neutralScore)*f
}

// saveScores persists changed trust scores.
func (h *Host) saveScores() {
	if h.store == nil {
		return
	}
	h.mu.Lock()
	var scores []store.Score
	for _, s := range h.servers {
		if s.trustDirty {
			scores = append(scores, store.Score{Server: s.cfg.Name, Value: s.trust, UpdatedAt: s.trustAt})
			s.trustDirty = false
		}
	}
	h.mu.Unlock()
	for _, sc := range scores {
		if err := h.store.SaveScore(context.Background(), sc); err != nil {
			h.log.Warn("trust score not saved", "server", sc.Server, "err", err)
		}
	}
}
