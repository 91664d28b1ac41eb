package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// A call held for a person's approval (policy.approve, the data-flow
// rule) is put to the person at the client through URL-mode elicitation,
// which the client shows to the person, never to the model: the URL is
// the status page's view of that call, where approving needs the page's
// login.
//   - A 2025 client is sent elicitation/create in url mode; once it
//     accepts, the call waits for the decision (host: until the hold
//     expires or the call ends) and goes on, or ends approval_denied.
//   - A 2026-07-28 client, which has no server-to-client requests, gets
//     the URLElicitationRequired error (-32042) naming the URL; it calls
//     again once the person has decided, and the approved call goes
//     through, once.
// A client without URL-mode elicitation, or a gateway without the status
// page, gets the isError result approval_required, which says the call is
// held and not how to release it: a person approves it on the status page
// or with `switchboard approve-call`.

// SetApprovalPage sets the status page's view of held calls, the URL that
// a held call's ID is appended to ("http://127.0.0.1:8080/ui/approvals/");
// "" offers no URL. serve sets it once its listener and page are up.
func (g *Gateway) SetApprovalPage(base string) {
	g.approvalPage.Store(base)
	g.profMu.Lock()
	defer g.profMu.Unlock()
	for _, p := range g.profiles {
		p.g.approvalPage.Store(base)
	}
}

// approver returns the host.Approver for one call of a client.
func (g *Gateway) approver(p *peer, session *mcp.ServerSession) host.Approver {
	return func(ctx context.Context, c host.HeldCall) error {
		base, _ := g.approvalPage.Load().(string)
		switch {
		case base == "":
			return errors.New("the gateway serves no status page to approve it on")
		case !urlElicitation(p.caps):
			return errors.New("the client did not declare URL-mode elicitation")
		}
		params := &mcp.ElicitParams{
			Mode: "url",
			Message: fmt.Sprintf("Switchboard holds a call of the tool %q for a person's approval (%s). Open the page to approve or deny it; the call goes on once you have.",
				c.Tool, c.Detail),
			URL:           base + c.ID,
			ElicitationID: elicitationID(),
		}
		if p.modern() {
			return mcp.URLElicitationRequiredError([]*mcp.ElicitParams{params})
		}
		ans, err := session.Elicit(ctx, params)
		if err != nil {
			return err
		}
		if ans.Action != "accept" {
			return errors.New("the person did not open the approval page")
		}
		return nil
	}
}
