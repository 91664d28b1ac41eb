// Package ingest vets what one server advertises before the host registers
// it: every tool, prompt, resource and template, and the server's
// instructions, are treated as untrusted input.
//
// Vet strips invisible and control characters from descriptions, titles
// and instructions and caps their size (internal/sanitize); rejects a tool
// or prompt whose *name* carries such characters; checks and normalises
// input and output schemas (internal/schema), never fetching a $ref; skips
// nameless entries and duplicates within the server; caps the number of
// tools; withholds tools outside the server's expectedTools attestation
// unless the server is trusted; and, for servers that are not trusted,
// drops the behavioural annotations a client might use to relax its own
// checks. Each thing it changed or refused is a Finding with a Severity
// (info, warn or high, by kind), and one bad entry never costs the others.
//
// Vet works on one server at a time; findings that need every server's
// names (a description that mentions another server's tools) are the
// host's, through [Flags]. This package does no I/O and keeps nothing: the
// caller stores the Result.
package ingest

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/sanitize"
	"github.com/switchboard-mcp/switchboard/internal/schema"
)

// Finding kinds. They are stable strings: they appear in logs, in the
// CLI's --json output and in tests.
const (
	KindListSkipped  = "list_entry_skipped"  // an entry the SDK could not decode at all
	KindNameRejected = "name_rejected"       // a name with invisible or control characters, or none
	KindDuplicate    = "duplicate"           // a second entry with the same name within the server
	KindSchema       = "schema_rejected"     // an input or output schema failed the checks
	KindSanitised    = "sanitised"           // characters were stripped from text
	KindTruncated    = "truncated"           // text was cut to its cap
	KindTooMany      = "too_many_tools"      // tools beyond maxToolsPerServer were dropped
	KindUnexpected   = "unexpected_tool"     // a tool outside expectedTools
	KindWithheld     = "withheld"            // not registered (see Detail)
	KindFlagged      = "flagged"             // text matches an injection pattern
	KindAnnotations  = "annotations_dropped" // behavioural hints of a server that is not trusted
	KindShadowing    = "shadowing"           // another server offers a tool of the same name
	KindHeld         = "held"                // held back until approved: its metadata matches an injection pattern
	KindListMissing  = "list_missing"        // a declared list method answered "method not found": taken as empty
	KindListFailed   = "list_failed"         // a list other than tools answered an error: taken as empty until the next discovery
	KindStdoutStray  = "stdout_not_jsonrpc"  // a stdio server wrote lines on stdout that are not JSON-RPC: skipped
)

// maxFailedNote caps the server's error text kept in a list_failed
// finding.
const maxFailedNote = 300

// Severity says how much a finding matters to an operator. Findings of
// SeverityWarn and above are shown without asking (the CLI prints them,
// the gateway logs them); SeverityInfo ones only on request (servers -v,
// --json).
type Severity string

// The severities, lowest first.
const (
	// SeverityInfo: Switchboard changed something as it always does for
	// a server that is not trusted, or harmlessly (hints dropped, emoji
	// variation selectors stripped, a long text cut, a duplicate skipped).
	SeverityInfo Severity = "info"
	// SeverityWarn: something was refused or looks suspicious; the rest
	// of the server works.
	SeverityWarn Severity = "warn"
	// SeverityHigh: a tool is held back until a person decides.
	SeverityHigh Severity = "high"
)

// severities is the severity of each kind of finding.
var severities = map[string]Severity{
	KindListSkipped:  SeverityWarn,
	KindNameRejected: SeverityWarn,
	KindDuplicate:    SeverityInfo,
	KindSchema:       SeverityWarn,
	KindSanitised:    SeverityInfo,
	KindTruncated:    SeverityInfo,
	KindTooMany:      SeverityWarn,
	KindUnexpected:   SeverityWarn,
	KindWithheld:     SeverityWarn,
	KindFlagged:      SeverityWarn,
	KindAnnotations:  SeverityInfo,
	KindShadowing:    SeverityWarn,
	KindHeld:         SeverityHigh,
	KindListMissing:  SeverityInfo,
	KindListFailed:   SeverityWarn,
	KindStdoutStray:  SeverityInfo,
}

// SeverityOf returns the severity of a kind of finding; an unknown kind is
// SeverityWarn.
func SeverityOf(kind string) Severity {
	if s, ok := severities[kind]; ok {
		return s
	}
	return SeverityWarn
}

func (s Severity) rank() int {
	switch s {
	case SeverityInfo:
		return 0
	case SeverityHigh:
		return 2
	}
	return 1
}

// AtLeast reports whether s is min or above. An unknown severity counts as
// SeverityWarn.
func (s Severity) AtLeast(min Severity) bool { return s.rank() >= min.rank() }

// Finding is one thing Vet (or Flags) changed, refused or noticed.
type Finding struct {
	Server string `json:"server"`
	Kind   string `json:"kind"`
	// Item names the tool, prompt, resource or template ("tool \"x\""),
	// escaped; "" for the server itself (its instructions).
	Item   string `json:"item,omitempty"`
	Detail string `json:"detail"`
	// Severity is SeverityOf(Kind) unless the finder knew better (a
	// flagged tool that a person approved is SeverityInfo).
	Severity Severity `json:"severity"`
}

// NewFinding returns a finding with its kind's severity.
func NewFinding(server, kind, item, detail string) Finding {
	return Finding{Server: server, Kind: kind, Item: item, Detail: detail, Severity: SeverityOf(kind)}
}

func (f Finding) String() string {
	s := fmt.Sprintf("server %q", f.Server)
	if f.Item != "" {
		s += ": " + f.Item
	}
	return s + ": " + f.Kind + ": " + f.Detail
}

// Result is a vetted catalogue.
type Result struct {
	// Catalog holds the entries that survived, cleaned. Tools' input
	// and output schemas are json.RawMessage, normalised.
	Catalog *catalog.Catalog
	// Originals are the tools as the server sent them, by upstream name,
	// including the ones that were refused, for an operator's inspection
	// (switchboard tools --raw). Never shown to a model.
	Originals map[string]*mcp.Tool
	Findings  []Finding
}

// Vet checks one server's catalogue. cat is not modified.
func Vet(s *config.Server, sec config.Security, cat *catalog.Catalog) *Result {
	sec = sec.WithDefaults()
	v := &vetter{server: s, sec: sec, trusted: s.Trust.Level() == config.TrustTrusted}
	out := &catalog.Catalog{}
	res := &Result{Catalog: out, Originals: map[string]*mcp.Tool{}}
	for _, note := range cat.Skipped {
		v.add(KindListSkipped, "", note)
	}
	for _, method := range cat.Missing {
		v.add(KindListMissing, "", method+" is declared but not implemented (method not found): taken as empty")
	}
	for _, note := range cat.Failed {
		// The server's own words: untrusted text, stripped and capped.
		clean, _ := sanitize.Strip(note)
		clean, _ = sanitize.Text(clean, maxFailedNote)
		v.add(KindListFailed, "", clean+" (taken as empty until the next discovery)")
	}
	if cat.Stray != "" {
		v.add(KindStdoutStray, "", cat.Stray)
	}
	out.Instructions = v.text(cat.Instructions, sec.InstructionsMaxBytes, "", "instructions")

	seen := map[string]bool{}
	for _, t := range cat.Tools {
		if t == nil {
			continue
		}
		if _, dup := res.Originals[t.Name]; !dup {
			res.Originals[t.Name] = t
		}
		item := "tool " + strconv.Quote(t.Name)
		if err := sanitize.CheckName(t.Name); err != nil {
			v.add(KindNameRejected, item, err.Error())
			continue
		}
		if seen[t.Name] {
			v.add(KindDuplicate, item, "the server lists this name more than once; the first is kept")
			continue
		}
		seen[t.Name] = true
		if len(out.Tools) >= sec.MaxToolsPerServer {
			v.add(KindTooMany, "", fmt.Sprintf("the server lists more than %d tools (security.maxToolsPerServer); the rest are dropped, starting with %s", sec.MaxToolsPerServer, item))
			break
		}
		if s.ExpectedTools != nil && !matchAny(s.ExpectedTools, t.Name) {
			if v.trusted {
				v.add(KindUnexpected, item, "not in the server's expectedTools; registered because the server is trusted")
			} else {
				v.add(KindUnexpected, item, "not in the server's expectedTools")
				v.add(KindWithheld, item, "unexpected tools of a server that is not trusted are not registered")
				continue
			}
		}
		if c := v.tool(t, item); c != nil {
			out.Tools = append(out.Tools, c)
		}
	}

	seenPrompts := map[string]bool{}
	for _, p := range cat.Prompts {
		if p == nil {
			continue
		}
		item := "prompt " + strconv.Quote(p.Name)
		if err := sanitize.CheckName(p.Name); err != nil {
			v.add(KindNameRejected, item, err.Error())
			continue
		}
		if seenPrompts[p.Name] {
			v.add(KindDuplicate, item, "the server lists this name more than once; the first is kept")
			continue
		}
		seenPrompts[p.Name] = true
		out.Prompts = append(out.Prompts, v.prompt(p, item))
	}
	for _, r := range cat.Resources {
		if r == nil || r.URI == "" {
			continue
		}
		c := *r
		item := "resource " + strconv.Quote(r.URI)
		c.Name = v.text(r.Name, sec.DescriptionMaxBytes, item, "name")
		c.Title = v.text(r.Title, sec.DescriptionMaxBytes, item, "title")
		c.Description = v.text(r.Description, sec.DescriptionMaxBytes, item, "description")
		out.Resources = append(out.Resources, &c)
	}
	for _, r := range cat.Templates {
		if r == nil || r.URITemplate == "" {
			continue
		}
		c := *r
		item := "resource template " + strconv.Quote(r.URITemplate)
		c.Name = v.text(r.Name, sec.DescriptionMaxBytes, item, "name")
		c.Title = v.text(r.Title, sec.DescriptionMaxBytes, item, "title")
		c.Description = v.text(r.Description, sec.DescriptionMaxBytes, item, "description")
		out.Templates = append(out.Templates, &c)
	}
	res.Findings = v.findings
	return res
}

type vetter struct {
	server   *config.Server
	sec      config.Security
	trusted  bool
	findings []Finding
}

func (v *vetter) add(kind, item, detail string) {
	v.findings = append(v.findings, NewFinding(v.server.Name, kind, item, detail))
}

// text strips and caps one text field, noting what changed.
func (v *vetter) text(s string, max int, item, field string) string {
	if s == "" {
		return s
	}
	clean, removed := sanitize.Strip(s)
	if removed > 0 {
		v.add(KindSanitised, item, fmt.Sprintf("%s: %d invisible or control characters removed", field, removed))
	}
	if len(clean) > max {
		v.add(KindTruncated, item, fmt.Sprintf("%s: %d bytes cut to %d", field, len(clean), max))
		clean, _ = sanitize.Text(clean, max)
	}
	return clean
}

// tool returns a cleaned copy of t, or nil when it is refused.
func (v *vetter) tool(t *mcp.Tool, item string) *mcp.Tool {
	limits := schema.Limits{MaxDepth: v.sec.SchemaMaxDepth, MaxBytes: v.sec.SchemaMaxBytes, MaxSubschemas: v.sec.SchemaMaxSubschemas}
	in, err := schemaBytes(t.InputSchema)
	if err == nil {
		in, err = schema.Input(in, limits)
	}
	if err != nil {
		v.add(KindSchema, item, "inputSchema: "+err.Error())
		return nil
	}
	var outSchema json.RawMessage
	if t.OutputSchema != nil {
		raw, err := schemaBytes(t.OutputSchema)
		if err == nil {
			outSchema, err = schema.Output(raw, limits)
		}
		if err != nil {
			v.add(KindSchema, item, "outputSchema: "+err.Error())
			return nil
		}
	}
	c := *t
	c.InputSchema = json.RawMessage(in)
	if outSchema != nil {
		c.OutputSchema = outSchema
	} else {
		c.OutputSchema = nil
	}
	c.Title = v.text(t.Title, v.sec.DescriptionMaxBytes, item, "title")
	c.Description = v.text(t.Description, v.sec.DescriptionMaxBytes, item, "description")
	if t.Annotations != nil {
		a := *t.Annotations
		a.Title = v.text(a.Title, v.sec.DescriptionMaxBytes, item, "annotations.title")
		if !v.trusted && (a.ReadOnlyHint || a.DestructiveHint != nil || a.IdempotentHint || a.OpenWorldHint != nil) {
			// A client may skip its own confirmation for a tool that
			// says it is read-only: only a trusted server may say so.
			a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint = false, nil, false, nil
			v.add(KindAnnotations, item, "behavioural hints of a server that is not trusted are not passed on")
		}
		c.Annotations = &a
	}
	return &c
}

func (v *vetter) prompt(p *mcp.Prompt, item string) *mcp.Prompt {
	c := *p
	c.Title = v.text(p.Title, v.sec.DescriptionMaxBytes, item, "title")
	c.Description = v.text(p.Description, v.sec.DescriptionMaxBytes, item, "description")
	if len(p.Arguments) > 0 {
		c.Arguments = make([]*mcp.PromptArgument, 0, len(p.Arguments))
		for _, a := range p.Arguments {
			if a == nil {
				continue
			}
			ac := *a
			ac.Title = v.text(a.Title, v.sec.DescriptionMaxBytes, item, "argument title")
			ac.Description = v.text(a.Description, v.sec.DescriptionMaxBytes, item, "argument description")
			c.Arguments = append(c.Arguments, &ac)
		}
	}
	return &c
}

// schemaBytes returns a schema as JSON. go-sdk decodes a listed tool's
// schema into a generic value, so it is encoded again (bounded: go-sdk
// refuses messages nested deeper than 1000 levels before they get here).
func schemaBytes(s any) ([]byte, error) {
	switch v := s.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return v, nil
	case []byte:
		return v, nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("cannot be encoded: %w", err)
	}
	return b, nil
}

func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// Flags scans cleaned text for injection patterns: tool descriptions and
// titles, prompt descriptions and the server's instructions. others are
// the names of other servers and of their tools (mentions of them are
// flagged as "cross_server"); names this server also uses are left out by
// the caller. It returns, per tool name, the rules that matched (for the
// host's strict mode), and a Finding per match.
func Flags(server string, cat *catalog.Catalog, others []string) (map[string][]sanitize.Flag, []Finding) {
	sc := sanitize.NewScanner(others)
	byTool := map[string][]sanitize.Flag{}
	var findings []Finding
	report := func(item string, flags []sanitize.Flag) {
		for _, f := range flags {
			fd := NewFinding(server, KindFlagged, item, f.String())
			if f.Mention {
				// A credential or another server named in plain prose:
				// honest descriptions do it all the time.
				fd.Severity = SeverityInfo
			}
			findings = append(findings, fd)
		}
	}
	for _, t := range cat.Tools {
		flags := sc.Scan(t.Title + "\n" + t.Description + "\n" + paramText(t.InputSchema))
		if len(flags) > 0 {
			byTool[t.Name] = flags
			report("tool "+strconv.Quote(t.Name), flags)
		}
	}
	for _, p := range cat.Prompts {
		report("prompt "+strconv.Quote(p.Name), sc.Scan(p.Title+"\n"+p.Description))
	}
	if cat.Instructions != "" {
		report("", sc.Scan(cat.Instructions))
	}
	return byTool, findings
}

// Directive reports whether flags hold a directive to the model (a flag
// that is not a mention, see sanitize.Flag): what a host holds a tool for
// until a person approves it.
func Directive(flags []sanitize.Flag) bool {
	for _, f := range flags {
		if !f.Mention {
			return true
		}
	}
	return false
}

// approvalPrefix starts the store key of an approved injection finding.
// Tool names never hold control characters (sanitize.CheckName rejects
// them), so the key cannot be a tool's.
const approvalPrefix = "\x1einjection:"

// ApprovalKey is the key under which a person's approval of tool's flagged
// definition is pinned, beside the tool's own drift pin (whose key is the
// tool's name): the two are kept apart because the first sight of a tool
// pins it automatically, which must not count as approving an injection.
func ApprovalKey(tool string) string { return approvalPrefix + tool }

// ApprovalTool returns the tool an ApprovalKey names, and whether key is
// one.
func ApprovalTool(key string) (string, bool) { return strings.CutPrefix(key, approvalPrefix) }

// paramText collects the descriptions in a (normalised) input schema's
// top-level properties, where poisoned tools hide text too.
func paramText(s any) string {
	raw, ok := s.(json.RawMessage)
	if !ok {
		return ""
	}
	var obj struct {
		Properties map[string]struct {
			Description string `json:"description"`
			Title       string `json:"title"`
		} `json:"properties"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	out := ""
	for _, p := range obj.Properties {
		out += p.Title + "\n" + p.Description + "\n"
	}
	return out
}
