package host

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/supervise"
)

// The lifecycle of a server: it is advertised from its saved catalogue
// when its fingerprint matches (no dial), dialled on first use or at start
// (eager, or no catalogue), supervised (internal/supervise decides when a
// dial may happen), redialled by the next call after its connection drops,
// and stopped when idle. Tool calls are never retried here. The server's
// own methods (server.go) make the transitions; this file makes servers
// and does what spans them.

// newSupervisor returns a server's state machine.
func newSupervisor(sc *config.Server) *supervise.Supervisor {
	return supervise.New(sc.Name, supervise.Policy{Attempts: sc.Lifecycle.StartupAttempts, RetryAfter: sc.Lifecycle.RetryAfter}, nil)
}

// runnable reports whether a server may be started: it is enabled and
// its configuration is usable.
func runnable(sc *config.Server) bool { return sc.Enabled && sc.Unusable == nil }

// newServer makes the record of a configured server: disabled;
// misconfigured (never started, its reason logged once and kept as its
// error); or supervised with its pins and trust score loaded and, when its
// saved catalogue matches its fingerprint, advertised at once (cached,
// idle) without being dialled, its lists vetted under cfg (the
// configuration sc belongs to). Nothing else sees it until it is returned.
func (h *Host) newServer(ctx context.Context, cfg *config.Config, sc *config.Server) *server {
	s := &server{name: sc.Name, h: h, trust: newTrustScore(), life: life{h: h, name: sc.Name}}
	s.life.setUnseen(StateDisabled, nil)
	s.cfg.Store(sc)
	if !sc.Enabled {
		return s
	}
	if sc.Unusable != nil {
		s.life.setUnseen(StateMisconfigured, sc.Unusable)
		h.log.Warn("server misconfigured; not started, the others are unaffected", "server", sc.Name, "err", sc.Unusable)
		return s
	}
	s.sup = newSupervisor(sc)
	s.life.setUnseen(StateStarting, nil)
	h.loadState(ctx, s)
	if h.checkLaunch(ctx, cfg, s, sc) {
		return s // held: neither advertised nor started until approved
	}
	if cat := h.loadCatalog(ctx, sc); cat != nil {
		s.cat.load(cat, h.vetUnder(cfg.Security, sc, cat))
		s.life.setUnseen(StateIdle, nil)
	}
	h.loadSchedule(ctx, s, sc)
	if h.noStart && s.currentState() == StateStarting {
		s.life.setUnseen(StateIdle, nil) // not dialled by Open: it starts on first use
	}
	return s
}

// loadSchedule puts a server whose start-up failed in an earlier run back
// in backoff (or failed) with its next attempt when it was due, when the
// saved schedule was made under the server's current fingerprint. The
// error it failed with is restored as private: it may quote the server's
// stderr.
func (h *Host) loadSchedule(ctx context.Context, s *server, sc *config.Server) {
	if h.store == nil {
		return
	}
	sch, err := h.store.Schedule(ctx, sc.Name)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			h.log.Warn("start-up schedule unreadable; dialling as usual", "server", sc.Name, "err", err)
		}
		return
	}
	s.scheduled = true // the next outcome replaces or deletes it
	if sch.Fingerprint != sc.Fingerprint() {
		return // the configuration (or a credential) changed: a fresh start
	}
	// Saved before errors were masked, perhaps: mask them again.
	secrets := sc.SecretValues()
	sch.Reason, sch.LastError = config.Mask(sch.Reason, secrets), config.Mask(sch.LastError, secrets)
	restored := s.sup.Restore(supervise.Schedule{
		State: supervise.State(sch.State), Reason: sch.Reason, Attempts: sch.Attempts,
		Probes: sch.Probes, Next: sch.Next, LastError: sch.LastError,
	})
	if !restored {
		return
	}
	msg := sch.LastError
	if msg == "" {
		msg = sch.Reason
	}
	s.life.setUnseen(stateOf(s.sup), &fault.Private{Err: errors.New(msg)})
	h.log.Debug("start-up schedule restored", "server", sc.Name, "state", sch.State, "next", sch.Next)
}

// reapIdle stops stdio servers idle longer than their idleTimeoutMs, and
// closes callers' connections idle longer than OAuthOptions.CallerIdle
// or to servers a reload removed (callers.go).
func (h *Host) reapIdle() {
	now := time.Now()
	servers := h.comp.Load().servers
	for _, s := range servers {
		if c := s.idleConn(now); c != nil {
			h.watchers.Go(func() { c.Close() })
		}
	}
	h.callers.sweep(now, func(server string) bool { return servers[server] != nil })
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
func (h *Host) changed() uint64 { return h.notify.changed() }

// waitChanged waits until OnChange has run after change seq (see
// changed), ctx ends or the host closes.
func (h *Host) waitChanged(ctx context.Context, seq uint64) { h.notify.wait(ctx, seq, h.stop) }

// saveScores persists the changed trust scores of the servers in force.
func (h *Host) saveScores() { h.saveScoresOf(h.comp.Load().servers) }

// saveScoresOf persists the changed trust scores of servers.
func (h *Host) saveScoresOf(servers map[string]*server) {
	if h.store == nil {
		return
	}
	for _, s := range servers {
		sc, ok := s.trust.unsaved(s.name)
		if !ok {
			continue
		}
		if err := h.store.SaveScore(context.Background(), sc); err != nil {
			h.log.Warn("trust score not saved", "server", sc.Server, "err", err)
		}
	}
}
