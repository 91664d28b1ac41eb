package host

import (
	"context"
	"time"
)

// Re-listing: a server that says its tools, prompts or resources changed
// (list_changed) is discovered again, the aggregate rebuilt and OnChange
// told. The relister goroutine also does the Host's once-a-second chores.

// relistDelay gathers a burst of list_changed notifications into one
// re-listing (servers often announce several changes at once, as
// server-everything does right after initialize); relistEvery is the least
// time between two re-listings of one server.
const (
	relistDelay = 200 * time.Millisecond
	relistEvery = time.Second
)

// listChanged queues a server for re-listing; it never blocks the
// connection's notification handler.
func (h *Host) listChanged(server string) {
	select {
	case h.relists <- server:
	default: // a burst: the queued re-listing covers it
	}
}

// relister re-lists servers whose lists changed (at most one re-listing
// per server per relistEvery), rebuilds the snapshot and tells OnChange. A
// failed re-listing keeps the previous catalogue. Every second it also
// stops idle servers, picks up approvals made elsewhere (switchboard
// approve) and saves trust scores. It ends when the host closes.
func (h *Host) relister() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	pending := map[string]bool{}
	var timer <-chan time.Time
	for {
		select {
		case <-h.stop:
			return
		case s := <-h.relists:
			pending[s] = true
			if timer == nil {
				timer = time.After(relistDelay)
			}
			continue
		case <-tick.C:
			h.reapIdle()
			if h.refreshPins() {
				h.rebuild()
				h.changed()
			}
			h.saveScores()
			continue
		case <-timer:
			timer = nil
		}
		changed := false
		for name := range pending {
			s := h.comp.Load().servers[name]
			if s == nil {
				delete(pending, name) // a reload removed it
				continue
			}
			if wait := s.relistWait(); wait > 0 {
				// Too soon: keep it pending for the next pass.
				timer = time.After(wait)
				continue
			}
			delete(pending, name)
			changed = s.relist() || changed
		}
		if changed {
			h.rebuild()
			h.changed()
		}
	}
}

// relistWait is how long until the server may be re-listed.
func (s *server) relistWait() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return relistEvery - time.Since(s.relisted)
}

// relist discovers the server's lists again; it reports whether they
// changed.
func (s *server) relist() bool {
	h, sc := s.h, s.cfg.Load()
	s.mu.Lock()
	conn := s.conn
	s.relisted = time.Now()
	s.mu.Unlock()
	if conn == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(h.life, sc.StartupTimeout)
	defer cancel()
	cat, err := conn.Discover(ctx)
	if err != nil {
		h.log.Warn("re-listing after list_changed failed; keeping the previous lists", "server", s.name, "err", err)
		return false
	}
	if sc.Lifecycle.LockToolList {
		h.log.Warn("server changed its lists, refused (lockToolList)", "server", s.name)
		return false
	}
	s.mu.Lock()
	same := s.raw != nil && sameCatalog(s.raw, cat)
	s.mu.Unlock()
	if same {
		return false
	}
	vetted := h.vet(sc, cat)
	s.mu.Lock()
	if s.conn != conn {
		s.mu.Unlock()
		return false
	}
	s.raw, s.catalog, s.vetted = cat, vetted.Catalog, vetted
	s.mu.Unlock()
	h.saveCatalog(sc, cat)
	h.log.Debug("re-listed after list_changed", "server", s.name, "tools", len(cat.Tools))
	return true
}
