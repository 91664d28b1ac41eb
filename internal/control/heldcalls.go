package control

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
)

// Tool calls held for a person's approval (host.HeldCall): listed, and
// approved or denied, by a person at the status page (as "ui:<name>"), with
// the CLI (`switchboard approve-call`, as "cli:<user>"), or through the
// API (as "api:<name>").

// HeldCalls returns the held calls in state ("" for any), newest first.
func (c *Control) HeldCalls(ctx context.Context, state string) ([]host.HeldCall, error) {
	return c.opts.Host.HeldCalls(ctx, state)
}

// DecideCall approves or denies the held call id as by.
func (c *Control) DecideCall(ctx context.Context, id string, approve bool, by string) (host.HeldCall, error) {
	return c.opts.Host.DecideCall(ctx, id, approve, by)
}

// decision is the body of POST /api/held-calls/{id}/approve and /deny:
// who decides. A name without a place ("alice") is taken as the API's
// ("api:alice"); the CLI sends "cli:<user>".
type decision struct {
	By string `json:"by"`
}

// byOf is who a request's body says decides.
func byOf(d decision) string {
	switch {
	case d.By == "":
		return host.DeciderControl + ":operator"
	case strings.HasPrefix(d.By, host.DeciderCLI+":"), strings.HasPrefix(d.By, host.DeciderControl+":"):
		return d.By
	}
	return host.DeciderControl + ":" + d.By
}

// heldCallRoutes adds the held calls' routes to mux:
//
//	GET  /api/held-calls[?state=S]          HeldCalls
//	POST /api/held-calls/{id}/approve {"by"} DecideCall(true)
//	POST /api/held-calls/{id}/deny    {"by"} DecideCall(false)
func (c *Control) heldCallRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/held-calls", func(w http.ResponseWriter, r *http.Request) {
		list, err := c.HeldCalls(r.Context(), r.URL.Query().Get("state"))
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, orEmpty(list))
	})
	decide := func(approve bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var d decision
			if err := json.NewDecoder(r.Body).Decode(&d); err != nil {
				writeError(w, fault.New(fault.CodeInvalidInput, "", "", errors.New(`the body must be {"by": "name"}`)))
				return
			}
			c2, err := c.DecideCall(r.Context(), r.PathValue("id"), approve, byOf(d))
			if err != nil {
				writeError(w, err)
				return
			}
			writeJSON(w, http.StatusOK, c2)
		}
	}
	mux.HandleFunc("POST /api/held-calls/{id}/approve", decide(true))
	mux.HandleFunc("POST /api/held-calls/{id}/deny", decide(false))
}

// HeldCalls returns the gateway's held calls in state ("" for any).
func (c *Client) HeldCalls(ctx context.Context, state string) ([]host.HeldCall, error) {
	var out []host.HeldCall
	err := c.do(ctx, http.MethodGet, APIPath+"held-calls?state="+url.QueryEscape(state), nil, &out)
	return out, err
}

// DecideCall approves or denies a held call in the gateway as by.
func (c *Client) DecideCall(ctx context.Context, id string, approve bool, by string) (host.HeldCall, error) {
	verb := "deny"
	if approve {
		verb = "approve"
	}
	var out host.HeldCall
	err := c.do(ctx, http.MethodPost, APIPath+"held-calls/"+url.PathEscape(id)+"/"+verb, decision{By: by}, &out)
	return out, err
}
