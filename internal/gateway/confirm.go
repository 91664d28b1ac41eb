package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// A call that the policy says a person must confirm (policy.confirm) is put
// to the calling client as an elicitation, through the same peer as a
// server's own questions, so both protocol eras are asked the same way; or
// it is refused outright when the policy says "onConfirm": "deny".

// confirmArgsMax bounds how much of the arguments the question shows.
const confirmArgsMax = 1024

// confirmer returns the host.Confirmer for one call of a client.
func (g *Gateway) confirmer(p *peer) host.Confirmer {
	return func(ctx context.Context, c host.Confirmation) (bool, error) {
		if g.onConfirm == "deny" {
			return false, errors.New(`calls that need confirmation are refused ("onConfirm": "deny")`)
		}
		if p.caps.Elicitation == nil {
			return false, errors.New("the client did not declare elicitation, so no one can be asked to confirm")
		}
		args := string(c.Arguments)
		if len(args) > confirmArgsMax {
			args = args[:confirmArgsMax] + "…"
		}
		if args == "" {
			args = "{}"
		}
		msg := fmt.Sprintf("Switchboard: allow server %q to run its tool %q? (%s)\nArguments: %s", c.Server, c.Tool, c.Reason, args)
		res, err := p.elicit(ctx, &mcp.ElicitParams{
			Message: msg,
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"allow": map[string]any{"type": "boolean", "title": "Allow this call"},
				},
				"required": []string{"allow"},
			},
		})
		if err != nil {
			return false, err
		}
		allow, _ := res.Content["allow"].(bool)
		return res.Action == "accept" && allow, nil
	}
}
