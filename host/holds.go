package host

import (
	"maps"
	"slices"
	"sync"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/drift"
)

// holds is what a person approved of a server and what it holds back
// until a person does: the approved definition hashes (pins), the tools
// held for a changed definition (drift, pin.go) or for an injection
// pattern (vet.go), and its launch's pin (launch.go). It is one part of a
// server (see server); code outside it calls its methods. Two of them sit
// beside the rules they apply: the drift decision (checkDrift) in pin.go,
// the injection decision (holdInjections) in vet.go.
//
// mu guards every field. It is never held while calling the store or
// another part of the server: a decision made under it returns the store
// writes to make after it (driftWrite).
type holds struct {
	mu         sync.Mutex
	pins       map[string]string // approved definition hashes by tool ("" = instructions); replaced whole by load and replacePins
	held       map[string]string // tools held back because their definition changed: tool → hash seen; replaced whole
	injHeld    map[string]string // tools held back because their metadata matches an injection pattern: tool → hash seen; replaced whole
	pinsRead   bool              // pins were read from the store (loadState)
	launchDef  []byte            // the pinned launch's definition (loadState); nil when none
	launchCur  []byte            // the launch's definition as configured, package resolved (launch.go); nil when not checked
	launchHash string            // the hash of launchCur; "" when not checked
	launchWarn bool              // its launch would be held, and started under onLaunchChange "warn" (launch.go)
}

// load puts in the pins read for a server (read: from the store, or the
// lockfile's) and the pinned launch's definition. pins is the holds' own
// from then on.
func (p *holds) load(pins map[string]string, read bool, launchDef []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pins, p.pinsRead, p.launchDef = pins, read, launchDef
}

// replacePins puts in the pins re-read from the store, when they differ,
// and reports whether they did. fresh is the holds' own from then on.
func (p *holds) replacePins(fresh map[string]string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if maps.Equal(fresh, p.pins) {
		return false
	}
	p.pins = fresh
	return true
}

// pinsWereRead reports whether the pins were read (from the store or the
// lockfile): without them the launch is not checked.
func (p *holds) pinsWereRead() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pinsRead
}

// pin returns the approved hash of key (a tool, "" for the instructions,
// drift.LaunchKey for the launch).
func (p *holds) pin(key string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hash, ok := p.pins[key]
	return hash, ok
}

// setPin approves hash for key, in memory; the caller writes it to the
// store.
func (p *holds) setPin(key, hash string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pins[key] = hash
}

// hasToolPins reports whether anything but the launch is pinned.
func (p *holds) hasToolPins() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key := range p.pins {
		if key != drift.LaunchKey {
			return true
		}
	}
	return false
}

// setLaunch records the server's launch as configured (package resolved)
// and its hash.
func (p *holds) setLaunch(def []byte, hash string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.launchCur, p.launchHash = def, hash
}

// launch returns the launch as configured and its hash; nil and "" when
// it was not checked.
func (p *holds) launch() ([]byte, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.launchCur, p.launchHash
}

// pinnedLaunch returns the pinned launch's definition; nil when none.
func (p *holds) pinnedLaunch() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.launchDef
}

// launchApproved reports whether the launch's pin is the launch as
// configured: a held launch may be released.
func (p *holds) launchApproved() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pins[drift.LaunchKey] == p.launchHash
}

// warnLaunch records that the launch would be held and is started all the
// same (onLaunchChange "warn").
func (p *holds) warnLaunch() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.launchWarn = true
}

// holding reports whether any tool is held for drift or an injection
// pattern (or merely warned about, under onDrift "warn").
func (p *holds) holding() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.held) > 0 || len(p.injHeld) > 0
}

// clearInjections releases every tool held for an injection pattern: the
// server is trusted, strict, or not under onInjection "hold".
func (p *holds) clearInjections() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.injHeld = nil
}

// holdsView is a copy of a server's holds at one moment.
type holdsView struct {
	held    []string // tools held back for drift (see isHeldLocked), sorted; "" is the instructions
	injHeld []string // tools held back for an injection pattern until approved, sorted
	warned  bool     // launchWarn
}

// view returns a copy of the holds. locked says a lockfile is in force
// and onDrift is the server's setting: both decide whether a changed
// definition is held or merely warned about.
func (p *holds) view(locked bool, onDrift string) holdsView {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := holdsView{warned: p.launchWarn}
	for tool := range p.held {
		if p.isHeldLocked(tool, locked, onDrift) {
			v.held = append(v.held, tool)
		}
	}
	slices.Sort(v.held)
	for tool := range p.injHeld {
		v.injHeld = append(v.injHeld, tool)
	}
	slices.Sort(v.injHeld)
	return v
}

// isHeldLocked reports whether a tool is held back (not merely warned
// about): it was never approved, a lockfile is in force, or the server's
// onDrift is "hold". Called with p.mu held.
func (p *holds) isHeldLocked(tool string, locked bool, onDrift string) bool {
	_, pinned := p.pins[tool]
	return p.held[tool] != "" && (!pinned || locked || onDrift == config.DriftHold)
}
