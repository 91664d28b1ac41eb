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
// server-everything does right after initialize). A lone notification is
// followed by a re-listing relistDelay later, whatever came before. During
// a flood (more notifications while a re-listing is pending, or within the
// gap after one) the gap between re-listings is relistEvery after one that
// found a change, and each that finds nothing new multiplies it by
// relistBackoff, up to relistSlowest: a flooding server is re-listed at
// most once per relistSlowest, and a real change during the flood is still
// listed within about relistSlowest.
const (
	relistDelay   = 200 * time.Millisecond
	relistEvery   = time.Second
	relistBackoff = 4
	relistSlowest = 5 * time.Second
)

// paceClock is the time the relister paces re-listings by: when a
// notification came, and a wake-up at the time the next re-listing is due.
// It is the wall clock unless a test gives its own (Options.pace).
type paceClock interface {
	Now() time.Time
	// At returns a channel that receives once the clock has reached t.
	At(t time.Time) <-chan time.Time
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time                  { return time.Now() }
func (realClock) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }

// listChanged marks a server for re-listing and wakes the relister; it
// never blocks the connection's notification handler. The mark is what
// counts: when h.relists is full, an entry already queued wakes the
// relister, which then finds every marked server. Marked here, the server
// is queued as "", a wake-up alone: marking it again on receipt would count
// one notification twice when the relister has taken the mark in between
// (on a chore's turn), and pace it as a flood. A server that a reload is
// adding, not yet in comp, is queued by name, and marked on receipt.
func (h *Host) listChanged(name string) {
	queued := name
	if s := h.comp.Load().servers[name]; s != nil {
		s.relistAsked.Store(true)
		queued = ""
	}
	select {
	case h.relists <- queued:
	default:
	}
}

// relistPace is the relister's record of one server: whether a re-listing
// is pending and when it may run.
type relistPace struct {
	pending bool          // a list_changed not yet followed by a re-listing
	flooded bool          // more list_changed came while pending or within gap
	due     time.Time     // when the pending re-listing runs
	next    time.Time     // the earliest time for the next re-listing
	gap     time.Duration // the least time between the last re-listing and the next
}

// ran records a re-listing that started at t and whether it found a
// change.
func (p *relistPace) ran(t time.Time, changed bool) {
	switch {
	case !p.flooded:
		p.gap = 0
	case changed:
		p.gap = relistEvery
	default:
		p.gap = min(max(p.gap, relistEvery)*relistBackoff, relistSlowest)
	}
	p.flooded = false
	p.next = t.Add(p.gap)
}

// relister re-lists servers whose lists changed (paced by relistPace),
// rebuilds the snapshot and tells OnChange. A failed re-listing keeps the
// previous catalogue. Every second it also stops idle servers and saves
// trust scores; every Options.PinsRecheck it picks up approvals made
// elsewhere (switchboard approve, another replica), and at once when the
// store's change feed tells of them (follow).
// It alone owns the paces. It ends when the host closes.
func (h *Host) relister() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	recheck := time.NewTicker(h.pinsEvery)
	defer recheck.Stop()
	paces := map[*server]*relistPace{}
	var wake <-chan time.Time
	for {
		select {
		case <-h.stop:
			return
		case name := <-h.relists:
			if s := h.comp.Load().servers[name]; name != "" && s != nil {
				s.relistAsked.Store(true)
			}
		case <-tick.C:
			h.reapIdle()
			h.saveScores()
		case <-recheck.C:
			if h.refreshPins() {
				h.rebuild()
				h.changed()
			}
		case <-h.pinNotices:
			if h.refreshPins() {
				h.rebuild()
				h.changed()
			}
		case <-wake:
		}
		if h.relistDue(paces) {
			h.rebuild()
			h.changed()
		}
		wake = nil
		var first time.Time
		for _, p := range paces {
			if p.pending && (first.IsZero() || p.due.Before(first)) {
				first = p.due
			}
		}
		if !first.IsZero() {
			wake = h.pace.At(first)
		}
	}
}

// relistDue takes the servers marked by listChanged into paces, re-lists
// those whose time has come and reports whether any list changed.
func (h *Host) relistDue(paces map[*server]*relistPace) bool {
	now := h.pace.Now()
	servers := h.comp.Load().servers
	for s := range paces {
		if servers[s.name] != s {
			delete(paces, s) // a reload removed or replaced it
		}
	}
	for _, s := range servers {
		if !s.relistAsked.Swap(false) {
			continue
		}
		p := paces[s]
		if p == nil {
			p = &relistPace{}
			paces[s] = p
		}
		if p.pending || now.Before(p.next) {
			p.flooded = true
		}
		if !p.pending {
			p.pending = true
			p.due = now.Add(relistDelay)
			if p.next.After(p.due) {
				p.due = p.next
			}
		}
	}
	changed := false
	for s, p := range paces {
		if !p.pending || p.due.After(now) {
			continue
		}
		p.pending = false
		start := h.pace.Now()
		c := s.relist()
		p.ran(start, c)
		changed = changed || c
	}
	return changed
}

// relist discovers the server's lists again; it reports whether they
// changed.
func (s *server) relist() bool {
	h, sc := s.h, s.cfg.Load()
	conn := s.life.current()
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
	h.event(ServerEvent{Server: s.name, Kind: EventRelisted})
	if sc.Lifecycle.LockToolList {
		h.log.Warn("server changed its lists, refused (lockToolList)", "server", s.name)
		return false
	}
	prev := s.cat.rawLists()
	if prev != nil && sameCatalog(prev, cat) {
		return false
	}
	vetted := h.vet(sc, cat)
	// Refused when the connection changed, or a dial replaced the lists
	// meanwhile: what it discovered is newer.
	if s.life.current() != conn || !s.cat.replace(prev, cat, vetted) {
		return false
	}
	h.saveCatalog(sc, cat)
	h.log.Debug("re-listed after list_changed", "server", s.name, "tools", len(cat.Tools))
	return true
}
