package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Replicas: several Hosts (in several processes) sharing one store. An
// approval made through any of them, or by `switchboard approve`, reaches
// the others through the store's change feed (store.Notifier) when it has
// one, at once; the relister's periodic re-read of the pins of servers
// with held tools (Options.PinsRecheck, 1 s) is the fallback, and catches
// up after the store was unreachable. A Host that loses its store goes on serving from what
// it holds in memory; Ready says so, and the audit log keeps its rows for
// retry.

// followBackoff is how long follow waits before it asks for a change feed
// again after Listen failed (the store was unreachable).
const followBackoff = time.Second

// follow passes the store's notices about pins to the relister, which
// re-reads the pins and rebuilds; a notice that some were missed (the
// feed's connection was lost and made again) does the same. It ends when
// the Host closes.
func (h *Host) follow(n store.Notifier) {
	missed := false
	for {
		ch, err := n.Listen(h.life, store.TopicPins)
		if err != nil {
			missed = true
			h.log.Debug("change feed unavailable; pins are re-read every second meanwhile", "err", err)
			select {
			case <-h.stop:
				return
			case <-time.After(followBackoff):
			}
			continue
		}
		if missed {
			h.pinsNoticed()
		}
		for range ch {
			h.pinsNoticed()
		}
		// Listen closes its channel only when h.life ends.
		return
	}
}

// pinsNoticed wakes the relister to re-read the pins; it never blocks.
func (h *Host) pinsNoticed() {
	select {
	case h.pinNotices <- struct{}{}:
	default: // one is pending already
	}
}

// storeReached records the outcome of a use of the store, for storeUp; a
// store that answered has the audit log retry its waiting rows at once.
func (h *Host) storeReached(err error) {
	down := err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, store.ErrNotFound)
	h.storeDown.Store(down)
	if !down {
		h.audit.nudge()
	}
}

// storeUp reports whether the store answered its last use (a write of the
// audit log, a re-read of pins, a readiness check) and the audit log has
// no rows waiting because the store refused them (a full disk answers
// reads but refuses writes). It is true for a Host without a store.
func (h *Host) storeUp() bool {
	return !h.storeDown.Load() && (h.audit == nil || h.audit.waiting.Load() == 0)
}

// auditStats returns the counts of the audit log's queues; zero without a
// store.
func (h *Host) auditStats() hostlink.AuditStats {
	if h.audit == nil {
		return hostlink.AuditStats{}
	}
	return hostlink.AuditStats{Waiting: h.audit.waiting.Load(), Dropped: h.audit.dropped.Load()}
}

// readyTimeout bounds the store's answer to Ready's check.
const readyTimeout = time.Second

// readiness reports whether the Host is ready to take traffic behind a load
// balancer: its store answers (within a second, when the store can be
// pinged) and takes the audit log's rows (none waits for a retry), and at
// least one server's catalogue is loaded, or no server is enabled. A Host that is not ready still serves what it holds.
func (h *Host) readiness(ctx context.Context) error {
	if h.closed.Load() {
		return errors.Join(hostlink.ErrNotReady, errors.New("closing"))
	}
	if p, ok := h.store.(store.Pinger); ok {
		ctx, cancel := context.WithTimeout(ctx, readyTimeout)
		err := p.Ping(ctx)
		cancel()
		h.storeReached(err)
		if err != nil {
			return errors.Join(hostlink.ErrNotReady, err)
		}
	}
	if n := h.auditStats().Waiting; n > 0 {
		return errors.Join(hostlink.ErrNotReady, fmt.Errorf("the store refuses audit rows: %d waiting", n))
	}
	comp := h.comp.Load()
	enabled := 0
	for _, sc := range comp.cfg.Servers {
		if !runnable(sc) {
			continue
		}
		enabled++
		s := comp.servers[sc.Name]
		if s.cat.current() != nil {
			return nil
		}
	}
	if enabled == 0 {
		return nil
	}
	return errors.Join(hostlink.ErrNotReady, errors.New("no server's catalogue is loaded yet"))
}

// secret returns the store's secret named name (store.Store.Secret): the
// same bytes for every Host sharing the store, made by the first to ask.
// It returns nil and no error for a Host without a store.
func (h *Host) secret(ctx context.Context, name string) ([]byte, error) {
	if h.store == nil {
		return nil, nil
	}
	key, err := h.store.Secret(ctx, name)
	h.storeReached(err)
	return key, err
}
