package host

import (
	"context"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/drift"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/pkgpin"
	"github.com/switchboard-mcp/switchboard/internal/registry"
)

// Lockfiles (docs/PINS.md): serverPins reads what a lockfile pins of each
// server; a Host opened with a lock (hostlink.WithLock) serves only what
// the lock pins.
// A server the lock does not name is held, never started; one whose
// launch (package included: the lock's version is the one launched)
// differs is held; a tool or the instructions whose definition differs
// from the lock are held through the drift path (pin.go), with the
// lock's hashes as the pins and no approval able to release them; a
// prompt or template whose definition differs is left out of the lists.

// serverLock is what a lock holds the servers to, by server name.
type serverLock = map[string]hostlink.ServerPins

// serverPins returns what a lockfile pins of each enabled, usable
// server, in the configuration's order.
func (h *Host) serverPins() []hostlink.ServerPins {
	comp := h.comp.Load()
	var out []hostlink.ServerPins
	for _, sc := range comp.cfg.Servers {
		if !runnable(sc) {
			continue
		}
		s := comp.servers[sc.Name]
		cat := s.cat.current()
		def, _ := s.holds.launch()
		state := s.currentState()
		if def == nil {
			def = sc.Launch().Definition()
		}
		p := hostlink.ServerPins{Server: sc.Name, Launch: drift.Hash(def), Package: pinnedPackage(def), Held: state == StateHeld, Known: cat != nil}
		if cat != nil {
			p.Instructions, p.Tools, p.Prompts, p.Templates = listHashes(sc, cat)
		}
		out = append(out, p)
	}
	return out
}

// listHashes hashes the definitions a server offers from cat.
func listHashes(sc *config.Server, cat *catalog.Catalog) (instructions string, tools, prompts, templates map[string]string) {
	tools, prompts, templates = map[string]string{}, map[string]string{}, map[string]string{}
	if cat.Instructions != "" {
		instructions = drift.Hash(drift.InstructionsDefinition(cat.Instructions))
	}
	for _, t := range cat.Tools {
		if !registry.AllowedTool(t.Name, sc.EnabledTools, sc.DisabledTools) {
			continue
		}
		if def, err := drift.Definition(t); err == nil {
			tools[t.Name] = drift.Hash(def)
		}
	}
	for _, p := range cat.Prompts {
		if def, err := drift.PromptDefinition(p); err == nil {
			prompts[p.Name] = drift.Hash(def)
		}
	}
	for _, t := range cat.Templates {
		if def, err := drift.TemplateDefinition(t); err == nil {
			templates[t.Name] = drift.Hash(def)
		}
	}
	return instructions, tools, prompts, templates
}

// checkLocked is checkLaunch under a lock: the server must be in it, and
// its launch (with the lock's package version) must be the lock's. It
// reports whether the server is held. Nothing else sees s yet.
func (h *Host) checkLocked(ctx context.Context, s *server, sc *config.Server) bool {
	want, ok := h.lock[sc.Name]
	l := sc.Launch()
	if spec, found := pkgpin.Find(sc.Command, sc.Args); found && want.Package != nil &&
		want.Package.Registry == spec.Registry && want.Package.Name == spec.Name {
		p := *want.Package
		l.Package = &p
		s.runArgs = pkgpin.Rewrite(sc.Args, spec, p.Version)
	} else if found {
		h.resolvePackage(ctx, s, sc, l)
	}
	def := l.Definition()
	hash := drift.Hash(def)
	s.holds.setLaunch(def, hash)
	var why string
	switch {
	case !ok:
		why = "unlocked"
	case want.Launch != hash:
		why = "lockfile"
	default:
		return false
	}
	err := s.life.holdLaunch(why)
	h.log.Warn("server held: "+err.Error(), "server", sc.Name)
	h.event(ServerEvent{Server: sc.Name, Kind: EventLaunch, Decision: LaunchHeld})
	return true
}

// lockPins returns the pins of a server under the lock: the lock's hashes
// of its tools, and of its instructions under "".
func (h *Host) lockPins(name string) map[string]string {
	want := h.lock[name]
	pins := make(map[string]string, len(want.Tools)+1)
	for tool, hash := range want.Tools {
		pins[tool] = hash
	}
	if want.Instructions != "" {
		pins[""] = want.Instructions
	}
	return pins
}

// lockedLists returns cat without the prompts and templates whose
// definitions differ from the lock's.
func (h *Host) lockedLists(sc *config.Server, cat *catalog.Catalog) *catalog.Catalog {
	want := h.lock[sc.Name]
	c := *cat
	c.Prompts, c.Templates = nil, nil
	for _, p := range cat.Prompts {
		if def, err := drift.PromptDefinition(p); err == nil && want.Prompts[p.Name] == drift.Hash(def) {
			c.Prompts = append(c.Prompts, p)
		} else {
			h.log.Warn("prompt held: its definition differs from the lockfile", "server", sc.Name, "prompt", p.Name)
		}
	}
	for _, t := range cat.Templates {
		if def, err := drift.TemplateDefinition(t); err == nil && want.Templates[t.Name] == drift.Hash(def) {
			c.Templates = append(c.Templates, t)
		} else {
			h.log.Warn("resource template held: its definition differs from the lockfile", "server", sc.Name, "template", t.Name)
		}
	}
	return &c
}
