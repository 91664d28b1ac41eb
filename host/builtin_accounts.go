package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AccountsTool lists the servers of a caller's view that act as the
// caller ("oauth.perCaller"), each with whether the caller has connected
// its account there, and with connect=true asks for the first login the
// caller lacks: its needs_login (ErrOwnLogin) makes the gateway offer that
// login, and the call made again after it asks for the next, so that a
// person connects every account in one sitting (a 2025 client is offered
// each login in turn within the one call; a 2026-07-28 client gets -32042
// for each, calling again after each). It is listed while the view holds
// such a server (the gateway lists one set of tools to every caller of a
// profile); to the operator, who logs in with `switchboard login`, it
// says so.
const AccountsTool = "mcp_accounts"

// maxAccountsLogins bounds the logins one call of AccountsTool walks
// through in the gateway.
const maxAccountsLogins = 32

var accountsBuiltin = &builtin{
	tool: Tool{Name: AccountsTool, ID: AccountsTool, Title: "Connect your accounts",
		Description: "List the servers that act as you, each with whether your account is connected there. " +
			"With connect set, log in to each one not yet connected, one after another (your client opens each login page).",
		InputSchema: obj(nil, `"connect":{"type":"boolean","description":"Log in to every server not yet connected."}`),
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: new(true)}},
	run: (*View).runAccounts,
}

func init() { builtins = append(builtins, accountsBuiltin) }

// accountsOn reports whether AccountsTool is on in v: v holds a server
// with "oauth.perCaller".
func (h *Host) accountsOn(v *View) bool {
	for _, name := range v.servers() {
		if sc := h.config().Server(name); sc != nil && sc.Enabled && perCallerLogins(sc) {
			return true
		}
	}
	return false
}

// Account is one server of AccountsTool's answer.
type Account struct {
	Server string `json:"server"`
	// State is "connected", "token exchange" (the caller's own token is
	// exchanged for the server's), "not connected", or, for the
	// operator, "operator" (the server's one grant).
	State string `json:"state"`
	// As is whom the server knows the caller as, when its grant says.
	As string `json:"as,omitempty"`
}

// accounts lists the servers of v that act as its caller, with the
// state of the caller's account on each.
func (v *View) accounts(ctx context.Context) ([]Account, error) {
	id := v.c.identity()
	var out []Account
	for _, name := range v.servers() {
		sc := v.h.config().Server(name)
		if sc == nil || !sc.Enabled || !perCallerLogins(sc) {
			continue
		}
		a := Account{Server: name, State: "not connected"}
		if id == "" {
			a.State = "operator"
		} else if sc.OAuth.TokenExchange && v.c.Token != "" {
			a.State = "token exchange"
		} else if ts, err := (callerGrants{h: v.h, caller: id}).Load(ctx, sc.URL); err == nil && len(ts) > 0 {
			a.State, a.As = "connected", ts[0].Subject
		}
		out = append(out, a)
	}
	return out, nil
}

func (v *View) runAccounts(ctx context.Context, args json.RawMessage, _ *CallOptions) (json.RawMessage, error) {
	var in struct {
		Connect bool `json:"connect"`
	}
	if err := decodeArgs(AccountsTool, args, &in); err != nil {
		return nil, err
	}
	accts, err := v.accounts(ctx)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, a := range accts {
		if in.Connect && a.State == "not connected" {
			return nil, needsOwnLogin(a.Server)
		}
		if a.State == "operator" {
			fmt.Fprintf(&b, "%s: the operator's account (switchboard login %s)\n", a.Server, a.Server)
			continue
		}
		fmt.Fprintf(&b, "%s: %s", a.Server, a.State)
		if a.As != "" {
			fmt.Fprintf(&b, " as %s", a.As)
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		b.WriteString("No server acts as you: every server uses the operator's account.\n")
	}
	return textResult(b.String())
}
