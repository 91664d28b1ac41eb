package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/drift"
	"github.com/switchboard-mcp/switchboard/internal/pkgpin"
	"github.com/switchboard-mcp/switchboard/internal/state"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Launch pins (docs/PINS.md): a person's approval of a server covers how
// it is launched or reached (config.Launch: transport, command,
// arguments, environment variable names and hashes of their values that
// are not secret, working directory, URL, header names). It is pinned in
// the store as a definition under drift.LaunchKey, beside the server's
// tool pins. When the launch differs from its pin, or a server appears
// with none, the server is held under security.onLaunchChange "hold" (the
// default): not started, not dialled, no tool of its offered, each call
// refused with launch_changed; the changed launch is kept as a drift row,
// which `switchboard approve SERVER` pins. "warn" starts it and logs what
// "hold" would have held; "off" neither checks nor pins.
//
// A server without a launch pin is pinned at its first start, not held,
// while the store has never pinned a launch (a fresh home, or one made by
// a version that pinned none; drift.LaunchBegun marks it once a Host has
// decided for a whole configuration), and when it has a history in the
// store (tool pins or a saved catalogue from before launches were
// pinned). Otherwise it appeared in the configuration without a person
// approving it, and is held as new. The CLI's add, add-json, import,
// form and edit approve the launch of the server they check
// (Options.ApproveLaunches); `trust-project`, which approves a project
// file's exact bytes, approves the launches of its servers; the embedded
// default configuration's demo server is approved as it is.

// The decisions about a launch, in ServerEvent.Decision (EventLaunch).
const (
	// LaunchPinned: a launch pinned at the server's first start, without
	// asking (a store that pins no launch yet, or a server with history).
	LaunchPinned = "pinned"
	// LaunchApproved: a launch approved by a person (Options.ApproveLaunches,
	// or `switchboard approve` releasing a held server).
	LaunchApproved = "approved"
	// LaunchHeld: a server held because its launch differs from its pin,
	// or it has none.
	LaunchHeld = "held"
	// LaunchWarned: what LaunchHeld would be under onLaunchChange "warn":
	// the server starts all the same.
	LaunchWarned = "warned"
)

// launchBegun reads whether the store pins launches (drift.LaunchBegun).
// An unreadable store counts as one that does: a new server is held
// rather than let through.
func (h *Host) launchBegun(ctx context.Context) bool {
	if h.store == nil {
		return false
	}
	begun, err := state.LaunchesPinned(ctx, h.store)
	if err != nil {
		h.log.Warn("launch pins unreadable; new servers are held", "err", err)
		return true
	}
	return begun
}

// markLaunchesPinned records that this store pins launches, once a Host
// has decided for a whole configuration.
func (h *Host) markLaunchesPinned(ctx context.Context, cfg *config.Config) {
	if h.store == nil || h.launchesBegun.Load() || len(h.approveLaunch) > 0 || cfg.Security.OnLaunchChange == config.LaunchOff {
		return
	}
	if err := state.MarkLaunchesPinned(ctx, h.store); err != nil {
		h.log.Warn("launch pins not marked; servers without one are pinned again at their first start", "err", err)
		return
	}
	h.launchesBegun.Store(true)
}

// checkLaunch compares the launch of a server being made (newServer,
// after loadState) with its pin, and pins, holds or warns about it. It
// reports whether the server is held. Nothing else sees s yet.
func (h *Host) checkLaunch(ctx context.Context, cfg *config.Config, s *server, sc *config.Server) bool {
	if h.lock != nil {
		return h.checkLocked(ctx, s, sc)
	}
	if h.store == nil || !s.holds.pinsWereRead() || cfg.Security.OnLaunchChange == config.LaunchOff {
		return false
	}
	l := sc.Launch()
	h.resolvePackage(ctx, s, sc, l)
	def := l.Definition()
	hash := drift.Hash(def)
	s.holds.setLaunch(def, hash)
	pinned, ok := s.holds.pin(drift.LaunchKey)
	var decision string
	switch {
	case ok && pinned == hash:
		h.forgetLaunchDrift(ctx, sc.Name)
		return false
	case h.approveLaunch[sc.Name], sc.Project != "", cfg.Source == config.DefaultSource:
		// A project server runs only once a person has trusted the
		// project file's exact bytes (trust-project), which show its
		// launch: that is its approval. The embedded default runs the
		// program itself, wherever it was installed: nothing edited it.
		decision = LaunchApproved
	case !ok && (!h.launchesBegun.Load() || h.hasHistory(ctx, s)):
		decision = LaunchPinned
	case cfg.Security.OnLaunchChange == config.LaunchWarn:
		decision = LaunchWarned
	default:
		decision = LaunchHeld
	}
	what := "changed since it was approved"
	if !ok {
		what = "never approved"
	}
	switch decision {
	case LaunchPinned, LaunchApproved:
		s.holds.setPin(drift.LaunchKey, hash)
		h.writeDrift([]driftWrite{{pin: &store.Pin{Server: sc.Name, Tool: drift.LaunchKey, Hash: hash, Definition: def}}})
		h.log.Debug("server launch pinned", "server", sc.Name, "decision", decision)
	case LaunchWarned:
		s.holds.warnLaunch()
		h.log.Warn("server launch "+what+"; started all the same (security.onLaunchChange: warn): switchboard diff "+sc.Name, "server", sc.Name)
	case LaunchHeld:
		why := "changed"
		if !ok {
			why = "new"
		}
		s.life.holdLaunch(why)
		h.writeDrift([]driftWrite{{drift: &store.Drift{Server: sc.Name, Tool: drift.LaunchKey, Hash: hash, Definition: def}}})
		h.log.Warn("server held: its launch was "+what+"; not started until approved: switchboard approve "+sc.Name, "server", sc.Name)
	}
	h.event(ServerEvent{Server: sc.Name, Kind: EventLaunch, Decision: decision})
	return decision == LaunchHeld
}

// forgetLaunchDrift deletes the held launch of a server whose launch is
// its pin again (reverted by hand), so that it is not offered for
// approval.
func (h *Host) forgetLaunchDrift(ctx context.Context, server string) {
	ds, err := h.store.Drifts(ctx, server)
	if err != nil {
		return
	}
	for _, d := range ds {
		if d.Tool == drift.LaunchKey {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditPutTimeout)
			err := h.store.DeleteDrift(ctx, server, drift.LaunchKey)
			cancel()
			if err != nil {
				h.log.Warn("held launch not forgotten", "server", server, "err", err)
			}
		}
	}
}

// hasHistory reports whether a server without a launch pin was known to
// the store before launches were pinned: it has tool pins or a saved
// catalogue.
func (h *Host) hasHistory(ctx context.Context, s *server) bool {
	if s.holds.hasToolPins() {
		return true
	}
	_, err := h.store.Catalog(ctx, s.name)
	return err == nil
}

// launchHeldError is why a held server is not started. Like HeldError's,
// its text never says how to approve: it may reach a model.
func launchHeldError(server, why string) error {
	reason := "its launch (command, arguments, environment, URL) changed since it was approved"
	release := fmt.Sprintf("review it with `switchboard diff %s`, release it with `switchboard approve %s`", server, server)
	switch why {
	case "new":
		reason = "its launch (command, arguments, environment, URL) was never approved"
	case "unlocked":
		reason, release = "the lockfile does not pin it", "add it to the lockfile (`switchboard lock`), or serve without --lock"
	case "lockfile":
		reason, release = "its launch (command, arguments, environment, URL, package version) differs from the lockfile", "`switchboard verify` names the difference; make a new lockfile (`switchboard lock`) to accept it"
	}
	return fault.New(fault.CodeLaunchChanged, server, "", &HeldError{ID: server, Reason: reason, release: release})
}

// releaseLaunch releases a held server whose launch pin now matches (an
// approval made through the store), and reports whether it did; the
// caller starts it.
func (s *server) releaseLaunch() bool {
	if s.h.lock != nil || !s.holds.launchApproved() {
		return false
	}
	return s.life.releaseLaunch(s.h.noStart)
}

// startReleased starts a server released by an approval.
func (h *Host) startReleased(s *server) {
	h.log.Info("server launch approved; starting", "server", s.name)
	h.event(ServerEvent{Server: s.name, Kind: EventLaunch, Decision: LaunchApproved})
	if h.noStart || h.closed.Load() {
		return
	}
	h.watchers.Go(func() {
		if _, err := s.ensure(h.life); err != nil && !errors.Is(err, fault.LaunchChanged) {
			s.retryStartup()
		}
	})
}

// Package pins: an npx-style launch (npx, bunx, pnpm dlx, npm exec, uvx;
// internal/pkgpin) is resolved against its registry whenever the server
// is made, and the exact version and its integrity are part of the
// launch. The server is launched with that exact version (name@X.Y.Z in
// its arguments), so a version published behind "latest" since the
// approval changes the launch and is held like any change: it never runs
// unapproved. When the registry cannot be reached, the approved version
// is launched (and the outage logged); without one, the launch runs as
// written.

// packageResolveTimeout bounds a registry lookup.
const packageResolveTimeout = 5 * time.Second

// packageResolver resolves packages, with the user's .npmrc read once.
// Open resolves the packages of all its servers at once (prefetch); what
// a server made later (Reload) needs is resolved then.
type packageResolver struct {
	r     *pkgpin.Resolver
	npmrc string

	mu      sync.Mutex
	fetched map[packageQuery]packageAnswer // guarded by mu; taken once each
}

// packageQuery is one resolution: a spec at a registry.
type packageQuery struct {
	spec pkgpin.Spec
	base string
}

type packageAnswer struct {
	pin pkgpin.Pin
	err error
}

// maxPrefetch bounds the registry requests Open makes at once.
const maxPrefetch = 8

// prefetch resolves the packages of cfg's npx-style servers concurrently,
// so that Open waits for the slowest registry answer rather than for the
// sum of them.
func (p *packageResolver) prefetch(ctx context.Context, cfg *config.Config) {
	var queries []packageQuery
	for _, sc := range cfg.Servers {
		if !runnable(sc) || cfg.Security.OnLaunchChange == config.LaunchOff {
			continue
		}
		if spec, ok := pkgpin.Find(sc.Command, sc.Args); ok {
			queries = append(queries, packageQuery{spec, pkgpin.RegistryURL(spec, sc.Env, p.npmrc)})
		}
	}
	if len(queries) < 2 {
		return // one is resolved as the server is made, at the same cost
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxPrefetch)
	answers := make([]packageAnswer, len(queries))
	for i, q := range queries {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(ctx, packageResolveTimeout)
			defer cancel()
			pin, err := p.r.Resolve(ctx, q.spec, q.base)
			answers[i] = packageAnswer{pin, err}
		})
	}
	wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fetched = make(map[packageQuery]packageAnswer, len(queries))
	for i, q := range queries {
		p.fetched[q] = answers[i]
	}
}

// resolve returns what prefetch found for q, else asks the registry.
func (p *packageResolver) resolve(ctx context.Context, q packageQuery) (pkgpin.Pin, error) {
	p.mu.Lock()
	a, ok := p.fetched[q]
	delete(p.fetched, q)
	p.mu.Unlock()
	if ok {
		return a.pin, a.err
	}
	ctx, cancel := context.WithTimeout(ctx, packageResolveTimeout)
	defer cancel()
	return p.r.Resolve(ctx, q.spec, q.base)
}

func newPackageResolver() *packageResolver {
	p := &packageResolver{r: &pkgpin.Resolver{Client: &http.Client{Timeout: packageResolveTimeout}}}
	if home, err := os.UserHomeDir(); err == nil {
		if b, err := os.ReadFile(filepath.Join(home, ".npmrc")); err == nil {
			p.npmrc = string(b)
		}
	}
	return p
}

// resolvePackage sets l.Package and s.runArgs for an npx-style launch.
// Nothing else sees s yet.
func (h *Host) resolvePackage(ctx context.Context, s *server, sc *config.Server, l *config.Launch) {
	spec, ok := pkgpin.Find(sc.Command, sc.Args)
	if !ok {
		return
	}
	start := time.Now()
	pin, err := h.packages.resolve(ctx, packageQuery{spec, pkgpin.RegistryURL(spec, sc.Env, h.packages.npmrc)})
	if err == nil {
		h.log.Debug("package resolved", "server", sc.Name, "package", pin.Name, "version", pin.Version, "took", time.Since(start))
		l.Package = &config.LaunchPackage{Registry: pin.Registry, Name: pin.Name, Version: pin.Version, Integrity: pin.Integrity}
	} else if p := pinnedPackage(s.holds.pinnedLaunch()); p != nil && p.Registry == spec.Registry && p.Name == spec.Name {
		h.log.Warn("package registry not reached; launching the approved version", "server", sc.Name, "package", p.Name, "version", p.Version, "err", err)
		l.Package = p
	} else {
		h.log.Warn("package registry not reached and no version approved; launching as configured", "server", sc.Name, "package", spec.Name, "err", err)
		return
	}
	s.runArgs = pkgpin.Rewrite(sc.Args, spec, l.Package.Version)
}

// pinnedPackage reads the package of a pinned launch definition.
func pinnedPackage(def []byte) *config.LaunchPackage {
	var l config.Launch
	if def == nil || json.Unmarshal(def, &l) != nil {
		return nil
	}
	return l.Package
}

// launched returns the settings a server is launched with: sc, with the
// arguments rewritten to its package's exact version.
func (s *server) launched(sc *config.Server) *config.Server {
	if s.runArgs == nil || len(s.runArgs) != len(sc.Args) {
		return sc
	}
	c := *sc
	c.Args = s.runArgs
	return &c
}

// launchFinding is the finding about a server's launch, when there is one.
func launchFinding(server string, v serverView) (Finding, bool) {
	switch {
	case v.launch != "":
		detail := "not started: " + withoutServer(v.err, server)
		return Finding{Server: server, Kind: KindLaunchHeld, Detail: detail, Severity: SeverityHigh}, true
	case v.warned:
		return Finding{Server: server, Kind: KindLaunchUnapproved, Severity: SeverityWarn,
			Detail: "its launch was never approved or changed since; started all the same (security.onLaunchChange: warn)"}, true
	}
	return Finding{}, false
}
