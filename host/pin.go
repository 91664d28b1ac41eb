package host

import (
	"context"
	"fmt"
	"slices"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/drift"
	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/registry"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Drift pinning (the rug-pull defence): each tool's canonical definition
// and each server's instructions are pinned when first approved (first
// sight approves, unless the server has "approval": "manual"). A later
// change holds the tool back — not listed, calls refused with
// definition_changed — until `switchboard approve`, unless the server's
// onDrift says "warn" or "accept". Unchanged tools keep working. Without a
// store nothing is pinned.

// loadState reads a server's pins and trust score from the store, before
// anyone else sees the server.
func (h *Host) loadState(ctx context.Context, s *server) {
	if h.lock != nil {
		// The lock's hashes are the pins; the store's approvals do not
		// apply (lock.go).
		s.holds.load(h.lockPins(s.name), true, nil)
	}
	if h.store == nil {
		return
	}
	if sc, err := h.store.Score(ctx, s.name); err == nil {
		s.trust.load(sc.Value, sc.UpdatedAt)
	}
	if h.lock != nil {
		return
	}
	pins, err := h.store.Pins(ctx, s.name)
	if err != nil {
		h.log.Warn("pins unreadable; every definition counts as new, the launch is not checked", "server", s.name, "err", err)
	}
	m := make(map[string]string, len(pins))
	var launchDef []byte
	for _, p := range pins {
		m[p.Tool] = p.Hash
		if p.Tool == drift.LaunchKey {
			launchDef = p.Definition
		}
	}
	s.holds.load(m, err == nil, launchDef)
}

// driftWrite is a store write decided under holds.mu and made after it.
type driftWrite struct {
	pin   *store.Pin
	drift *store.Drift
}

// checkDrift compares the definitions in a server's catalogue cat with
// its pins and returns the tools to hold back and the writes to make.
func (p *holds) checkDrift(h *Host, sc *config.Server, cat *catalog.Catalog) (map[string]bool, []driftWrite) {
	locked := h.lock != nil // the lock's hashes are the pins, and nothing releases a hold
	p.mu.Lock()
	defer p.mu.Unlock()
	if (h.store == nil && !locked) || cat == nil || p.pins == nil {
		return nil, nil
	}
	current := map[string][]byte{}
	for _, t := range cat.Tools {
		if !registry.AllowedTool(t.Name, sc.EnabledTools, sc.DisabledTools) {
			// Never offered, so neither pinned nor held: its pin, if
			// any, stays for when it is turned on again.
			continue
		}
		def, err := drift.Definition(t)
		if err != nil {
			h.log.Warn("tool definition cannot be pinned; held back", "server", sc.Name, "tool", t.Name, "err", err)
			current[t.Name] = []byte(fmt.Sprintf("%q", "unpinnable: "+err.Error()))
			continue
		}
		current[t.Name] = def
	}
	if cat.Instructions != "" {
		current[""] = drift.InstructionsDefinition(cat.Instructions)
	}
	held := map[string]bool{}
	heldNow := map[string]string{}
	var writes []driftWrite
	for tool, def := range current {
		hash := drift.Hash(def)
		pinned, ok := p.pins[tool]
		switch {
		case ok && pinned == hash:
			continue
		case !locked && (!ok && sc.Lifecycle.Approval == config.ApprovalAuto || ok && sc.Lifecycle.OnDrift == config.DriftAccept):
			if ok {
				h.log.Warn("tool definition changed; accepted (onDrift: accept)", "server", sc.Name, "tool", tool)
			}
			p.pins[tool] = hash
			writes = append(writes, driftWrite{pin: &store.Pin{Server: sc.Name, Tool: tool, Hash: hash, Definition: def}})
			continue
		case !locked && ok && sc.Lifecycle.OnDrift == config.DriftWarn:
			if p.held[tool] != hash {
				h.log.Warn("tool definition changed since it was approved; kept (onDrift: warn)", "server", sc.Name, "tool", tool)
			}
			heldNow[tool] = hash // remembered only to warn once
			continue
		}
		// New under manual approval, or changed under hold.
		held[tool] = true
		heldNow[tool] = hash
		if p.held[tool] != hash && locked {
			h.log.Warn("tool held back: its definition differs from the lockfile", "server", sc.Name, "tool", tool, "new", !ok)
		} else if p.held[tool] != hash {
			h.log.Warn("tool held back until approved: switchboard approve "+sc.Name+":"+tool, "server", sc.Name, "tool", tool, "new", !ok)
			writes = append(writes, driftWrite{drift: &store.Drift{Server: sc.Name, Tool: tool, Hash: hash, Definition: def}})
		}
	}
	p.held = heldNow
	return held, writes
}

// writeDrift makes the store writes checkDrift decided, each bounded as an
// audit write is, so that a store that hangs holds no goroutine for long.
func (h *Host) writeDrift(writes []driftWrite) {
	for _, w := range writes {
		ctx, cancel := context.WithTimeout(context.Background(), auditPutTimeout)
		var err error
		switch {
		case w.pin != nil:
			err = h.store.Pin(ctx, *w.pin)
		case w.drift != nil:
			err = h.store.SaveDrift(ctx, *w.drift)
		}
		cancel()
		h.storeReached(err)
		if err != nil {
			h.log.Warn("pin state not saved", "err", err)
		}
	}
}

// refreshPins re-reads the pins of servers with held tools, so that an
// approval made by another process (switchboard approve, another replica)
// takes effect; it reports whether any changed. A store that does not
// answer within readyTimeout leaves the pins as they are, until the next
// re-read.
func (h *Host) refreshPins() bool {
	if h.store == nil || h.lock != nil {
		return false
	}
	h.pinsMu.Lock()
	defer h.pinsMu.Unlock()
	changed := false
	for _, s := range h.comp.Load().servers {
		if !s.holds.holding() && !s.life.heldForLaunch() {
			continue
		}
		ctx, cancel := context.WithTimeout(h.life, readyTimeout)
		pins, err := h.store.Pins(ctx, s.name)
		cancel()
		h.storeReached(err)
		if err != nil {
			h.log.Debug("pins not re-read; they are read again at the next re-read", "server", s.name, "err", err)
			continue
		}
		fresh := make(map[string]string, len(pins))
		for _, p := range pins {
			fresh[p.Tool] = p.Hash
		}
		if s.holds.replacePins(fresh) {
			changed = true
		}
		if s.releaseLaunch() {
			h.startReleased(s)
		}
	}
	return changed
}

// heldTool reports a call to a tool held back for drift or for an
// injection pattern (held_injection), by model-facing name or canonical ID.
func (h *Host) heldTool(name string) error {
	id, held := h.heldID(name)
	if !held {
		return nil
	}
	return h.heldError(id)
}

// heldError refuses a call to id, whose definition is held back: for an
// injection pattern (held_injection) or because it changed since it was
// approved (definition_changed).
func (h *Host) heldError(id names.ID) error {
	if h.injectionHeld(id) {
		return fault.New(fault.CodeHeldInjection, id.Server, fmt.Sprintf("call tool %q", id.Name),
			&HeldError{ID: id.String(), Reason: "its description or schema matches an injection pattern and the server is not trusted", release: h.releaseHint(id)})
	}
	return fault.New(fault.CodeDefinitionChanged, id.Server, fmt.Sprintf("call tool %q", id.Name),
		&HeldError{ID: id.String(), Reason: "its definition changed since it was approved",
			release: fmt.Sprintf("review it with `switchboard diff %s`, release it with `switchboard approve %s`", id.Server, id)})
}

// HeldError is why a call of a tool held for review was refused (the
// cause of a held_injection or definition_changed fault). Its text says
// that a person must approve the tool, never how: it may reach a model,
// which the tool's poisoned description may be steering. Release says
// how, for a person (the CLI prints it).
type HeldError struct {
	ID     string // the tool's canonical ID, "server:tool"
	Reason string
	// release is what Release returns.
	release string
}

func (e *HeldError) Error() string {
	return "held for review: " + e.Reason + "; a person must approve it"
}

// Release says how a person releases the tool: the commands that show and
// approve its definition, or, without a state store to keep an approval,
// the settings that would let it run.
func (e *HeldError) Release() string { return e.release }

// injectionHeld reports whether a tool is held back for an injection
// pattern (and is not also held for drift, which comes first: approving
// it approves both).
func (h *Host) injectionHeld(id names.ID) bool {
	s := h.comp.Load().servers[id.Server]
	if s == nil {
		return false
	}
	v := s.view()
	return !v.isHeld(id.Name) && slices.Contains(v.injHeld, id.Name)
}

// heldID returns the canonical ID of a tool held back for drift or for an
// injection pattern, by model-facing name or canonical ID.
func (h *Host) heldID(name string) (names.ID, bool) {
	comp := h.comp.Load()
	for _, sc := range comp.cfg.Servers {
		v := comp.servers[sc.Name].view()
		for _, tool := range slices.Concat(v.held, v.injHeld) {
			if tool == "" {
				continue
			}
			id := names.ID{Server: sc.Name, Name: tool}
			if name == id.String() || name == names.ModelName(names.Prefix(sc.Prefix), tool) {
				return id, true
			}
		}
	}
	return names.ID{}, false
}
