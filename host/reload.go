package host

import (
	"context"
	"errors"
	"reflect"
	"sync"

	"github.com/switchboard-mcp/switchboard/config"
)

// Reload swaps in a new configuration, as caddy does: the new composition
// is built and connected first, then swapped in under the lock, then what is
// no longer used is closed. A server whose connection settings are
// unchanged keeps its connection and its calls in flight (a change of
// filters, prefix or limits only re-vets its saved lists); a new or changed
// server is started before the swap (or advertised from its saved
// catalogue); a removed one is stopped after it. An invalid configuration
// (or policy) is refused with the reason and the running one stays.
// Reloads run one at a time.
func (h *Host) Reload(ctx context.Context, cfg *config.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	pol, err := newPolicy(cfg.Policy, h.store, h.log)
	if err == nil && h.store == nil {
		err = needsStore(cfg)
	}
	if err != nil {
		return err
	}
	h.reloadMu.Lock()
	defer h.reloadMu.Unlock()
	if h.closed.Load() {
		return errors.New("the host is closed")
	}
	old := h.comp.Load()

	// Build the new composition: kept servers as they are, new and changed
	// ones made afresh.
	next := &composition{cfg: cfg, pol: pol, servers: make(map[string]*server, len(cfg.Servers))}
	var fresh []*server
	for _, sc := range cfg.Servers {
		if prev := old.servers[sc.Name]; prev != nil && sameConnection(prev.cfg.Load(), sc) {
			next.servers[sc.Name] = prev
			continue
		}
		s := h.newServer(ctx, cfg, sc)
		next.servers[sc.Name] = s
		if runnable(sc) && !s.cat.isCached() && s.currentState() != StateHeld {
			fresh = append(fresh, s)
		}
	}
	// Start it: a failure is recorded on the new server (it is supervised
	// like any other), not a reason to keep the old config.
	var wg sync.WaitGroup
	for _, s := range fresh {
		wg.Go(func() { s.ensure(ctx) }) //nolint:errcheck // recorded in s
	}
	wg.Wait()

	// Swap.
	h.mu.Lock()
	if h.closed.Load() {
		h.mu.Unlock()
		h.stopAll(fresh)
		return errors.New("the host is closed")
	}
	// Kept servers take the new settings that do not touch the
	// connection: a new value each, swapped whole, so a call in flight
	// keeps reading the one it started with.
	for _, sc := range cfg.Servers {
		if s := next.servers[sc.Name]; s == old.servers[sc.Name] {
			s.cfg.Store(sc)
		}
	}
	h.comp.Store(next)
	h.mu.Unlock()

	// Every server's lists are vetted again under the new settings (a
	// fresh server was vetted under the old security settings).
	for _, s := range next.servers {
		s.revet()
	}
	// Stop the old.
	var stop []*server
	removed := map[string]*server{}
	for name, s := range old.servers {
		if next.servers[name] != s {
			stop = append(stop, s)
			removed[name] = s
		}
	}
	h.stopAll(stop)
	h.saveScoresOf(removed)
	for _, s := range fresh {
		h.watchers.Go(s.retryStartup)
	}
	h.rebuild()
	h.changed()
	h.log.Info("configuration reloaded", "servers", len(cfg.Servers), "started", len(fresh), "stopped", len(stop))
	return nil
}

// stopAll stops servers and closes their connections, waiting for the
// bounded teardown.
func (h *Host) stopAll(servers []*server) error {
	var wg sync.WaitGroup
	errs := make([]error, len(servers))
	for i, s := range servers {
		if c := s.stop(); c != nil {
			wg.Go(func() { errs[i] = c.Close() })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// sameConnection reports whether a server's connection can be kept: the
// same fingerprint (launch or URL settings, credentials) and the same
// settings the connection was made with (trust decides the SSRF guard and
// which client abilities are advertised; timeouts bound it).
func sameConnection(a, b *config.Server) bool {
	return runnable(a) && runnable(b) && a.Fingerprint() == b.Fingerprint() &&
		a.Trust.Level() == b.Trust.Level() && a.Sampling == b.Sampling && a.Elicitation == b.Elicitation && a.Roots == b.Roots &&
		a.StartupTimeout == b.StartupTimeout && a.CallTimeout == b.CallTimeout &&
		reflect.DeepEqual(a.Lifecycle, b.Lifecycle)
}
