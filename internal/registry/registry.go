// Package registry is the aggregate namespace: every tool, resource,
// template and prompt of every connected server, under one set of names.
//
// A Snapshot is immutable; the host builds a new one whenever a server's
// catalogue changes and swaps it in, so readers never lock. Tool filters
// (enabledTools / disabledTools) apply here, at ingestion: a denied tool is
// never registered, so it can be neither listed nor called.
//
// This package does no I/O.
package registry

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// Source is one server's contribution.
type Source struct {
	Server        string
	Prefix        string   // model-facing namespace; "" for pass-through names
	EnabledTools  []string // globs over upstream tool names; nil means all, empty means none
	DisabledTools []string // globs over upstream tool names
	Tools         []*mcp.Tool
	Resources     []*mcp.Resource
	Templates     []*mcp.ResourceTemplate
	Prompts       []*mcp.Prompt
}

// Tool is a registered tool.
type Tool struct {
	Name string   // model-facing, unique, matches names.Valid
	ID   names.ID // canonical identity
	Tool *mcp.Tool
}

// Resource is a registered resource; ID.Name is its URI.
type Resource struct {
	ID       names.ID
	Resource *mcp.Resource
}

// Template is a registered resource template; ID.Name is its URI template.
type Template struct {
	ID       names.ID
	Template *mcp.ResourceTemplate
}

// Prompt is a registered prompt.
type Prompt struct {
	Name   string // model-facing, like a tool's (a separate namespace)
	ID     names.ID
	Prompt *mcp.Prompt
}

// Snapshot is one immutable generation of the namespace.
type Snapshot struct {
	servers       map[string]bool
	tools         []*Tool // sorted by Name
	byName        map[string]*Tool
	byID          map[names.ID]*Tool
	resources     []*Resource
	templates     []*Template
	prompts       []*Prompt
	promptsBy     map[names.ID]*Prompt
	promptsByName map[string]*Prompt

	// Collisions lists model-facing names that several tools (or several
	// prompts) wanted; each got a hashed name instead. The host reports
	// them as warnings.
	Collisions []names.Collision
	// Skipped lists tools left out, with the reason (duplicates within a
	// server, nameless tools).
	Skipped []string
}

// Build assembles a snapshot. servers names every configured server,
// including those without a catalogue (disabled or failed), so that their
// canonical IDs still resolve.
func Build(servers []string, sources []Source) *Snapshot {
	s := &Snapshot{
		servers:       make(map[string]bool, len(servers)),
		byName:        map[string]*Tool{},
		byID:          map[names.ID]*Tool{},
		promptsBy:     map[names.ID]*Prompt{},
		promptsByName: map[string]*Prompt{},
	}
	for _, n := range servers {
		s.servers[n] = true
	}
	var entries, promptEntries []names.Entry
	tools := map[names.ID]*mcp.Tool{}
	for _, src := range sources {
		s.servers[src.Server] = true
		for _, t := range src.Tools {
			if t == nil || t.Name == "" {
				s.Skipped = append(s.Skipped, fmt.Sprintf("server %q: a tool without a name", src.Server))
				continue
			}
			if !allowedTool(t.Name, src.EnabledTools, src.DisabledTools) {
				continue
			}
			id := names.ID{Server: src.Server, Name: t.Name}
			if _, dup := tools[id]; dup {
				s.Skipped = append(s.Skipped, fmt.Sprintf("server %q: duplicate tool %q (first kept)", src.Server, t.Name))
				continue
			}
			tools[id] = t
			entries = append(entries, names.Entry{ID: id, Prefix: src.Prefix})
		}
		for _, r := range src.Resources {
			if r != nil && r.URI != "" {
				s.resources = append(s.resources, &Resource{ID: names.ID{Server: src.Server, Name: r.URI}, Resource: r})
			}
		}
		for _, t := range src.Templates {
			if t != nil && t.URITemplate != "" {
				s.templates = append(s.templates, &Template{ID: names.ID{Server: src.Server, Name: t.URITemplate}, Template: t})
			}
		}
		for _, p := range src.Prompts {
			if p == nil || p.Name == "" {
				continue
			}
			id := names.ID{Server: src.Server, Name: p.Name}
			if _, dup := s.promptsBy[id]; dup {
				continue
			}
			e := &Prompt{ID: id, Prompt: p}
			s.prompts = append(s.prompts, e)
			s.promptsBy[id] = e
			promptEntries = append(promptEntries, names.Entry{ID: id, Prefix: src.Prefix})
		}
	}
	assigned, collisions := names.Assign(entries)
	s.Collisions = collisions
	promptNames, promptCollisions := names.Assign(promptEntries)
	s.Collisions = append(s.Collisions, promptCollisions...)
	for _, p := range s.prompts {
		p.Name = promptNames[p.ID]
		s.promptsByName[p.Name] = p
	}
	for id, name := range assigned {
		t := &Tool{Name: name, ID: id, Tool: tools[id]}
		s.tools = append(s.tools, t)
		s.byName[name] = t
		s.byID[id] = t
	}
	sort.Slice(s.tools, func(i, j int) bool { return s.tools[i].Name < s.tools[j].Name })
	// Resources and templates go by server name, then URI: a URI several
	// servers offer belongs to the first in server-name order, which the
	// canonical ID strings would not give ("memory2:…" sorts before
	// "memory:…" because '2' < ':').
	sort.Slice(s.resources, func(i, j int) bool { return idLess(s.resources[i].ID, s.resources[j].ID) })
	sort.Slice(s.templates, func(i, j int) bool { return idLess(s.templates[i].ID, s.templates[j].ID) })
	sort.Slice(s.prompts, func(i, j int) bool { return s.prompts[i].ID.String() < s.prompts[j].ID.String() })
	return s
}

// AllowedTool reports whether a server's tool passes its filters
// (EnabledTools, DisabledTools). Patterns were validated at config load.
func AllowedTool(name string, enabled, disabled []string) bool {
	return allowedTool(name, enabled, disabled)
}

// allowedTool applies the filters.
func allowedTool(name string, enabled, disabled []string) bool {
	if enabled != nil && !matchAny(enabled, name) {
		return false
	}
	return !matchAny(disabled, name)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// Tools returns every tool, sorted by model-facing name.
func (s *Snapshot) Tools() []*Tool { return s.tools }

// idLess orders IDs by server name, then name.
func idLess(a, b names.ID) bool {
	if a.Server != b.Server {
		return a.Server < b.Server
	}
	return a.Name < b.Name
}

// Resources returns every resource, sorted by server name, then URI.
func (s *Snapshot) Resources() []*Resource { return s.resources }

// Templates returns every resource template, sorted by server name, then
// URI template.
func (s *Snapshot) Templates() []*Template { return s.templates }

// Prompts returns every prompt, sorted by canonical ID.
func (s *Snapshot) Prompts() []*Prompt { return s.prompts }

// HasServer reports whether server is configured.
func (s *Snapshot) HasServer(server string) bool { return s.servers[server] }

// Resolve parses a canonical ID against the configured servers.
func (s *Snapshot) Resolve(id string) (names.ID, bool) {
	return names.Resolve(id, s.HasServer)
}

// Tool finds a tool by model-facing name or canonical ID.
func (s *Snapshot) Tool(name string) (*Tool, bool) {
	if t, ok := s.byName[name]; ok {
		return t, true
	}
	if id, ok := s.Resolve(name); ok {
		t, ok := s.byID[id]
		return t, ok
	}
	return nil, false
}

// Prompt finds a prompt by model-facing name or canonical ID.
func (s *Snapshot) Prompt(id string) (*Prompt, bool) {
	if p, ok := s.promptsByName[id]; ok {
		return p, true
	}
	if pid, ok := s.Resolve(id); ok {
		p, ok := s.promptsBy[pid]
		return p, ok
	}
	return nil, false
}

// ToolNames returns every name a tool can be called by, for suggestions.
func (s *Snapshot) ToolNames() []string {
	out := make([]string, 0, 2*len(s.tools))
	for _, t := range s.tools {
		out = append(out, t.Name, t.ID.String())
	}
	return out
}

// PromptNames returns every prompt's canonical ID.
func (s *Snapshot) PromptNames() []string {
	out := make([]string, 0, len(s.prompts))
	for _, p := range s.prompts {
		out = append(out, p.ID.String())
	}
	return out
}

// Suggest returns the candidate closest to want, or "" when none is close
// enough to be a plausible typo: an edit distance of at most a third of
// want's length, or else the shortest of at most three candidates that
// contain want (a bare tool name typed without its server prefix).
func Suggest(want string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := suggest.Distance(strings.ToLower(want), strings.ToLower(c))
		if bestD < 0 || d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	if best != "" && bestD <= max(2, len(want)/3) {
		return best
	}
	var sub []string
	for _, c := range candidates {
		if want != "" && strings.Contains(strings.ToLower(c), strings.ToLower(want)) {
			sub = append(sub, c)
		}
	}
	if len(sub) == 0 || len(sub) > 3 {
		return ""
	}
	sort.Slice(sub, func(i, j int) bool { return len(sub[i]) < len(sub[j]) || len(sub[i]) == len(sub[j]) && sub[i] < sub[j] })
	return sub[0]
}
