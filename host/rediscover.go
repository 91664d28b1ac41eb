package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/policy"
	"github.com/switchboard-mcp/switchboard/internal/registry"
)

// Re-discovery: a server may change its tools behind an unchanged
// configuration, so the catalogue a call is looked up in may be stale: it
// came from the store (advertised without a dial) or from an earlier
// connection (the server was stopped when idle, or its connection ended).
//
//   - A call of a name that misses while its server's catalogue may be
//     stale discovers that server again and looks the name up again, once.
//   - A call the server answers with "unknown tool" (see
//     upstream.UnknownTool) never ran: the server is discovered again and
//     the call made again, once, if the tool is still offered.
//   - A call never goes out on a definition it was not checked against:
//     after the dial that started the server (lazily, or after an idle
//     stop) the tool is looked up again in the aggregate rebuilt from the
//     fresh discovery, where a definition that changed since it was
//     approved is held back (pin.go), before anything is sent.
//
// Refresh re-discovers servers at once (the CLI's --refresh).

// rediscovery shares one re-discovery of a server among the callers that
// ask for it while it is under way.
type rediscovery struct {
	mu     sync.Mutex
	flight *flight // the re-discovery under way; nil when none
}

// flight is one re-discovery; err is set before done is closed.
type flight struct {
	done chan struct{}
	err  error
}

// rediscover discovers the server's lists again, whatever its saved
// catalogue says, and rebuilds the aggregate: a server that is not
// connected is dialled (the dial discovers); a connected one is listed
// again on its connection. Concurrent callers share one re-discovery, made
// by the first; the others wait for it or for their ctx. With ifStale, a
// caller that finds none under way starts one only while the catalogue
// may be stale (another may have just made it fresh).
func (s *server) rediscover(ctx context.Context, ifStale bool) error {
	s.rd.mu.Lock()
	if f := s.rd.flight; f != nil {
		s.rd.mu.Unlock()
		select {
		case <-f.done:
			return f.err
		case <-ctx.Done():
			return fault.New(fault.CodeTimeout, s.name, "discover", ctx.Err())
		}
	}
	if ifStale && !s.mayBeStale() {
		s.rd.mu.Unlock()
		return nil
	}
	f := &flight{done: make(chan struct{})}
	s.rd.flight = f
	s.rd.mu.Unlock()
	f.err = s.discoverAgain(ctx)
	s.rd.mu.Lock()
	s.rd.flight = nil
	s.rd.mu.Unlock()
	close(f.done)
	return f.err
}

// rediscovering reports whether a re-discovery is under way.
func (s *server) rediscovering() bool {
	s.rd.mu.Lock()
	defer s.rd.mu.Unlock()
	return s.rd.flight != nil
}

// discoverAgain is one re-discovery (see rediscover).
func (s *server) discoverAgain(ctx context.Context) error {
	h := s.h
	before := s.life.current()
	conn, err := s.ensure(ctx)
	if err != nil {
		return err
	}
	if conn == before && s.relist() {
		h.rebuild()
		h.changed()
		return nil
	}
	// A dial discovered the lists (ours or another caller's, which may not
	// have rebuilt the aggregate yet), or nothing changed: the aggregate
	// is made from what the server holds now either way.
	h.rebuild()
	return nil
}

// mayBeStale reports whether the server's catalogue may no longer be what
// the server offers: it came from the store, or from an earlier
// connection.
func (s *server) mayBeStale() bool {
	if s.sup == nil || s.cat.current() == nil {
		return false
	}
	return !s.life.isStopped() && (s.cat.isCached() || s.life.current() == nil)
}

// lists reports whether the server's catalogue in force holds def, the
// very definition (not an equal one) that a snapshot registered: every
// discovery and every vetting makes new definitions, so a snapshot built
// before the server's catalogue was last replaced holds none of them.
func (s *server) lists(def *mcp.Tool) bool {
	return s.cat.has(def)
}

// serverOfName returns the configured server a tool name would belong to,
// by its canonical ID or its model-facing prefix (the longest that
// matches), or nil.
func (h *Host) serverOfName(snap *registry.Snapshot, name string) *server {
	comp := h.comp.Load()
	if id, ok := snap.Resolve(name); ok {
		return comp.servers[id.Server]
	}
	var best *config.Server
	for _, sc := range comp.cfg.Servers {
		p := names.Prefix(sc.Prefix)
		if p != "" && strings.HasPrefix(name, p+names.Sep) && (best == nil || len(p) > len(names.Prefix(best.Prefix))) {
			best = sc
		}
	}
	if best == nil {
		return nil
	}
	return comp.servers[best.Name]
}

// lookupFresh is lookupTool for a call: a name that misses while the
// catalogue of the server it names may be stale re-discovers that server,
// once, and is looked up again. It reports whether it re-discovered.
func (h *Host) lookupFresh(ctx context.Context, name string) (*registry.Tool, bool, error) {
	snap := h.snapshot()
	t, err := h.lookupTool(snap, name)
	if err == nil || fault.CodeOf(err) != fault.CodeNotFound {
		return t, false, err
	}
	s := h.serverOfName(snap, name)
	if s == nil {
		return nil, false, err
	}
	if s.rediscovering() || s.mayBeStale() {
		h.log.Debug("tool not in a catalogue that may be stale; discovering the server again", "server", s.name, "tool", name)
		if rerr := s.rediscover(ctx, true); rerr != nil {
			return nil, true, rerr
		}
		t, err = h.lookupTool(h.snapshot(), name)
		return t, true, err
	}
	// Fresh, but perhaps newer than the aggregate: a dial or a re-listing
	// replaced it and has not rebuilt the aggregate yet.
	if s.aheadOf(h.snapshot()) {
		h.rebuild()
	}
	if cur := h.snapshot(); cur != snap {
		t, err = h.lookupTool(cur, name)
	}
	return t, false, err
}

// aheadOf reports whether the server's catalogue in force holds a tool
// that snap registered from an earlier catalogue.
func (s *server) aheadOf(snap *registry.Snapshot) bool {
	return s.cat.aheadOf(s.name, snap)
}

// recheck returns the tool t as the aggregate in force defines it, once
// the server is connected and before anything is sent: when the server's
// catalogue was replaced since t was looked up (a dial discovered it
// afresh, a re-listing or a reload), the aggregate is rebuilt from it,
// which checks it against the pins, and the tool looked up again by its
// canonical ID. A tool held back is refused with definition_changed; one
// the server no longer offers, with not_found. When the definition
// changed and was let through (onDrift "warn" or "accept") and its
// annotations or title changed, the call is authorized again (without
// counting it against the quota a second time).
func (h *Host) recheck(ctx context.Context, s *server, sc *config.Server, pol *policy.Engine, t *registry.Tool, args []byte, opts *CallOptions) (*registry.Tool, error) {
	if s.lists(t.Tool) {
		return t, nil
	}
	h.rebuild()
	fresh, err := h.lookupTool(h.snapshot(), t.ID.String())
	switch {
	case fault.CodeOf(err) == fault.CodeNotFound:
		return nil, gone(t)
	case err != nil:
		return nil, err
	case fresh.ID != t.ID:
		return nil, gone(t)
	}
	if fresh.Tool.Title != t.Tool.Title || !sameAnnotations(fresh.Tool.Annotations, t.Tool.Annotations) {
		if err := h.authorizeAs(ctx, pol, fresh, sc, args, opts, true); err != nil {
			return nil, err
		}
	}
	return fresh, nil
}

// gone is the error for a call of a tool its server no longer offers.
func gone(t *registry.Tool) error {
	return fault.New(fault.CodeNotFound, t.ID.Server, fmt.Sprintf("call tool %q", t.ID.Name),
		errors.New("the server no longer offers this tool (its tools were discovered again); `switchboard tools` lists them"))
}

// sameAnnotations reports whether two tools' annotations are equal.
func sameAnnotations(a, b *mcp.ToolAnnotations) bool {
	switch {
	case a == nil || b == nil:
		return a == b
	case a.Title != b.Title || a.ReadOnlyHint != b.ReadOnlyHint || a.IdempotentHint != b.IdempotentHint:
		return false
	}
	eq := func(x, y *bool) bool { return x == y || x != nil && y != nil && *x == *y }
	return eq(a.DestructiveHint, b.DestructiveHint) && eq(a.OpenWorldHint, b.OpenWorldHint)
}

// refresh discovers the named servers again (every enabled server when
// none is named; a misconfigured one is left out), whatever their saved catalogues say, in parallel: a
// server not running is started, a running one listed again. It returns
// when all are done, with their failures joined; a failure is also in the
// server's status (Servers), and the others are refreshed as usual.
func (h *Host) refresh(ctx context.Context, servers ...string) error {
	comp := h.comp.Load()
	var todo []*server
	var errs []error
	if len(servers) == 0 {
		for _, sc := range comp.cfg.Servers {
			if runnable(sc) { // a misconfigured server is not started, so not refreshed either
				todo = append(todo, comp.servers[sc.Name])
			}
		}
	}
	for _, name := range servers {
		s := comp.servers[name]
		if s == nil {
			errs = append(errs, fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server %q", name)))
			continue
		}
		todo = append(todo, s)
	}
	found := make([]error, len(todo))
	var wg sync.WaitGroup
	for i, s := range todo {
		wg.Go(func() { found[i] = s.rediscover(ctx, false) })
	}
	wg.Wait()
	return errors.Join(append(errs, found...)...)
}
