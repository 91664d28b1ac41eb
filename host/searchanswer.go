package host

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// What tool_search answers a model: each tool found once, as text, in a
// compact form: its name with a signature of its parameters (required
// first, "?" marks an optional one), its description, and a line of the
// parameters' own descriptions, each cut short. tool_describe gives one
// tool's full definition. Held tools are named with their server only.

const (
	maxAnswerDescription = 400 // a tool's description in an answer, in bytes
	maxSignature         = 360 // a tool's signature
	maxParamNote         = 80  // one parameter's description
	maxParamNotes        = 360 // the line of a tool's parameter descriptions
	maxEnumShown         = 5   // enum values written before "|…"
	maxSummaryServers    = 8   // servers named in tool_search's description and weak answers
)

// sigSchema is what a signature reads of a JSON Schema.
type sigSchema struct {
	Type        any                   `json:"type"` // a string or a list of them
	Properties  map[string]*sigSchema `json:"properties"`
	Required    []string              `json:"required"`
	Items       *sigSchema            `json:"items"`
	Enum        []json.RawMessage     `json:"enum"`
	Const       json.RawMessage       `json:"const"`
	AnyOf       []*sigSchema          `json:"anyOf"`
	OneOf       []*sigSchema          `json:"oneOf"`
	Ref         string                `json:"$ref"`
	Description string                `json:"description"`
}

// params returns the schema's parameters, required ones first, each group
// by name, and whether each is required.
func (s *sigSchema) params() (names []string, required map[string]bool) {
	required = map[string]bool{}
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; ok {
			required[r] = true
		}
	}
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if required[a] != required[b] {
			if required[a] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return names, required
}

// typeString is s's type in a signature: "string", "number[]",
// "\"a\"|\"b\"", "{id: string, tags?: string[]}" (one level of objects
// spelled out), "any".
func typeString(s *sigSchema, depth int) string {
	if s == nil {
		return "any"
	}
	switch {
	case len(s.Enum) > 0:
		vals := make([]string, 0, min(len(s.Enum), maxEnumShown)+1)
		for i, e := range s.Enum {
			if i == maxEnumShown {
				vals = append(vals, "…")
				break
			}
			vals = append(vals, cut(string(e), 40))
		}
		return strings.Join(vals, "|")
	case len(s.Const) > 0:
		return cut(string(s.Const), 40)
	case len(s.AnyOf) > 0 || len(s.OneOf) > 0:
		var alts []string
		for _, a := range append(append([]*sigSchema(nil), s.AnyOf...), s.OneOf...) {
			if t := typeString(a, depth); !slices.Contains(alts, t) {
				alts = append(alts, t)
			}
		}
		return strings.Join(alts, "|")
	case s.Ref != "":
		return "object"
	}
	var types []string
	switch t := s.Type.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok && str != "null" {
				types = append(types, str)
			}
		}
	}
	if len(types) == 0 {
		if len(s.Properties) > 0 {
			types = []string{"object"}
		} else {
			return "any"
		}
	}
	out := make([]string, 0, len(types))
	for _, t := range types {
		switch t {
		case "array":
			it := typeString(s.Items, depth+1)
			if strings.Contains(it, "|") {
				it = "(" + it + ")"
			}
			out = append(out, it+"[]")
		case "object":
			if depth > 0 || len(s.Properties) == 0 {
				out = append(out, "object")
				continue
			}
			names, req := s.params()
			fields := make([]string, 0, len(names))
			for _, n := range names {
				opt := "?"
				if req[n] {
					opt = ""
				}
				fields = append(fields, n+opt+": "+typeString(s.Properties[n], depth+1))
			}
			out = append(out, "{"+strings.Join(fields, ", ")+"}")
		default:
			out = append(out, t)
		}
	}
	return strings.Join(out, "|")
}

// signature is a tool's name with its parameters: "name(a: string,
// b?: integer)", cut short with "…" past maxSignature, and the line of
// its parameters' descriptions ("" when none has one).
func signature(name string, schema json.RawMessage) (sig, notes string) {
	var s sigSchema
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return name + "(…)", ""
	}
	names, req := s.params()
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('(')
	var ns []string
	for i, n := range names {
		opt := "?"
		if req[n] {
			opt = ""
		}
		p := n + opt + ": " + typeString(s.Properties[n], 0)
		if i > 0 {
			p = ", " + p
		}
		if b.Len()+len(p) > maxSignature {
			b.WriteString(", …")
			break
		}
		b.WriteString(p)
	}
	b.WriteByte(')')
	for _, n := range names {
		if d := oneLine(s.Properties[n].Description); d != "" {
			ns = append(ns, n+": "+cut(d, maxParamNote))
		}
	}
	return b.String(), cut(strings.Join(ns, "; "), maxParamNotes)
}

// searchAnswer is tool_search's text: the tools found, in the compact
// form, then the held ones by name and server.
func searchAnswer(query, server string, hits []Tool, searched int) string {
	var found, held []Tool
	for _, t := range hits {
		if t.Held {
			held = append(held, t)
		} else {
			found = append(found, t)
		}
	}
	var b strings.Builder
	scope := ""
	if server != "" {
		scope = fmt.Sprintf(" of server %q", server)
	}
	switch len(found) {
	case 0:
		fmt.Fprintf(&b, "No tool%s matches %q (%d searched).", scope, query, searched)
	default:
		fmt.Fprintf(&b, "%s%s for %q (of %d). Call one by its name; %s NAME gives a tool's full input schema.",
			plural(len(found), "tool"), scope, query, searched, DescribeTool)
	}
	for _, t := range found {
		sig, notes := signature(t.Name, t.InputSchema)
		b.WriteString("\n\n")
		b.WriteString(sig)
		if d := oneLine(t.Description); d != "" {
			b.WriteString("\n  ")
			b.WriteString(cut(d, maxAnswerDescription))
		}
		if notes != "" {
			b.WriteString("\n  Parameters: ")
			b.WriteString(notes)
		}
	}
	if len(held) > 0 {
		b.WriteString("\n\nHeld for review, not callable for now: ")
		for i, t := range held {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s (server %s)", t.Name, t.Server)
		}
	}
	return b.String()
}

// weakHint follows an answer whose tools answer little of the request:
// what the search reaches, so that the model can ask again in other words
// or of one server, instead of trying tools that only look alike.
func weakHint(summary string) string {
	if summary == "" {
		return "\n\nLittle of the request is in any tool here."
	}
	return "\n\nLittle of the request is in any tool here. This searches " + summary +
		`; say it in other words, or search one server ("server": NAME).`
}

// oneLine is s with its runs of white space, new lines included, made one
// space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cut is s cut to at most n bytes at a rune boundary, with "…" when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return strings.TrimRight(s[:i], " ") + "…"
}

// plural is "1 tool", "2 tools".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// searchDescription is tool_search's description, naming what it searches
// (summary, from serverSummary; "" says nothing of it).
func searchDescription(summary string) string {
	d := "Find tools by what they do, in plain words (\"create a folder\", \"search issues\"): more tools are available than are listed. " +
		"Returns the best matches with their parameters; a tool found can then be called by its name."
	if summary != "" {
		d += " Searches " + summary + "."
	}
	return d
}

// serverSummary says which tools a view's search reaches. With most > 0
// it is one line for a description: "the 219 tools of github (26),
// filesystem (14) and 3 more servers (tool_servers lists them)", the
// servers with the most tools first, at most most of them; "" when the
// view has no tools. With most == 0 it is tool_servers' answer: a line per
// server with tools, in name order: its name, the first sentence of its
// instructions (unless they are held for review), and its tool count.
func (h *Host) serverSummary(v *View, most int) string {
	counts := map[string]int{}
	total := 0
	sc := v.scope()
	for _, t := range h.snapshot().Tools() {
		if sc.hasTool(t) {
			counts[t.ID.Server]++
			total++
		}
	}
	if total == 0 {
		if most > 0 {
			return ""
		}
		return "No server has tools here."
	}
	servers := make([]string, 0, len(counts))
	for s := range counts {
		servers = append(servers, s)
	}
	if most == 0 {
		slices.Sort(servers)
		comp := h.comp.Load()
		var b strings.Builder
		for i, name := range servers {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(name)
			if s := comp.servers[name]; s != nil {
				if about := firstSentence(s.view()); about != "" {
					b.WriteString(": ")
					b.WriteString(about)
				}
			}
			fmt.Fprintf(&b, " (%s)", plural(counts[name], "tool"))
		}
		return b.String()
	}
	slices.SortFunc(servers, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	shown := servers[:min(most, len(servers))]
	parts := make([]string, len(shown))
	for i, s := range shown {
		parts[i] = fmt.Sprintf("%s (%d)", s, counts[s])
	}
	list := strings.Join(parts, ", ")
	if rest := len(servers) - len(shown); rest > 0 {
		list += fmt.Sprintf(" and %s (%s lists them)", plural(rest, "more server"), ListServersTool)
	}
	return fmt.Sprintf("the %s of %s", plural(total, "tool"), list)
}

// maxAbout caps what tool_servers says a server is for.
const maxAbout = 120

// firstSentence is the first sentence of a server's vetted instructions,
// cut to maxAbout; "" when it has none or they are held for review.
func firstSentence(sv serverView) string {
	if sv.catalog == nil || slices.Contains(sv.held, "") {
		return ""
	}
	s := oneLine(sv.catalog.Instructions)
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return cut(s, maxAbout)
}

// countTools is how many tools the view's search reaches, of server
// unless it is "".
func (v *View) countTools(server string) int {
	n := 0
	sc := v.scope()
	for _, t := range v.h.snapshot().Tools() {
		if sc.hasTool(t) && (server == "" || t.ID.Server == server) {
			n++
		}
	}
	return n
}
