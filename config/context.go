package config

import "fmt"

// Context holds the context-economy settings (the top-level "context"
// object): what the model is shown of the aggregate, and how. Its zero
// value is the default: capability tools on, nothing deferred, large
// results spilled, no output-schema hints.
type Context struct {
	// NoCapabilityTools leaves out the capability tools (mcp_list_resources,
	// mcp_list_resource_templates, mcp_read_resource, mcp_list_prompts,
	// mcp_get_prompt) that let a model discover and read resources and
	// prompts on demand ("capabilityTools": false).
	NoCapabilityTools bool
	// DeferTools keeps tools out of the listed set until a tool_search
	// finds them ("deferTools"); a server's own "deferTools" overrides it.
	DeferTools bool
	// AlwaysInclude are globs (path.Match syntax) over model-facing tool
	// names that stay listed even when deferred ("alwaysInclude").
	AlwaysInclude []string
	// NoSpill turns large-result spilling off ("spill": false): results
	// are then only cut to security.resultTextMaxBytes per text block.
	NoSpill bool
	// SpillBytes is the size of a result's text above which it is stored
	// and replaced by a preview plus a resource ID ("spillBytes"); 0 means
	// DefaultSpillBytes.
	SpillBytes int
	// OutputSchemaHint appends a tool's output schema to its description as
	// an "expected output" hint, capped at MaxOutputSchemaHint bytes
	// ("outputSchemaHint").
	OutputSchemaHint bool
	// Search configures tool search ("search").
	Search Search
	// CodeMode configures the code_run built-in ("codeMode"); off by
	// default.
	CodeMode CodeMode
	// ToolsShare ("toolsShare") is the share of a model's context window
	// that the tools it is given may take: where a client or profile
	// names its model's ContextWindow and the tools listed for it would
	// take more, its servers' tools are deferred (behind tool_search) as
	// with DeferTools, but for a server whose own "deferTools" is false.
	// 0 means DefaultToolsShare.
	ToolsShare float64
}

// DefaultToolsShare is Context.ToolsShare's default: 3 %, within the 1 to
// 5 % the MCP specification's guidance on tool definitions suggests.
const DefaultToolsShare = 0.03

// A context window ("contextWindow") is between these, in tokens.
const (
	MinContextWindow = 1000
	MaxContextWindow = 100_000_000
)

// ToolBudget returns how many tokens of tool definitions a model with a
// context window of window tokens may be given, 0 for no limit (window
// 0).
func (c Context) ToolBudget(window int) int {
	share := c.ToolsShare
	if share == 0 {
		share = DefaultToolsShare
	}
	return int(float64(window) * share)
}

// Context defaults and limits.
const (
	// DefaultSpillBytes is the text size above which a result spills: the
	// default per-block cap, so that what the cap would have cut is kept.
	DefaultSpillBytes = DefaultResultTextMaxBytes
	// MinSpillBytes is the smallest spillBytes: a preview must fit.
	MinSpillBytes = 4 << 10
	// MaxSpillBytes is the largest spillBytes accepted.
	MaxSpillBytes = 64 << 20
	// MaxOutputSchemaHint caps the hint appended to a description.
	MaxOutputSchemaHint = 1024
)

// contextFields are the JSON keys of "context".
var contextFields = []string{"capabilityTools", "deferTools", "alwaysInclude", "spill", "spillBytes", "outputSchemaHint", "search", "toolsShare", "codeMode"}

// Spill returns the effective spill threshold in bytes, 0 when spilling is
// off.
func (c Context) Spill() int {
	switch {
	case c.NoSpill:
		return 0
	case c.SpillBytes == 0:
		return DefaultSpillBytes
	}
	return c.SpillBytes
}

// Deferred reports whether s's tools are deferred: its own "deferTools" if
// set, else the global one.
func (c Context) Deferred(s *Server) bool {
	if s != nil && s.DeferTools != nil {
		return *s.DeferTools
	}
	return c.DeferTools
}

// decodeContext decodes the top-level "context" object.
func (d *decoder) decodeContext(n *node, p *jsonPath) Context {
	var c Context
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return c
	}
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "capabilityTools":
			if v, ok := d.boolean(m.val, fp, ""); ok {
				c.NoCapabilityTools = !v
			}
		case "deferTools":
			c.DeferTools, _ = d.boolean(m.val, fp, "")
		case "alwaysInclude":
			if globs, ok := d.strs(m.val, fp, ""); ok {
				d.checkGlobs(globs, fp, "")
				c.AlwaysInclude = globs
			}
		case "spill":
			if v, ok := d.boolean(m.val, fp, ""); ok {
				c.NoSpill = !v
			}
		case "spillBytes":
			c.SpillBytes, _ = d.integer(m.val, fp, "", MinSpillBytes, MaxSpillBytes)
		case "outputSchemaHint":
			c.OutputSchemaHint, _ = d.boolean(m.val, fp, "")
		case "search":
			c.Search = d.decodeSearch(m.val, fp)
		case "codeMode":
			c.CodeMode = d.decodeCodeMode(m.val, fp)
		case "toolsShare":
			c.ToolsShare, _ = d.float(m.val, fp, 0.001, 0.5)
		default:
			d.unknown(fp, m.key, contextFields, nil, "")
		}
	}
	return c
}

// validateContext checks a hand-built Config's context settings.
func (c *Config) validateContext(add func(p *jsonPath, msg string)) {
	cp := (*jsonPath)(nil).k("context")
	if v := c.Context.SpillBytes; v != 0 && (v < MinSpillBytes || v > MaxSpillBytes) {
		add(cp.k("spillBytes"), fmt.Sprintf("must be between %d and %d (0 means the default)", MinSpillBytes, MaxSpillBytes))
	}
	for i, g := range c.Context.AlwaysInclude {
		if msg := checkGlob(g); msg != "" {
			add(cp.k("alwaysInclude").i(i), msg)
		}
	}
	if v := c.Context.ToolsShare; v != 0 && !(v >= 0.001 && v <= 0.5) {
		add(cp.k("toolsShare"), "must be between 0.001 and 0.5 (0 means the default)")
	}
	window := func(p *jsonPath, v int) {
		if v != 0 && (v < MinContextWindow || v > MaxContextWindow) {
			add(p.k("contextWindow"), fmt.Sprintf("must be between %d and %d (0: not known)", MinContextWindow, MaxContextWindow))
		}
	}
	for _, p := range c.Profiles {
		window((*jsonPath)(nil).k("profiles").k(p.Name), p.ContextWindow)
	}
	for _, cl := range c.Clients {
		window((*jsonPath)(nil).k("clients").k(cl.Name), cl.ContextWindow)
	}
	c.validateSearch(add)
}
