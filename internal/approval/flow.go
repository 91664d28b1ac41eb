package approval

import (
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/policy"
)

// The data-flow labels of a tool. A call's result carries its tool's
// Private and Untrusted labels into the flow; Outward is what the rule
// checks before a call.
const (
	// Private: the tool reads private data (a private repository, files,
	// messages, a database).
	Private = "private"
	// Untrusted: the tool brings in content anyone could have written (a
	// web page, an issue, an e-mail, a support ticket).
	Untrusted = "untrusted"
	// Outward: the tool talks to the outside (a pull request, a message,
	// a request to a URL), so what it is given may leave.
	Outward = "outward"
)

// Set is a tool's labels.
type Set struct{ Private, Untrusted, Outward bool }

// Has reports whether s holds label.
func (s Set) Has(label string) bool {
	switch label {
	case Private:
		return s.Private
	case Untrusted:
		return s.Untrusted
	case Outward:
		return s.Outward
	}
	return false
}

// String lists s's labels, "-" for none.
func (s Set) String() string {
	var out []string
	for _, l := range []string{Private, Untrusted, Outward} {
		if s.Has(l) {
			out = append(out, l)
		}
	}
	if out == nil {
		return "-"
	}
	return strings.Join(out, ",")
}

func setOf(labels []string) Set {
	var s Set
	for _, l := range labels {
		switch l {
		case Private:
			s.Private = true
		case Untrusted:
			s.Untrusted = true
		case Outward:
			s.Outward = true
		}
	}
	return s
}

// LabelRule labels the tools whose canonical IDs match Pattern.
type LabelRule struct {
	Pattern string
	Labels  []string
}

type compiledLabel struct {
	glob policy.Glob
	set  Set
}

// Labeler gives tools their labels: the first configured rule that
// matches, else the preset of the tool's server, else defaults from its
// annotations and trust.
type Labeler struct {
	rules   []compiledLabel
	presets bool
}

// NewLabeler compiles rules; presets says whether the built-in presets
// apply.
func NewLabeler(rules []LabelRule, presets bool) (*Labeler, error) {
	l := &Labeler{presets: presets}
	for _, r := range rules {
		g, err := policy.CompileGlob(r.Pattern)
		if err != nil {
			return nil, fmt.Errorf("policy.flow.labels %q: %w", r.Pattern, err)
		}
		l.rules = append(l.rules, compiledLabel{glob: g, set: setOf(r.Labels)})
	}
	return l, nil
}

// Tool is a tool as the labeler sees it.
type Tool struct {
	ID     string // canonical ID
	Name   string // the upstream tool's name
	Preset string // the well-known server it is (PresetOf), "" if none
	Trust  policy.Trust
	// Annotations as declared; nil if none.
	Annotations *policy.Annotations
	// Read marks a read through the protocol rather than a tool (a
	// resource read, a prompt rendered by a built-in tool; ID is then
	// "<server>:resources/read" or "<server>:prompts/get"): a preset
	// gives it what the server's reads carry.
	Read bool
}

// Label sources, for logs and docs.
const (
	SourceConfig  = "config"
	SourcePreset  = "preset"
	SourceDefault = "default"
)

// Labels returns t's labels and where they came from.
func (l *Labeler) Labels(t Tool) (Set, string) {
	for _, r := range l.rules {
		if r.glob.Match(t.ID) {
			return r.set, SourceConfig
		}
	}
	if l.presets && t.Preset != "" {
		if t.Read {
			if s, ok := presetReads(t.Preset); ok {
				return s, SourcePreset
			}
		} else if s, ok := presetLabels(t.Preset, t.Name); ok {
			return s, SourcePreset
		}
	}
	return defaults(t), SourceDefault
}

// defaults are the labels of a tool nothing names: an open-world tool of
// a trusted server brings in untrusted content and talks to the outside;
// whatever a server that is not trusted returns is untrusted content, and
// a tool of one that declares itself open-world talks to the outside.
// Nothing is private by default: only configuration and presets know.
func defaults(t Tool) Set {
	var ow *bool
	if t.Annotations != nil {
		ow = t.Annotations.OpenWorld
	}
	var s Set
	if t.Trust != policy.Trusted {
		s.Untrusted = true
		s.Outward = ow != nil && *ow
		return s
	}
	if Believe(ow, t.Trust) == HintTrue {
		s.Untrusted, s.Outward = true, true
	}
	return s
}

// Mark is one label a flow holds: the tool whose result carried it, and
// the audit row of that call where known.
type Mark struct {
	Label string
	Tool  string
}

// Tainted is the data-flow rule: a flow whose results have carried both
// private data and untrusted content may not call an outward tool
// unchecked. It returns a sentence naming the calls that caused it, or ""
// when the call may go.
func Tainted(marks []Mark, call Set) string {
	if !call.Outward {
		return ""
	}
	var private, untrusted []string
	for _, m := range marks {
		switch m.Label {
		case Private:
			if !slices.Contains(private, m.Tool) {
				private = append(private, m.Tool)
			}
		case Untrusted:
			if !slices.Contains(untrusted, m.Tool) {
				untrusted = append(untrusted, m.Tool)
			}
		}
	}
	if len(private) == 0 || len(untrusted) == 0 {
		return ""
	}
	return fmt.Sprintf("this flow read private data (%s) and took in untrusted content (%s), and the tool talks to the outside",
		strings.Join(private, ", "), strings.Join(untrusted, ", "))
}
