package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/drift"
	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Drift pinning (the rug-pull defence): each tool's canonical definition
// and each server's instructions are pinned when first approved (first
// sight approves, unless the server has "approval": "manual"). A later
// change holds the tool back — not listed, calls refused with
// definition_changed — until `switchboard approve`, unless the server's
// onDrift says "warn" or "accept". Unchanged tools keep working. Without a
// store nothing is pinned.

// loadState reads a server's pins and trust score from the store.
func (h *Host) loadState(ctx context.Context, s *server) {
	if h.store == nil {
		return
	}
	pins, err := h.store.Pins(ctx, s.cfg.Name)
	if err != nil {
		h.log.Warn("pins unreadable; every definition counts as new", "server", s.cfg.Name, "err", err)
	}
	s.pins = make(map[string]string, len(pins))
	for _, p := range pins {
		s.pins[p.Tool] = p.Hash
	}
	if sc, err := h.store.Score(ctx, s.cfg.Name); err == nil {
		s.trust, s.trustAt = sc.Value, sc.UpdatedAt
	}
}

// driftWrite is a store write decided under h.mu and made after it.
type driftWrite struct {
	pin   *store.Pin
	drift *store.Drift
}

// checkDrift compares a server's current definitions with its pins and
// returns the tools to hold back (tool → reason) and the writes to make.
// Called with h.mu held.
func (h *Host) checkDrift(s *server) (map[string]bool, []driftWrite) {
	if h.store == nil || s.catalog == nil || s.pins == nil {
		return nil, nil
	}
	sc := s.cfg
	current := map[string][]byte{}
	for _, t := range s.catalog.Tools {
		def, err := drift.Definition(t)
		if err != nil {
			h.log.Warn("tool definition cannot be pinned; held back", "server", sc.Name, "tool", t.Name, "err", err)
			current[t.Name] = []byte(fmt.Sprintf("%q", "unpinnable: "+err.Error()))
			continue
		}
		current[t.Name] = def
	}
	if s.catalog.Instructions != "" {
		current[""] = drift.InstructionsDefinition(s.catalog.Instructions)
	}
	held := map[string]bool{}
	heldNow := map[string]string{}
	var writes []driftWrite
	for tool, def := range current {
		hash := drift.Hash(def)
		pinned, ok := s.pins[tool]
		switch {
		case ok && pinned == hash:
			continue
		case !ok && sc.Lifecycle.Approval == config.ApprovalAuto, ok && sc.Lifecycle.OnDrift == config.DriftAccept:
			if ok {
				h.log.Warn("tool definition changed; accepted (onDrift: accept)", "server", sc.Name, "tool", tool)
			}
			s.pins[tool] = hash
			writes = append(writes, driftWrite{pin: &store.Pin{Server: sc.Name, Tool: tool, Hash: hash, Definition: def}})
			continue
		case ok && sc.Lifecycle.OnDrift == config.DriftWarn:
			if s.held[tool] != hash {
				h.log.Warn("tool definition changed since it was approved; kept (onDrift: warn)", "server", sc.Name, "tool", tool)
			}
			heldNow[tool] = hash // remembered only to warn once
			continue
		}
		// New under manual approval, or changed under hold.
		held[tool] = true
		heldNow[tool] = hash
		if s.held[tool] != hash {
			h.log.Warn("tool held back until approved: switchboard approve "+sc.Name+":"+tool, "server", sc.Name, "tool", tool, "new", !ok)
			writes = append(writes, driftWrite{drift: &store.Drift{Server: sc.Name, Tool: tool, Hash: hash, Definition: def}})
		}
	}
	s.held = heldNow
	return held, writes
}

// writeDrift makes the store writes checkDrift decided.
func (h *Host) writeDrift(writes []driftWrite) {
	for _, w := range writes {
		var err error
		switch {
		case w.pin != nil:
			err = h.store.Pin(context.Background(), *w.pin)
		case w.drift != nil:
			err = h.store.SaveDrift(context.Background(), *w.drift)
		}
		if err != nil {
			h.log.Warn("pin state not saved", "err", err)
		}
	}
}

// refreshPins re-reads the pins of servers with held tools, so that an
// approval made by another process (switchboard approve) takes effect; it
// reports whether any changed.
func (h *Host) refreshPins() bool {
	if h.store == nil {
		return false
	}
	h.mu.RLock()
	var servers []*server
	for _, s := range h.servers {
		if len(s.held) > 0 {
			servers = append(servers, s)
		}
	}
	h.mu.RUnlock()
	changed := false
	for _, s := range servers {
		pins, err := h.store.Pins(context.Background(), s.cfg.Name)
		if err != nil {
			continue
		}
		fresh := make(map[string]string, len(pins))
		for _, p := range pins {
			fresh[p.Tool] = p.Hash
		}
		h.mu.Lock()
		if !maps.Equal(fresh, s.pins) {
			s.pins, changed = fresh, true
		}
		h.mu.Unlock()
	}
	return changed
}

// heldTool reports a call to a tool held back for drift, by model-facing
// name or canonical ID. Called with h.mu held.
func (h *Host) heldTool(name string) error {
	for _, sc := range h.cfg.Servers {
		s := h.servers[sc.Name]
		for tool := range s.held {
			if tool == "" || !h.isHeld(s, tool) {
				continue
			}
			id := names.ID{Server: sc.Name, Name: tool}
			if name == id.String() || name == names.ModelName(names.Prefix(sc.Prefix), tool) {
				return fault.New(fault.CodeDefinitionChanged, sc.Name, fmt.Sprintf("call tool %q", tool),
					fmt.Errorf("its definition changed since it was approved; review with `switchboard diff %s` and approve with `switchboard approve %s`", sc.Name, id))
			}
		}
	}
	return nil
}

// isHeld reports whether a tool is held back (not merely warned about).
func (h *Host) isHeld(s *server, tool string) bool {
	_, pinned := s.pins[tool]
	return s.held[tool] != "" && (!pinned || s.cfg.Lifecycle.OnDrift == config.DriftHold)
}

// Audit log: one row per call, written by one goroutine so a call never
// waits for the disk; when the queue is full, rows are dropped and
// counted.

// record queues an audit row.
func (h *Host) record(c *store.Call) {
	if h.audit == nil {
		return
	}
	select {
	case h.audit <- c:
	default:
		h.auditDropped.Add(1)
	}
}

// The audit writer gathers rows into one transaction: what is queued, and
// what arrives within auditLinger of the first, up to auditBatch rows. A
// row alone costs a whole transaction (about 150 µs of CPU on SQLite, as
// much as the rest of a call through the gateway); in a batch of 256 it
// costs about 12 µs (BenchmarkRecordCalls). A row reaches the store at
// most auditLinger after its call ends, and Close flushes the rest.
const (
	auditBatch  = 256
	auditLinger = 100 * time.Millisecond
)

// auditWriter writes queued audit rows until the queue is closed.
func (h *Host) auditWriter() {
	batch := make([]*store.Call, 0, auditBatch)
	linger := time.NewTimer(auditLinger)
	linger.Stop()
	for c := range h.audit {
		batch = append(batch[:0], c)
		linger.Reset(auditLinger)
	gather:
		for len(batch) < auditBatch {
			select {
			case c, ok := <-h.audit:
				if !ok {
					break gather
				}
				batch = append(batch, c)
			case <-linger.C:
				break gather
			}
		}
		linger.Stop()
		if err := h.store.RecordCalls(context.Background(), batch...); err != nil {
			h.log.Warn("audit rows not written", "rows", len(batch), "first", batch[0].Tool, "err", err)
		}
		clear(batch)
	}
	if n := h.auditDropped.Load(); n > 0 {
		h.log.Warn("audit rows dropped: the queue was full", "rows", n)
	}
}

// auditCall builds the row for a finished call.
func auditCall(id names.ID, client string, args []byte, start time.Time, res *Result, err error) *store.Call {
	c := &store.Call{
		Time: start, Tool: id.String(), Server: id.Server, Caller: client,
		ArgShape: argShape(args), Latency: time.Since(start), BytesIn: len(args),
	}
	switch {
	case err != nil:
		c.Outcome, c.Code = outcomeError, string(fault.CodeOf(err))
		if c.Code == "" && errors.Is(err, context.Canceled) {
			c.Code = "cancelled"
		}
	case res.IsError:
		c.Outcome, c.BytesOut = outcomeToolErr, len(res.Raw)
	default:
		c.Outcome, c.BytesOut = outcomeOK, len(res.Raw)
	}
	return c
}
