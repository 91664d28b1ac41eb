package ui

import (
	"context"
	"net/http"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Tool calls held for a person's approval: the page lists the calls
// waiting, each with its tool, caller, why it is held and its arguments,
// with Approve and Deny; a decision is recorded as "ui:operator" (whoever
// holds the gateway's token). /ui/approvals/{id} is where a client's URL
// elicitation sends the person: after the login, the page at that call.

// heldCallRow is a held call as the page shows it.
type heldCallRow struct {
	ID, Tool, Caller, Detail, Arguments, Expires string
}

// fillHeldCalls adds the calls waiting for approval to d.
func (h *Handler) fillHeldCalls(ctx context.Context, d *pageData) {
	list, err := h.ctl.HeldCalls(ctx, store.ApprovalPending)
	if err != nil {
		h.log.Warn("held calls not read", "err", err)
		return
	}
	for _, c := range list {
		d.HeldCalls = append(d.HeldCalls, heldCallRow{ID: c.ID, Tool: c.Tool, Caller: who(c.Caller, c.ClientName),
			Detail: c.Detail, Arguments: string(c.Arguments), Expires: c.Expires.Local().Format(time.TimeOnly)})
	}
}

// uiDecider is who decides at the status page.
const uiDecider = host.DeciderUI + ":operator"

// decideCall approves or denies a held call for the action form.
func (h *Handler) decideCall(ctx context.Context, id string, approve bool) (string, error) {
	c, err := h.ctl.DecideCall(ctx, id, approve, uiDecider)
	if err != nil {
		return "", err
	}
	if approve {
		return "approved the call of " + c.Tool + " (" + id + "): made again, it goes through once", nil
	}
	return "denied the call of " + c.Tool + " (" + id + ")", nil
}

// approval is the page of one held call, where a client's URL elicitation
// sends the person: the login form first, then the page at that call.
func (h *Handler) approval(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.current(w, r); !ok {
		h.render(w, http.StatusOK, "login.html", h.loginData(w, r, "Log in to decide on a held tool call."))
		return
	}
	http.Redirect(w, r, Path+"#call-"+r.PathValue("id"), http.StatusSeeOther)
}
