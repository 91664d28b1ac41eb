package host

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/resultguard"
	"github.com/switchboard-mcp/switchboard/internal/secretscan"
)

// Credentials in tool calls (config: security.secrets). A result can carry
// credentials into a model's context, as when a support ticket made an
// agent read stored tokens out through a database server; an argument can
// carry the user's credentials to a server that should not have them.
// internal/secretscan finds them; here the policy decides, per direction,
// what happens, and every decision is logged, counted (CallRecord.Secrets)
// and noted on the audit row, never with the secret's value.

// SecretDecision is what happened to one credential found in a tool call.
// It never holds the credential.
type SecretDecision struct {
	// Direction is SecretsArguments or SecretsResults.
	Direction string
	// Rule is the internal/secretscan rule that found it
	// ("github-token", "jwt", ...): a bounded set.
	Rule string
	// Verified: a checksum or structure confirms it (a GitHub token's
	// CRC32, a JWT's header, a whole PEM key); otherwise only its shape.
	Verified bool
	// Action is SecretRedacted, SecretFlagged or SecretBlocked; in
	// report-only mode, SecretWouldRedact or SecretWouldBlock for what
	// would have happened.
	Action string
}

// SecretDecision directions and actions.
const (
	SecretsArguments = "arguments"
	SecretsResults   = "results"

	SecretRedacted    = "redacted"
	SecretFlagged     = "flagged"
	SecretBlocked     = "blocked"
	SecretWouldRedact = "would_redact"
	SecretWouldBlock  = "would_block"
)

// blockAction is what a guard that blocks or flags does: SecretBlocked
// when it would block, SecretWouldBlock when it would but reports only,
// else SecretFlagged.
func blockAction(block, report bool) string {
	switch {
	case block && report:
		return SecretWouldBlock
	case block:
		return SecretBlocked
	}
	return SecretFlagged
}

// screenArgs applies security.secrets.arguments to a call of tool on sc:
// each credential in the arguments' string values is flagged, or, with
// "block" and a server that is not trusted, the call is refused
// (policy_blocked).
func (h *Host) screenArgs(sc *config.Server, tool string, args json.RawMessage) ([]SecretDecision, error) {
	pol := h.config().Security.Secrets.WithDefaults()
	if pol.Arguments == config.SecretsOff || len(args) == 0 {
		return nil, nil
	}
	found, err := resultguard.ValueSecrets(args)
	if err != nil || len(found) == 0 {
		return nil, nil
	}
	action := blockAction(pol.Arguments == config.SecretsBlock && sc.Trust.Level() != config.TrustTrusted, pol.Report)
	ds := make([]SecretDecision, len(found))
	var rules []string
	for i, f := range found {
		ds[i] = SecretDecision{Direction: SecretsArguments, Rule: f.Rule, Verified: f.Verified, Action: action}
		if !slices.Contains(rules, f.Rule) {
			rules = append(rules, f.Rule)
		}
	}
	h.logSecrets(sc, tool, ds)
	if action == SecretBlocked {
		return ds, fault.New(fault.CodePolicyBlocked, sc.Name, fmt.Sprintf("call tool %q", tool),
			fmt.Errorf("the arguments hold a credential (%s; security.secrets.arguments)", strings.Join(rules, ", ")))
	}
	return ds, nil
}

// screenResult applies security.secrets.results to a result from sc
// before anything else reads it (the guard, a spill, the model): each
// credential chosen for redaction is replaced in the raw bytes by a marker
// naming its rule, and the others are flagged. A result that is not
// well-formed is left to the guard.
func (h *Host) screenResult(sc *config.Server, tool string, raw json.RawMessage) (json.RawMessage, []SecretDecision) {
	pol := h.config().Security.Secrets.WithDefaults()
	var redact func(secretscan.Finding) bool
	switch pol.Results {
	case config.SecretsOff:
		return raw, nil
	case config.SecretsRedact:
		redact = func(f secretscan.Finding) bool { return f.Verified }
	case config.SecretsRedactAll:
		redact = func(secretscan.Finding) bool { return true }
	}
	apply := redact
	if pol.Report {
		apply = nil
	}
	out, found, err := resultguard.Secrets(raw, apply)
	if err != nil || len(found) == 0 {
		return raw, nil
	}
	ds := make([]SecretDecision, len(found))
	for i, f := range found {
		d := SecretDecision{Direction: SecretsResults, Rule: f.Rule, Verified: f.Verified, Action: SecretFlagged}
		switch {
		case f.Redacted:
			d.Action = SecretRedacted
		case pol.Report && redact != nil && redact(secretscan.Finding{Rule: f.Rule, Verified: f.Verified}):
			d.Action = SecretWouldRedact
		}
		ds[i] = d
	}
	h.logSecrets(sc, tool, ds)
	return out, ds
}

func (h *Host) logSecrets(sc *config.Server, tool string, ds []SecretDecision) {
	for _, d := range ds {
		h.log.Warn("credential in tool call "+d.Direction, "server", sc.Name, "tool", tool, "rule", d.Rule, "verified", d.Verified, "action", d.Action)
	}
}

// secretsNote is the audit row's note of a call's decisions: one
// "direction:rule:action" per distinct decision, comma-separated, in the
// order they were made.
func secretsNote(ds []SecretDecision) string {
	var parts []string
	for _, d := range ds {
		p := d.Direction + ":" + d.Rule + ":" + d.Action
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ",")
}
