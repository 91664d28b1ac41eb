package config

import (
	"fmt"
	"slices"
	"time"
)

// Approve ("policy.approve") names the tool calls that a person must
// approve before they are made: each such call is held, bound to its
// caller, its flow, its tool and its arguments, until a person approves or
// denies it (on the status page, with `switchboard approve-call`, at the
// terminal of a CLI `call`, or through the client's URL elicitation that
// opens the status page). docs/APPROVALS.md says what each rule answers.
// The zero value holds nothing.
type Approve struct {
	// Tools ("tools") are globs over canonical tool IDs ("gh:delete_*"):
	// every call of a matching tool is held.
	Tools []string
	// Destructive ("destructive") holds the calls of tools a trusted
	// server declares destructive (destructiveHint true, readOnlyHint
	// not true).
	Destructive bool
	// OpenWorld ("openWorld") holds the calls of tools a trusted server
	// declares open-world (openWorldHint true).
	OpenWorld bool
	// Unknown ("unknownHints") also counts, for Destructive and
	// OpenWorld, a hint that is unknown: not declared, or declared by a
	// server that is not trusted (whose hints are not believed). Default
	// false: an absent hint is unknown, not true.
	Unknown bool
	// Trust ("trust") holds every call to servers of these trust levels
	// ("untrusted", "sandboxed", "trusted").
	Trust []Trust
	// Expiry ("expiryMs") is how long a held call waits for a person, and
	// how long an approval given waits for the call to be made again;
	// DefaultApprovalExpiry when zero.
	Expiry time.Duration
	// Report ("report"): report only. A call that would be held is
	// logged, counted and audited as "would_hold", and made.
	Report bool
}

// DefaultApprovalExpiry is Approve.Expiry's default.
const DefaultApprovalExpiry = 10 * time.Minute

// Flow ("policy.flow") is the data-flow guard: per flow (a legacy
// session, else the caller), the labels the results of its calls have
// carried are kept in the store, and once a flow holds both private data
// and untrusted content, a call to a tool that talks to the outside is
// held for approval or refused.
type Flow struct {
	// Mode ("mode"): FlowReport (the default) records what the guard
	// would do and holds nothing; FlowApprove holds an outward call of a
	// tainted flow for a person's approval, as policy.approve does;
	// FlowRefuse refuses it (policy_blocked, naming the calls that
	// tainted the flow); FlowOff keeps no labels.
	Mode string
	// Labels ("labels") label tools by glob over canonical IDs ("gh:*",
	// "gh:create_pull_request"): "private" (reads private data),
	// "untrusted" (brings in untrusted content), "outward" (talks to the
	// outside). The first matching glob decides; a tool that none matches
	// takes its server's preset, else defaults from its annotations and
	// trust.
	Labels []FlowLabels
	// NoPresets ("presets": false) turns off the built-in labels of
	// well-known servers (github, filesystem, fetch, slack, ...).
	NoPresets bool
}

// FlowLabels is one entry of Flow.Labels.
type FlowLabels struct {
	Pattern string
	Labels  []string
}

// Flow guard modes and labels.
const (
	FlowOff     = "off"
	FlowReport  = "report"
	FlowApprove = "approve"
	FlowRefuse  = "refuse"

	LabelPrivate   = "private"
	LabelUntrusted = "untrusted"
	LabelOutward   = "outward"
)

var (
	flowModes  = []string{FlowOff, FlowReport, FlowApprove, FlowRefuse}
	flowLabels = []string{LabelPrivate, LabelUntrusted, LabelOutward}
)

// WithDefaults returns a with its expiry set.
func (a Approve) WithDefaults() Approve {
	if a.Expiry == 0 {
		a.Expiry = DefaultApprovalExpiry
	}
	return a
}

// WithDefaults returns f with its mode set.
func (f Flow) WithDefaults() Flow {
	if f.Mode == "" {
		f.Mode = FlowReport
	}
	return f
}

// decodeApprove decodes "policy.approve".
func (d *decoder) decodeApprove(n *node, p *jsonPath) Approve {
	var a Approve
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return a.WithDefaults()
	}
	known := []string{"tools", "destructive", "openWorld", "unknownHints", "trust", "expiryMs", "report"}
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "tools":
			if v, ok := d.strs(m.val, fp, ""); ok {
				for i, pat := range v {
					if msg := checkPattern(pat); msg != "" {
						d.add(fp.i(i), "", msg, nil)
					}
				}
				a.Tools = v
			}
		case "destructive":
			a.Destructive, _ = d.boolean(m.val, fp, "")
		case "openWorld":
			a.OpenWorld, _ = d.boolean(m.val, fp, "")
		case "unknownHints":
			a.Unknown, _ = d.boolean(m.val, fp, "")
		case "trust":
			if v, ok := d.strs(m.val, fp, ""); ok {
				for i, t := range v {
					switch Trust(t) {
					case TrustTrusted, TrustUntrusted, TrustSandboxed:
						a.Trust = append(a.Trust, Trust(t))
					default:
						d.add(fp.i(i), "", fmt.Sprintf("unknown trust level %s: want %s", quote(t), quoteList([]string{string(TrustTrusted), string(TrustUntrusted), string(TrustSandboxed)})), nil)
					}
				}
			}
		case "expiryMs":
			a.Expiry, _ = d.millis(m.val, fp, "")
		case "report":
			a.Report, _ = d.boolean(m.val, fp, "")
		default:
			d.unknown(fp, m.key, known, nil, "")
		}
	}
	return a.WithDefaults()
}

// decodeFlow decodes "policy.flow".
func (d *decoder) decodeFlow(n *node, p *jsonPath) Flow {
	var f Flow
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return f.WithDefaults()
	}
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "mode":
			f.Mode = d.oneOf(m.val, fp, flowModes...)
		case "presets":
			on, _ := d.boolean(m.val, fp, "")
			f.NoPresets = !on
		case "labels":
			if m.val.kind != kindObject {
				d.wrongType(m.val, fp, "", `object of pattern to labels ("gh:*": ["private", "untrusted"])`)
				continue
			}
			for _, e := range m.val.members {
				ep := fp.k(e.key)
				if msg := checkPattern(e.key); msg != "" {
					d.add(ep, "", msg, nil)
					continue
				}
				v, ok := d.strs(e.val, ep, "")
				if !ok {
					continue
				}
				for i, l := range v {
					if !slices.Contains(flowLabels, l) {
						d.add(ep.i(i), "", fmt.Sprintf("unknown label %s: want %s", quote(l), quoteList(flowLabels)), nil)
					}
				}
				f.Labels = append(f.Labels, FlowLabels{Pattern: e.key, Labels: v})
			}
		default:
			d.unknown(fp, m.key, []string{"mode", "labels", "presets"}, nil, "")
		}
	}
	return f.WithDefaults()
}

// validateApprovals checks a hand-built Config's policy.approve and
// policy.flow.
func validateApprovals(pol Policy, pp *jsonPath, add func(*jsonPath, string)) {
	ap := pp.k("approve")
	for i, pat := range pol.Approve.Tools {
		if msg := checkPattern(pat); msg != "" {
			add(ap.k("tools").i(i), msg)
		}
	}
	for i, t := range pol.Approve.Trust {
		if t != TrustTrusted && t != TrustUntrusted && t != TrustSandboxed {
			add(ap.k("trust").i(i), fmt.Sprintf("unknown trust level %s", quote(string(t))))
		}
	}
	if pol.Approve.Expiry < 0 {
		add(ap.k("expiryMs"), "must not be negative (0 means the default)")
	}
	fp := pp.k("flow")
	if m := pol.Flow.Mode; m != "" && !slices.Contains(flowModes, m) {
		add(fp.k("mode"), fmt.Sprintf("unknown value %s: want %s", quote(m), quoteList(flowModes)))
	}
	for _, l := range pol.Flow.Labels {
		lp := fp.k("labels").k(l.Pattern)
		if msg := checkPattern(l.Pattern); msg != "" {
			add(lp, msg)
		}
		for i, v := range l.Labels {
			if !slices.Contains(flowLabels, v) {
				add(lp.i(i), fmt.Sprintf("unknown label %s: want %s", quote(v), quoteList(flowLabels)))
			}
		}
	}
}
