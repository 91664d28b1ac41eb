package host

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/drift"
	"github.com/switchboard-mcp/switchboard/internal/ingest"
	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/registry"
	"github.com/switchboard-mcp/switchboard/internal/sanitize"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Finding is one thing Switchboard changed, refused or noticed in what a
// server advertised: stripped characters, a rejected schema, a withheld or
// held-back tool, a description that matches an injection pattern. Its
// Kind is one of the Kind constants, stable across versions, and its
// Severity one of the severities.
type Finding = ingest.Finding

// Severity says how much a Finding matters: SeverityInfo findings are
// shown on request, SeverityWarn and SeverityHigh ones without asking.
type Severity = ingest.Severity

// The severities, lowest first.
const (
	SeverityInfo = ingest.SeverityInfo
	SeverityWarn = ingest.SeverityWarn
	SeverityHigh = ingest.SeverityHigh
)

// vet checks a freshly listed catalogue under the security settings in
// force and logs what it found. It returns the vetted catalogue; the
// caller stores it under the server's lock.
func (h *Host) vet(sc *config.Server, cat *catalog.Catalog) *ingest.Result {
	return h.vetUnder(h.config().Security, sc, cat)
}

// vetUnder is vet under the security settings sec.
func (h *Host) vetUnder(sec config.Security, sc *config.Server, cat *catalog.Catalog) *ingest.Result {
	res := ingest.Vet(sc, sec, cat)
	h.logVetted(sc.Name, res.Findings)
	return res
}

// logVetted logs a server's findings: each of severity warn and above
// on its own line, the info ones as one line that counts them by kind (a
// server whose forty tools lose their hints is one line, not forty), each
// also at debug level.
func (h *Host) logVetted(server string, findings []Finding) {
	counts := map[string]int{}
	for _, f := range findings {
		if f.Severity.AtLeast(ingest.SeverityWarn) {
			h.logFinding(f)
			continue
		}
		counts[f.Kind]++
		h.log.Debug("server metadata: "+f.Kind, "server", f.Server, "item", f.Item, "detail", f.Detail, "severity", f.Severity)
	}
	if len(counts) == 0 {
		return
	}
	kinds := slices.Sorted(maps.Keys(counts))
	var b strings.Builder
	n := 0
	for _, k := range kinds {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, counts[k])
		n += counts[k]
	}
	h.log.Info("server metadata: info findings", "server", server, "count", n, "kinds", b.String())
}

// flagAndHold scans every server's cleaned metadata for injection patterns,
// against the names of the other servers and their tools, and returns the
// tools to hold back by server, and the store writes to make (the held
// definitions, for `switchboard diff` and `approve`). A flagged tool of a
// server that is not trusted is held back in strict mode (no approval
// releases it), and under security.onInjection "hold" until a person
// approves its definition (see holdInjections). New findings are
// logged, and each newly flagged item of a freshly discovered catalogue
// costs its server a trust score step; all are kept for Findings. cats are the servers' vetted
// catalogues by name. Called with h.mu held (by rebuild).
func (h *Host) flagAndHold(comp *composition, cats map[string]*catalog.Catalog) (map[string]map[string]bool, []driftWrite) {
	flagged, toolOwners := scanServers(comp.cfg.Servers, cats)
	onInjection := comp.cfg.Security.WithDefaults().OnInjection
	held := map[string]map[string]bool{}
	var writes []driftWrite
	for _, sc := range comp.cfg.Servers {
		s := comp.servers[sc.Name]
		cat := cats[sc.Name]
		if cat == nil {
			continue
		}
		byTool, findings := flagged[sc.Name].byTool, flagged[sc.Name].findings
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
				findings = append(findings, ingest.NewFinding(sc.Name, ingest.KindShadowing, fmt.Sprintf("tool %q", t.Name),
					fmt.Sprintf("server(s) %s offer a tool of the same name", strings.Join(rest, ", "))))
			}
		}
		untrusted := sc.Trust.Level() != config.TrustTrusted
		var hold map[string]bool
		switch {
		case untrusted && sc.Strict:
			for tool := range byTool {
				if hold == nil {
					hold = map[string]bool{}
				}
				hold[tool] = true
				findings = append(findings, ingest.NewFinding(sc.Name, ingest.KindWithheld, fmt.Sprintf("tool %q", tool),
					"held back: its metadata matches an injection pattern and the server is not trusted (strict mode)"))
			}
			s.holds.clearInjections()
		case untrusted && onInjection == config.InjectionHold:
			var w []driftWrite
			hold, w = s.holds.holdInjections(h, sc, cat, byTool, findings)
			writes = append(writes, w...)
			for tool := range hold {
				findings = append(findings, ingest.NewFinding(sc.Name, ingest.KindHeld, fmt.Sprintf("tool %q", tool),
					"held back: its metadata matches an injection pattern and the server is not trusted; "+h.releaseHint(names.ID{Server: sc.Name, Name: tool})))
			}
		default:
			s.holds.clearInjections()
		}
		if len(hold) > 0 {
			held[sc.Name] = hold
		}
		slices.SortFunc(findings, func(a, b Finding) int { return strings.Compare(a.String(), b.String()) })
		live := !s.cat.isCached() // a catalogue read back from the store was charged when it was discovered
		fresh := s.cat.setFlags(findings)
		h.logVetted(sc.Name, fresh)
		for _, f := range fresh {
			if live && f.Kind == ingest.KindFlagged && f.Severity.AtLeast(ingest.SeverityWarn) {
				s.trust.add(outcomeFlagged) // each newly flagged item costs a step, once
			}
		}
	}
	return held, writes
}

// scanned is what the injection scanner found in one server's metadata:
// the flags of each flagged tool and a finding per flag.
type scanned struct {
	byTool   map[string][]sanitize.Flag
	findings []Finding
}

// scanServers scans the metadata of every server that has a catalogue in
// cats (vetted: cleaned) for injection patterns, against the names of the
// other servers and of their tools (shadowing). It also returns, by tool
// name, the servers offering a tool of that name. No I/O: the host's
// decision to hold a tool starts here, and the false-hold measurement on
// real servers' tool lists runs it as it is.
func scanServers(servers []*config.Server, cats map[string]*catalog.Catalog) (map[string]scanned, map[string][]string) {
	// Every server's names, to spot a description that talks about
	// another server's tools (shadowing).
	owners := map[string][]string{} // lower-cased name → servers using it
	toolOwners := map[string][]string{}
	for _, sc := range servers {
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
	out := map[string]scanned{}
	for _, sc := range servers {
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
		out[sc.Name] = scanned{byTool, findings}
	}
	return out, toolOwners
}

// holdInjectionsLocked decides which of a server's flagged tools (byTool)
// are held back under security.onInjection "hold": every one whose current
// definition has not been approved. An approval is a pin under
// ingest.ApprovalKey(tool) with the hash of the definition approved, so a
// later change holds the tool again; the first sight of a tool, which pins
// it for drift automatically, approves nothing here. A held definition is
// saved as a drift under the same key, which `switchboard diff` shows and
// `switchboard approve server:tool` pins. The flagged findings of an
// approved tool become SeverityInfo: a person has read them.
func (p *holds) holdInjections(h *Host, sc *config.Server, cat *catalog.Catalog, byTool map[string][]sanitize.Flag, findings []Finding) (map[string]bool, []driftWrite) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hold := map[string]bool{}
	heldNow := map[string]string{}
	var writes []driftWrite
	for _, t := range cat.Tools {
		if !ingest.Directive(byTool[t.Name]) {
			continue // not flagged, or only for mentions
		}
		def, err := drift.Definition(t)
		if err != nil {
			def = []byte(fmt.Sprintf("%q", "unpinnable: "+err.Error()))
		}
		hash := drift.Hash(def)
		key := ingest.ApprovalKey(t.Name)
		if p.pins != nil && p.pins[key] == hash {
			item := fmt.Sprintf("tool %q", t.Name)
			for i := range findings {
				if findings[i].Item == item && findings[i].Kind == ingest.KindFlagged {
					findings[i].Severity = ingest.SeverityInfo
					findings[i].Detail += " (approved)"
				}
			}
			continue
		}
		hold[t.Name] = true
		heldNow[t.Name] = hash
		if p.injHeld[t.Name] != hash && h.store != nil {
			writes = append(writes, driftWrite{drift: &store.Drift{Server: sc.Name, Tool: key, Hash: hash, Definition: def}})
		}
	}
	p.injHeld = heldNow
	return hold, writes
}

// releaseHint says how a person releases a tool held for an injection
// pattern.
func (h *Host) releaseHint(id names.ID) string {
	if h.store == nil {
		return `no state store keeps approvals here: trust the server, or set "security": {"onInjection": "flag"}`
	}
	return fmt.Sprintf("review it with `switchboard diff %s`, release it with `switchboard approve %s`", id, id)
}

// logFinding logs a finding at the level its severity calls for.
func (h *Host) logFinding(f Finding) {
	level := slog.LevelWarn
	if !f.Severity.AtLeast(ingest.SeverityWarn) {
		level = slog.LevelInfo
	}
	h.log.Log(context.Background(), level, "server metadata: "+f.Kind, "server", f.Server, "item", f.Item, "detail", f.Detail, "severity", f.Severity)
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
		if f, ok := launchFinding(sc.Name, v); ok {
			out = append(out, f)
		}
		out = append(out, sandboxFindings(sc.Name, sandboxStatus(sc, &v))...)
	}
	return out
}

// rawTool returns a tool's definition exactly as its server sent it, before
// Switchboard cleaned it, for an operator to inspect; never show it to a
// model. name is a model-facing name or a canonical ID "server:tool", which
// also finds tools that were refused or held back.
func (h *Host) rawTool(name string) (json.RawMessage, error) {
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
