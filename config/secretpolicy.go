package config

import "fmt"

// SecretsPolicy ("security.secrets") is what happens to credentials found
// in tool calls' arguments and results (internal/secretscan finds them;
// docs/SECURITY.md lists its rules). Every decision is logged, counted and
// noted on the call's audit row, never with the secret's value.
type SecretsPolicy struct {
	// Results ("results"): SecretsRedact (the default) replaces a
	// credential in a verified format (a checksum or structure confirms
	// it: a GitHub token's CRC32, a JWT's header, a whole PEM private
	// key) by a marker naming its rule, "[redacted: github-token]", before
	// anyone sees the result, and flags the others; SecretsRedactAll
	// redacts every credential found; SecretsFlag only reports them;
	// SecretsOff does not look.
	Results string
	// Arguments ("arguments"): SecretsFlag (the default) reports a
	// credential in a call's arguments; SecretsBlock refuses the call
	// (policy_blocked) when its server is not trusted, and flags it
	// otherwise; SecretsOff does not look.
	Arguments string
	// Elicitation ("elicitation"): a server's form that asks the person
	// for a credential (a field that looks like a password, token, card
	// number or one-time code; the specification says a server must not
	// ask for one this way). SecretsBlock (the default) refuses it from
	// a server that is not trusted and puts it to the person with a
	// warning from a trusted one; SecretsFlag always puts it with the
	// warning; SecretsOff does not look.
	Elicitation string
	// Report ("report"): report only. Decisions are logged, counted and
	// audited as what would happen, and nothing is redacted or blocked.
	// Default false.
	Report bool
}

// SecretsPolicy values.
const (
	SecretsRedact    = "redact"
	SecretsRedactAll = "redactAll"
	SecretsFlag      = "flag"
	SecretsBlock     = "block"
	SecretsOff       = "off"
)

var (
	secretsResults   = []string{SecretsRedact, SecretsRedactAll, SecretsFlag, SecretsOff}
	secretsArguments = []string{SecretsBlock, SecretsFlag, SecretsOff}
	secretsElicit    = secretsArguments
)

// WithDefaults returns p with its empty fields set to their defaults:
// redact in results, flag in arguments, block in elicitation.
func (p SecretsPolicy) WithDefaults() SecretsPolicy {
	if p.Elicitation == "" {
		p.Elicitation = SecretsBlock
	}
	if p.Results == "" {
		p.Results = SecretsRedact
	}
	if p.Arguments == "" {
		p.Arguments = SecretsFlag
	}
	return p
}

// decodeSecrets decodes "security.secrets".
func (d *decoder) decodeSecrets(n *node, p *jsonPath) SecretsPolicy {
	var sp SecretsPolicy
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return sp.WithDefaults()
	}
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "results":
			sp.Results = d.oneOf(m.val, fp, secretsResults...)
		case "arguments":
			sp.Arguments = d.oneOf(m.val, fp, secretsArguments...)
		case "elicitation":
			sp.Elicitation = d.oneOf(m.val, fp, secretsElicit...)
		case "report":
			sp.Report, _ = d.boolean(m.val, fp, "")
		default:
			d.unknown(fp, m.key, []string{"results", "arguments", "elicitation", "report"}, nil, "")
		}
	}
	return sp.WithDefaults()
}

// validateSecrets checks a hand-built SecretsPolicy.
func validateSecrets(sp SecretsPolicy, p *jsonPath, add func(*jsonPath, string)) {
	check := func(key, v string, values []string) {
		if v == "" {
			return
		}
		for _, w := range values {
			if v == w {
				return
			}
		}
		add(p.k(key), fmt.Sprintf("unknown value %s: want %s", quote(v), quoteList(values)))
	}
	check("results", sp.Results, secretsResults)
	check("arguments", sp.Arguments, secretsArguments)
	check("elicitation", sp.Elicitation, secretsElicit)
}
