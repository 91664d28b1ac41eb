package host

import (
	"context"
	"errors"
	"reflect"
	"sync"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// Reload swaps in a new configuration, as caddy does: the new composition
// is built and connected first, then swapped in under the lock, then what is
// no longer used is closed. A server whose connection settings are
// unchanged keeps its connection and its calls in flight (a change of
// filters, prefix or limits only re-vets its saved lists); a new or changed
// server is started before the swap (or advertised from its saved
// catalogue); a removed one is stopped after it. An invalid configuration
// (or policy) is refused with the reason and the running one stays.
func (h *Host) Reload(ctx context.Context, cfg *config.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	pol, err := newPolicy(cfg.Policy)
	if err != nil {
		return err
	}
	h.mu.RLock()
	if h.closed {
		h.mu.RUnlock()
		return errors.New("the host is closed")
	}
	old := h.servers
	h.mu.RUnlock()

	next := make(map[string]*server, len(cfg.Servers))
	var fresh []*server
	for _, sc := range cfg.Servers {
		if prev := old[sc.Name]; prev != nil && sameConnection(prev.cfg, sc) {
			next[sc.Name] = prev
			continue
		}
		s := h.newServer(ctx, sc)
		next[sc.Name] = s
		if sc.Enabled && !s.cached {
			fresh = append(fresh, s)
		}
	}
	// Connected first: a failure is recorded on the new server (it is
	// supervised like any other), not a reason to keep the old config.
	var wg sync.WaitGroup
	for _, s := range fresh {
		wg.Go(func() { h.ensure(ctx, s) }) //nolint:errcheck // recorded in s
	}
	wg.Wait()

	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return errors.New("the host is closed")
	}
	var stop []*server
	for name, s := range old {
		if next[name] != s {
			stop = append(stop, s)
		}
	}
	// Kept servers take the new settings that do not touch the
	// connection; their lists are vetted again under them below.
	for _, sc := range cfg.Servers {
		if s := next[sc.Name]; s == old[sc.Name] && s != nil {
			s.cfg = sc
		}
	}
	h.cfg, h.servers = cfg, next
	h.policy.Store(pol)
	h.mu.Unlock()

	for _, sc := range cfg.Servers {
		s := next[sc.Name]
		h.mu.RLock()
		raw, kept := s.raw, s == old[sc.Name]
		h.mu.RUnlock()
		if kept && raw != nil {
			vetted := h.vet(sc, raw)
			h.mu.Lock()
			s.vetted, s.catalog = vetted, vetted.Catalog
			h.mu.Unlock()
		}
	}
	var conns []*upstream.Conn
	h.mu.Lock()
	for _, s := range stop {
		if s.sup != nil {
			s.sup.Stop()
		}
		if s.conn != nil {
			conns = append(conns, s.conn)
			s.conn = nil
		}
		s.state = StateClosed
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	for _, s := range fresh {
		h.watchers.Go(func() { h.retryStartup(s) })
	}
	h.rebuild()
	h.changed()
	h.log.Info("configuration reloaded", "servers", len(cfg.Servers), "started", len(fresh), "stopped", len(stop))
	return nil
}

// sameConnection reports whether a server's connection can be kept: the
// same fingerprint (launch or URL settings, credentials) and the same
// settings the connection was made with (trust decides the SSRF guard and
// which client abilities are advertised; timeouts bound it).
func sameConnection(a, b *config.Server) bool {
	return a.Enabled && b.Enabled && a.Fingerprint() == b.Fingerprint() &&
		a.Trust.Level() == b.Trust.Level() && a.Sampling == b.Sampling && a.Elicitation == b.Elicitation && a.Roots == b.Roots &&
		a.StartupTimeout == b.StartupTimeout && a.CallTimeout == b.CallTimeout &&
		reflect.DeepEqual(a.Lifecycle, b.Lifecycle)
}
