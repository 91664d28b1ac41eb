package ui

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/era"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// What the templates are given. Every string is plain text: html/template
// escapes it where it is written.

// pageData is the whole page.
type pageData struct {
	CSRF    string
	NoAuth  bool
	Message string
	// Query and ServerFilter are the tool search's; Calls* the recent
	// calls' filter.
	Query, ServerFilter                  string
	CallsServer, CallsTool, CallsOutcome string
	Servers                              []serverRow
	ServerNames                          []string
	Tools                                []toolRow
	ToolsError                           string
	Held                                 []control.Held
	HeldCalls                            []heldCallRow
	Findings                             []findingGroup
	Calls                                []callRow
	CallsError                           string
	Live                                 []liveRow
	Totals                               string
}

type serverRow struct {
	Name, State, Since, Protocol, Era, Trust string
	TrustScore                               string
	Transport                                string
	PID, InFlight, Tools, TokenCost          int
	ListedCost                               int
	LastError, Stderr                        string
	Auth                                     string   // the OAuth login's state; "" for a server without one
	Callers                                  []string // the callers logged in as themselves ("oauth.perCaller"): "who as whom"
	Sandbox                                  string   // the sandbox's summary; "" for a server that is not stdio
	SandboxMissing                           []string
	Held                                     int
	Disabled                                 bool
}

type toolRow struct {
	Name, ID, Server, Title, Description string
	Input, Output                        string // indented JSON
	Given                                string // what the model is given, indented JSON; "" when it is deferred
	Deferred                             bool
	Tokens                               int
}

type findingGroup struct {
	Severity string
	Findings []host.Finding
}

type callRow struct {
	// As is whom the server saw the call made by (a server with
	// oauth.perCaller), "-" for the server's one grant.
	Time, Client, As, Tool, Outcome, Code, Latency, Args string
	BytesIn, BytesOut                                    int
}

type liveRow struct {
	Client, Tool, Running, Progress, Message string
}

// pageData reads everything the page shows, now.
func (h *Handler) pageData(ctx context.Context, r *http.Request, s session, msg string) *pageData {
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		q = r.PostForm
	}
	d := &pageData{
		CSRF: s.csrf, NoAuth: frontdoor.NoAuth(r.Context()), Message: msg,
		Query: q.Get("q"), ServerFilter: q.Get("server"),
		CallsServer: q.Get("calls_server"), CallsTool: q.Get("calls_tool"), CallsOutcome: q.Get("calls_outcome"),
	}
	h.fillLive(ctx, d)
	for _, s := range d.Servers {
		d.ServerNames = append(d.ServerNames, s.Name)
	}
	h.fillTools(ctx, d)
	return d
}

// fillLive reads the sections that the event stream keeps current.
func (h *Handler) fillLive(ctx context.Context, d *pageData) {
	st := h.ctl.Status()
	now := time.Now()
	for _, s := range st.Servers {
		row := serverRow{
			Name: s.Name, State: string(s.State), Protocol: s.ProtocolVersion, Trust: s.Trust, Transport: s.Transport,
			TrustScore: fmt.Sprintf("%.2f", s.TrustScore), PID: s.PID, InFlight: s.InFlight, Tools: s.Tools,
			TokenCost: s.TokenCost, ListedCost: s.ListedCost, LastError: s.LastError, Stderr: s.Stderr, Auth: s.Auth,
			Held: len(s.Held) + len(s.HeldInjection), Disabled: s.State == host.StateDisabled,
		}
		if s.LaunchHeld != "" {
			row.Held++ // the launch
		}
		if gs, err := hostlink.Of(h.ctl.Host()).CallerGrants(ctx, s.Name); err == nil {
			for _, g := range gs {
				row.Callers = append(row.Callers, g.Caller+" as "+cmp.Or(g.Subject, "?"))
			}
		}
		if sb := s.Sandbox; sb != nil {
			row.Sandbox = sb.Summary
			for _, m := range sb.Missing {
				row.SandboxMissing = append(row.SandboxMissing, m.Protection+": "+m.Detail+" ("+m.Code+")")
			}
		}
		if !s.Since.IsZero() {
			row.Since = now.Sub(s.Since).Round(time.Second).String()
		}
		switch {
		case era.Modern(s.ProtocolVersion):
			row.Era = "modern"
		case era.Legacy(s.ProtocolVersion):
			row.Era = "legacy"
		}
		d.Servers = append(d.Servers, row)
	}
	d.Totals = fmt.Sprintf("%d tools from %d servers, plus %d built-in", st.Tools, len(st.Servers), st.Builtin)
	held, err := h.ctl.Held(ctx, "")
	if err == nil {
		d.Held = held
	}
	h.fillHeldCalls(ctx, d)
	bySev := map[string][]host.Finding{}
	for _, f := range h.ctl.Findings() {
		bySev[string(f.Severity)] = append(bySev[string(f.Severity)], f)
	}
	for _, sev := range []string{"high", "warn", "info"} {
		if len(bySev[sev]) > 0 {
			d.Findings = append(d.Findings, findingGroup{Severity: sev, Findings: bySev[sev]})
		}
	}
	f := store.CallFilter{Server: d.CallsServer, Outcome: d.CallsOutcome, Limit: 50}
	if d.CallsTool != "" {
		f.Tool = d.CallsTool
		if !strings.Contains(f.Tool, ":") && d.CallsServer != "" {
			f.Tool = d.CallsServer + ":" + f.Tool
		}
	}
	calls, err := h.ctl.Calls(ctx, f)
	if err != nil {
		d.CallsError = err.Error()
	}
	for _, c := range calls {
		d.Calls = append(d.Calls, callRow{
			Time: c.Time.Local().Format(time.TimeOnly), Client: who(c.Caller, c.ClientName), As: upstreamAs(c.As, c.Grant), Tool: c.Tool, Outcome: c.Outcome, Code: c.Code,
			Latency: c.Latency.Round(time.Millisecond).String(), Args: c.ArgShape, BytesIn: c.BytesIn, BytesOut: c.BytesOut,
		})
	}
	for _, l := range h.ctl.Live() {
		row := liveRow{Client: who(l.Client, l.ClientName), Tool: l.Tool, Running: now.Sub(l.Start).Round(100 * time.Millisecond).String(), Message: l.Message}
		switch {
		case l.Total > 0:
			row.Progress = fmt.Sprintf("%g / %g", l.Progress, l.Total)
		case l.Progress > 0:
			row.Progress = fmt.Sprintf("%g", l.Progress)
		}
		d.Live = append(d.Live, row)
	}
}

// fillTools reads the tools: the search's results (the index of
// `switchboard search`) or all of them, of one server or all.
func (h *Handler) fillTools(ctx context.Context, d *pageData) {
	hst := h.ctl.Host()
	var tools []host.Tool
	if d.Query != "" {
		var err error
		if tools, err = hst.Search(ctx, d.Query, 20); err != nil {
			d.ToolsError = err.Error()
		}
	} else {
		tools = hst.Tools()
	}
	given := map[string]host.Tool{}
	for _, t := range hst.View(host.Caller{}).Tools() {
		given[t.Name] = t
	}
	for _, t := range tools {
		if d.ServerFilter != "" && t.Server != d.ServerFilter {
			continue
		}
		row := toolRow{Name: t.Name, ID: t.ID, Server: t.Server, Title: t.Title, Description: t.Description,
			Input: indent(t.InputSchema), Output: indent(t.OutputSchema), Deferred: t.Deferred, Tokens: t.Tokens()}
		if t.Held {
			row.Description = host.HeldStatus // its definition is in the held section, with its diff
		}
		if g, ok := given[t.Name]; ok {
			b, _ := json.Marshal(map[string]any{"name": g.Name, "description": g.Description, "inputSchema": g.InputSchema})
			row.Given = indent(b)
		}
		d.Tools = append(d.Tools, row)
	}
}

// indent is raw JSON indented for people; "" for none.
func indent(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

var funcs = template.FuncMap{
	"stateClass": func(state string) string {
		switch state {
		case "ready":
			return "ok"
		case "idle", "starting", "disabled":
			return "quiet"
		}
		return "bad"
	},
	"list": func(s ...string) []string { return s },
}

// who names a call's caller for the page: as it authenticated and as its
// client named itself ("ci (Claude Code)"); "operator" for a caller the
// gateway does not tell apart from the operator.
// upstreamAs is the recent calls' "Upstream as" cell: whom the server saw
// the call made by ("-" for the server's one grant), with the decision
// about the caller's own grant when it says more (needs_login, and the
// report-only would_own and would_login).
func upstreamAs(as, grant string) string {
	as = cmp.Or(as, "-")
	switch grant {
	case "", "own", "exchanged":
		return as
	}
	return as + " (" + grant + ")"
}

func who(caller, clientName string) string {
	if caller == "" {
		caller = "operator"
	}
	if clientName == "" {
		return caller
	}
	return caller + " (" + clientName + ")"
}
