package host

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/ingest"
	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/registry"
)

// Finding is one thing Switchboard changed, refused or noticed in what a
// server advertised: stripped characters, a rejected schema, a withheld or
// held-back tool, a description that matches an injection pattern. Kind is
// stable (see internal/ingest).
type Finding = ingest.Finding

// vet checks a freshly listed catalogue under the security settings in
// force and logs what it found. It returns the vetted catalogue; the
// caller stores it under the server's lock.
func (h *Host) vet(sc *config.Server, cat *catalog.Catalog) *ingest.Result {
	return h.vetUnder(h.config().Security, sc, cat)
}

// vetUnder is vet under the security settings sec.
func (h *Host) vetUnder(sec config.Security, sc *config.Server, cat *catalog.Catalog) *ingest.Result {
	res := ingest.Vet(sc, sec, cat)
	for _, f := range res.Findings {
		h.log.Warn("server metadata: "+f.Kind, "server", f.Server, "item", f.Item, "detail", f.Detail)
	}
	return res
}

// flagAndHold scans every server's cleaned metadata for injection patterns,
// against the names of the other servers and their tools, and returns the
// tools to hold back (strict servers that are not trusted) by server. New
// findings are logged, and each newly flagged item costs its server a trust
// score step; all are kept for Findings. cats are the servers'
// vetted catalogues by name. Called with h.mu held (by rebuild).
func (h *Host) flagAndHold(comp *composition, cats map[string]*catalog.Catalog) map[string]map[string]bool {
	// Every server's names, to spot a description that talks about
	// another server's tools (shadowing).
	owners := map[string][]string{} // lower-cased name → servers using it
	toolOwners := map[string][]string{}
	for _, sc := range comp.cfg.Servers {
		own := []string{sc.Name}
		if cat := cats[sc.Name]; cat != nil {
			for _, t := range cat.Tools {
				own = append(own, names.Prefix(sc.Prefix)+names.Sep+t.Name)
				// A plain word ("echo", "search") is everyone's: a
				// mention says nothing. Identifier-like names are
				// distinctive.
				if distinctive(t.Name) {
					own = append(own, t.Name)
				}
				if !slices.Contains(toolOwners[t.Name], sc.Name) {
					toolOwners[t.Name] = append(toolOwners[t.Name], sc.Name)
				}
			}
		}
		for _, n := range own {
			k := strings.ToLower(n)
			if !slices.Contains(owners[k], sc.Name) {
				owners[k] = append(owners[k], sc.Name)
			}
		}
	}
	held := map[string]map[string]bool{}
	for _, sc := range comp.cfg.Servers {
		cat := cats[sc.Name]
		if cat == nil {
			continue
		}
		var others []string
		for n, by := range owners {
			if !slices.Contains(by, sc.Name) {
				others = append(others, n)
			}
		}
		byTool, findings := ingest.Flags(sc.Name, cat, others)
		for _, t := range cat.Tools {
			// Two servers offering the same tool name: each keeps its own
			// model-facing name, but a description of one may be written
			// to steer calls meant for the other (shadowing).
			if by := toolOwners[t.Name]; len(by) > 1 {
				var rest []string
				for _, o := range by {
					if o != sc.Name {
						rest = append(rest, o)
					}
				}
				findings = append(findings, Finding{Server: sc.Name, Kind: ingest.KindShadowing, Item: fmt.Sprintf("tool %q", t.Name),
					Detail: fmt.Sprintf("server(s) %s offer a tool of the same name", strings.Join(rest, ", "))})
			}
		}
		if sc.Strict && sc.Trust.Level() != config.TrustTrusted {
			for tool := range byTool {
				if held[sc.Name] == nil {
					held[sc.Name] = map[string]bool{}
				}
				held[sc.Name][tool] = true
				findings = append(findings, Finding{Server: sc.Name, Kind: ingest.KindWithheld, Item: fmt.Sprintf("tool %q", tool),
					Detail: "held back: its metadata matches an injection pattern and the server is not trusted (strict mode)"})
			}
		}
		slices.SortFunc(findings, func(a, b Finding) int { return strings.Compare(a.String(), b.String()) })
		s := comp.servers[sc.Name]
		for _, f := range s.setFlags(findings) {
			h.log.Warn("server metadata: "+f.Kind, "server", f.Server, "item", f.Item, "detail", f.Detail)
			if f.Kind == ingest.KindFlagged {
				s.trust.add(outcomeFlagged) // each newly flagged item costs a step
			}
		}
	}
	return held
}

// setFlags records the injection-pattern findings of a rebuild and returns
// the ones that are new.
func (s *server) setFlags(findings []Finding) []Finding {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Equal(findings, s.flags) {
		return nil
	}
	var fresh []Finding
	for _, f := range findings {
		if !slices.Contains(s.flags, f) {
			fresh = append(fresh, f)
		}
	}
	s.flags = findings
	return fresh
}

// Findings returns what Switchboard changed, refused or noticed in the
// servers' metadata, by server in configuration order.
func (h *Host) Findings() []Finding {
	comp := h.comp.Load()
	var out []Finding
	for _, sc := range comp.cfg.Servers {
		v := comp.servers[sc.Name].view()
		if v.vetted != nil {
			out = append(out, v.vetted.Findings...)
		}
		out = append(out, v.flags...)
	}
	return out
}

// RawTool returns a tool's definition exactly as its server sent it, before
// Switchboard cleaned it, for an operator to inspect; never show it to a
// model. name is a model-facing name or a canonical ID "server:tool", which
// also finds tools that were refused or held back.
func (h *Host) RawTool(name string) (json.RawMessage, error) {
	snap := h.snapshot()
	var id names.ID
	if t, ok := snap.Tool(name); ok {
		id = t.ID
	} else if i, ok := snap.Resolve(name); ok {
		id = i
	} else {
		return nil, h.notFoundTool(snap, name)
	}
	var orig any
	if s := h.comp.Load().servers[id.Server]; s != nil {
		if v := s.view(); v.vetted != nil {
			if t := v.vetted.Originals[id.Name]; t != nil {
				orig = t
			}
		}
	}
	if orig == nil {
		return nil, h.notFoundTool(snap, name)
	}
	return json.MarshalIndent(orig, "", "  ")
}

// sourceOf is a server's contribution to the registry, without the tools
// held back.
func sourceOf(sc *config.Server, cat *catalog.Catalog, held map[string]bool) registry.Source {
	prefix := sc.Prefix
	if n := names.Prefix(prefix); n != "" {
		prefix = n // "a_" reads "a__tool", not a hashed name
	}
	tools := cat.Tools
	if len(held) > 0 {
		tools = slices.DeleteFunc(slices.Clone(tools), func(t *mcp.Tool) bool { return held[t.Name] })
	}
	return registry.Source{
		Server:        sc.Name,
		Prefix:        prefix,
		EnabledTools:  sc.EnabledTools,
		DisabledTools: sc.DisabledTools,
		Tools:         tools,
		Resources:     cat.Resources,
		Templates:     cat.Templates,
		Prompts:       cat.Prompts,
	}
}

// notFoundTool explains why name is not a tool, as Call would.
func (h *Host) notFoundTool(snap *registry.Snapshot, name string) error {
	if _, err := h.lookupTool(snap, name); err != nil {
		return err
	}
	return fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no tool %q", name))
}

// distinctive reports whether a tool name is identifier-like (snake_case,
// kebab-case, camelCase, digits) rather than a plain word.
func distinctive(name string) bool {
	for i, c := range name {
		switch {
		case c == '_' || c == '-' || c == '.' || c == '/' || (c >= '0' && c <= '9'):
			return true
		case i > 0 && c >= 'A' && c <= 'Z':
			return true
		}
	}
	return false
}
