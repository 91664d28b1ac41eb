package host

import (
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/registry"
)

// A context budget (config: a client's or profile's "contextWindow",
// context.toolsShare). A model with a small context window loses much of
// it to tool definitions before the user says a word. Where the caller's
// profile or named client says how large its model's window is, and the
// tools listed for it would take more than their share of it, its
// servers' tools are deferred behind tool_search, as "deferTools" does,
// except a server whose own "deferTools" is false: the operator's word
// wins. The cost is each listed tool's definition through internal/tokens
// (Tool.Tokens), counted once per catalogue and configuration.

// budgetKey is whose listed tools a cost is of.
type budgetKey struct{ profile, client string }

// budgetCost is the cost of a caller's listed tools for one snapshot and
// configuration.
type budgetCost struct {
	snap   *registry.Snapshot
	cfg    *config.Config
	tokens int
}

// contextWindow returns the context window of v's model: its profile's,
// else its named client's; 0 when neither says.
func (v *View) contextWindow(cfg *config.Config) int {
	if v.c.Profile != "" {
		if p := cfg.Profile(v.c.Profile); p != nil && p.ContextWindow > 0 {
			return p.ContextWindow
		}
	}
	if v.c.Client != "" {
		if c := cfg.Client(v.c.Client); c != nil {
			return c.ContextWindow
		}
	}
	return 0
}

// overBudget reports whether the tools listed for v, without the
// budget, would take more than its model's share of its context window.
// It must be called without h.mu held.
func (h *Host) overBudget(v *View, cfg *config.Config, snap *registry.Snapshot) bool {
	window := v.contextWindow(cfg)
	if window == 0 {
		return false
	}
	key := budgetKey{v.c.Profile, v.c.Client}
	h.budgetMu.Lock()
	c, ok := h.budgets[key]
	h.budgetMu.Unlock()
	if !ok || c.snap != snap || c.cfg != cfg {
		c = budgetCost{snap: snap, cfg: cfg}
		sc := v.scope()
		for _, t := range snap.Tools() {
			if sc.hasTool(t) && !cfg.Context.Deferred(cfg.Server(t.ID.Server)) {
				c.tokens += toolOf(t).Tokens()
			}
		}
		h.budgetMu.Lock()
		if h.budgets == nil {
			h.budgets = map[budgetKey]budgetCost{}
		}
		h.budgets[key] = c
		h.budgetMu.Unlock()
	}
	return c.tokens > cfg.Context.ToolBudget(window)
}

// budgetDefers reports whether a server's tools are deferred for a view
// over its budget: unless the server's own "deferTools" says false.
func budgetDefers(cfg *config.Config, server string) bool {
	s := cfg.Server(server)
	return s == nil || s.DeferTools == nil
}
