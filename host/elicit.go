package host

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/secretscan"
)

// A server's form that asks the person for a credential
// (config: security.secrets.elicitation). The specification says a
// server must not ask for passwords or keys in an elicitation form (a URL
// leg is the way), and a hostile one asks anyway ("your session expired,
// re-enter your GitHub token") to harvest them. internal/secretscan says
// which fields look like a credential; here the policy decides: refused
// from a server that is not trusted, put to the person with a warning
// from a trusted one. Each decision is an EventElicitation, so it is
// counted and leaves a guard row.

// EventElicitation: a server's elicitation asked for a credential;
// Decision is SecretBlocked, SecretFlagged or SecretWouldBlock, Rule what
// was asked for (secretscan.AskPassword, AskToken, AskCard, AskCode).
const EventElicitation EventKind = "elicitation"

// SecretsElicitation is the direction of an elicitation's decisions in
// metrics.
const SecretsElicitation = "elicitation"

// askedField is a form field that asks for a credential.
type askedField struct{ name, kind string }

// checkElicit is upstream.Options.CheckElicit.
func (h *Host) checkElicit(server string, p *mcp.ElicitParams) (*mcp.ElicitParams, error) {
	pol := h.config().Security.Secrets.WithDefaults()
	if pol.Elicitation == config.SecretsOff || p.Mode == "url" {
		return p, nil
	}
	asked := askedFields(p.RequestedSchema)
	if len(asked) == 0 {
		return p, nil
	}
	trusted := false
	if sc := h.config().Server(server); sc != nil {
		trusted = sc.Trust.Level() == config.TrustTrusted
	}
	action := blockAction(pol.Elicitation == config.SecretsBlock && !trusted, pol.Report)
	var kinds, names []string
	for _, a := range asked {
		names = append(names, fmt.Sprintf("%q", a.name))
		if !slices.Contains(kinds, a.kind) {
			kinds = append(kinds, a.kind)
		}
	}
	what := strings.Join(kinds, " or ")
	h.log.Warn("a server's form asks for a credential", "server", server, "asks", what, "fields", names, "action", action)
	for _, k := range kinds {
		h.event(ServerEvent{Server: server, Kind: EventElicitation, Decision: action, Rule: k})
	}
	if action == SecretBlocked {
		return nil, fmt.Errorf("Switchboard refused server %q's form asking for a %s (field %s): a server must not ask for credentials in a form", server, what, strings.Join(names, ", "))
	}
	warned := *p
	warned.Message = fmt.Sprintf("Warning from Switchboard: this form asks for a %s (field %s). A server should never ask for credentials this way; enter one only if you trust this server.\n\n%s",
		what, strings.Join(names, ", "), p.Message)
	return &warned, nil
}

// askedFields returns the fields of an elicitation's requested schema
// that take free text or a number and look like a credential. A field
// limited to listed values (enum, oneOf, anyOf) or a boolean cannot carry
// one. An unreadable schema asks for nothing here: the client checks it.
func askedFields(schema any) []askedField {
	if schema == nil {
		return nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Format      string `json:"format"`
			Enum        []any  `json:"enum"`
			OneOf       []any  `json:"oneOf"`
			AnyOf       []any  `json:"anyOf"`
		} `json:"properties"`
	}
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	var out []askedField
	for name, f := range s.Properties {
		if len(f.Enum) > 0 || len(f.OneOf) > 0 || len(f.AnyOf) > 0 {
			continue
		}
		if t, ok := f.Type.(string); ok && t != "string" && t != "number" && t != "integer" {
			continue
		}
		if k := secretscan.AsksFor(secretscan.Field{Name: name, Title: f.Title, Description: f.Description, Format: f.Format}); k != "" {
			out = append(out, askedField{name: name, kind: k})
		}
	}
	slices.SortFunc(out, func(a, b askedField) int { return strings.Compare(a.name, b.name) })
	return out
}
