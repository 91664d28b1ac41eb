// Package approval decides which tool calls a person must approve and
// what a flow of calls has taken in: the rules of policy.approve (tool
// globs, believed annotations, server trust), the canonical hash that
// binds an approval to one call's arguments (RFC 8785), the data-flow
// labels of tools (configuration, built-in presets of well-known servers,
// defaults from annotations and trust) and the data-flow rule (a flow
// holding private data and untrusted content may not reach the outside
// unchecked).
//
// It is pure computation: no I/O, no clock, no goroutines. The host keeps
// the held calls and the flows' labels in the store and acts on what this
// package decides. It imports internal/policy (globs, trust, annotations)
// and github.com/gowebpki/jcs (the canonical JSON), nothing else.
package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gowebpki/jcs"

	"github.com/switchboard-mcp/switchboard/internal/policy"
)

// ArgsHash is the hex SHA-256 of args in the JSON Canonicalization Scheme
// (RFC 8785): arguments that differ only in member order, whitespace or
// the spelling of a number or string hash alike. Empty args hash as {}.
// Valid JSON that has no canonical form (a lone UTF-16 surrogate in a
// string, which RFC 8785 refuses) hashes as its exact bytes, marked so
// that it never equals a canonical hash; invalid JSON is an error.
func ArgsHash(args []byte) (string, error) {
	if len(strings.TrimSpace(string(args))) == 0 {
		args = []byte("{}")
	}
	if !json.Valid(args) {
		return "", errors.New("the arguments are not valid JSON")
	}
	c, err := jcs.Transform(args)
	if err != nil {
		c = append([]byte("raw:"), args...)
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// Key binds an approval to one call: who calls (the caller's identity),
// in which flow, which tool (its canonical ID) and the hash of its
// arguments. Every part counts: an approval given for one of them serves
// no other.
func Key(caller, flow, tool, argsHash string) string {
	h := sha256.New()
	for _, s := range []string{caller, flow, tool, argsHash} {
		fmt.Fprintf(h, "%d:%s;", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Hint is what Switchboard believes of one of a tool's annotations.
type Hint int

// The values of a Hint.
const (
	// HintUnknown: not declared, or declared by a server that is not
	// trusted, whose hints are not believed.
	HintUnknown Hint = iota
	HintFalse
	HintTrue
)

// Believe returns what is believed of a hint declared as v (nil: not
// declared) by a server of trust t: a trusted server is taken at its
// word; anything else is unknown. The spec's defaults (destructiveHint
// and openWorldHint true) do not apply: an absent hint is unknown.
func Believe(v *bool, t policy.Trust) Hint {
	switch {
	case v == nil || t != policy.Trusted:
		return HintUnknown
	case *v:
		return HintTrue
	}
	return HintFalse
}

// Rules are the compiled rules of policy.approve.
type Rules struct {
	tools       []policy.Glob
	destructive bool
	openWorld   bool
	unknown     bool
	trust       []policy.Trust
}

// RulesConfig is what Rules are compiled from (config.Approve).
type RulesConfig struct {
	Tools                  []string
	Destructive, OpenWorld bool
	Unknown                bool
	Trust                  []policy.Trust
}

// NewRules compiles c; a malformed glob is an error naming it.
func NewRules(c RulesConfig) (*Rules, error) {
	r := &Rules{destructive: c.Destructive, openWorld: c.OpenWorld, unknown: c.Unknown, trust: slices.Clone(c.Trust)}
	for _, p := range c.Tools {
		g, err := policy.CompileGlob(p)
		if err != nil {
			return nil, fmt.Errorf("policy.approve.tools %q: %w", p, err)
		}
		r.tools = append(r.tools, g)
	}
	return r, nil
}

// Call is one tool call as the rules see it.
type Call struct {
	ID          string // canonical tool ID
	Trust       policy.Trust
	Annotations *policy.Annotations // as declared; nil if none
}

// Reasons for holding a call: stable identifiers for logs and audit rows.
const (
	ReasonTool        = "tool"        // a policy.approve.tools glob matched
	ReasonDestructive = "destructive" // the tool is (believed) destructive
	ReasonOpenWorld   = "open_world"  // the tool is (believed) open-world
	ReasonTrust       = "trust"       // the server's trust level is named
	ReasonFlow        = "flow"        // the data-flow rule
)

// Need returns why c needs a person's approval, as reasons joined by ",",
// and a sentence for the person; "" when it does not.
func (r *Rules) Need(c Call) (reasons, detail string) {
	if r == nil {
		return "", ""
	}
	var rs, ds []string
	for _, g := range r.tools {
		if g.Match(c.ID) {
			rs, ds = append(rs, ReasonTool), append(ds, fmt.Sprintf("the tool matches %q (policy.approve.tools)", g.String()))
			break
		}
	}
	var destructive, readOnly, openWorld *bool
	if a := c.Annotations; a != nil {
		destructive, readOnly, openWorld = a.Destructive, a.ReadOnly, a.OpenWorld
	}
	if r.destructive && Believe(readOnly, c.Trust) != HintTrue {
		if h := Believe(destructive, c.Trust); h == HintTrue || (h == HintUnknown && r.unknown) {
			rs, ds = append(rs, ReasonDestructive), append(ds, describe("destructive", h))
		}
	}
	if r.openWorld {
		if h := Believe(openWorld, c.Trust); h == HintTrue || (h == HintUnknown && r.unknown) {
			rs, ds = append(rs, ReasonOpenWorld), append(ds, describe("open-world", h))
		}
	}
	if slices.Contains(r.trust, c.Trust) || (c.Trust == "" && slices.Contains(r.trust, policy.Untrusted)) {
		rs, ds = append(rs, ReasonTrust), append(ds, fmt.Sprintf("its server is %s (policy.approve.trust)", trustName(c.Trust)))
	}
	return strings.Join(rs, ","), strings.Join(ds, "; ")
}

func describe(what string, h Hint) string {
	if h == HintTrue {
		return "its trusted server declares it " + what
	}
	return "it may be " + what + " (its hint is unknown; policy.approve.unknownHints)"
}

func trustName(t policy.Trust) string {
	if t == "" {
		return string(policy.Untrusted)
	}
	return string(t)
}
