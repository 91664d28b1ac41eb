package host

import (
	"context"
	"encoding/json"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// What a Host tells an observer (Options.OnCall, Options.OnEvent): one
// record per tool call and one event per change of a server's life. They
// are plain values, so that an observer (the gateway's metrics, its log
// line) needs nothing of the Host; counts that can be read at any time
// (states, calls in flight, held definitions, spill bytes) are read from
// Servers and the gateway's link (internal/hostlink) instead.

// CallRecord describes one finished tool call, or one refused before it
// went out. It never holds argument or result data.
type CallRecord struct {
	Start   time.Time
	Latency time.Duration
	// Client is CallOptions.Client, the caller as it authenticated ("" is
	// the process itself and callers that cannot be told apart), Profile
	// CallOptions.Profile, and ClientName the name the client gave itself.
	Client, Profile, ClientName string
	// Server is the configured server that owns the tool; "" for a
	// built-in tool and for a name that matched no tool.
	Server string
	// Tool is the tool's canonical ID ("<server>:<tool>"), or a built-in
	// tool's name, when Catalogued; otherwise the name as asked, which
	// may be anything a client sent.
	Tool string
	// Catalogued reports whether Tool names a tool of the catalogue (or a
	// built-in one): a bounded set, fit for a metric's label.
	Catalogued bool
	// Outcome is "ok", "tool_error" (the tool ran and failed) or "error"
	// (the call failed: Code says how).
	Outcome string
	// Code is the fault code of an error ("cancelled" for a call whose
	// context ended without one); "" otherwise.
	Code     string
	BytesIn  int
	BytesOut int
	// Secrets are the credentials found in the call's arguments and
	// result and what happened to each (config: security.secrets); never
	// their values.
	Secrets []SecretDecision
	// Gate is what per-call approval and the data-flow guard decided
	// (GateHeld, GateApproved, ...), "" for nothing; Approval says it for
	// the audit row: the held call's ID, who approved or denied it and
	// when, the calls that tainted the flow.
	Gate, Approval string
	// Run is the ID of the script run (code mode) the call belongs to: the
	// script's own call and each call it made; "" for a direct call.
	Run string
	// As is who the upstream saw the call made by, for a server that
	// uses each caller's own grant ("oauth.perCaller"): the subject of
	// the caller's grant, else the caller itself; "" when the call used
	// the server's one grant.
	As string
	// Grant is the decision about the caller's own grant for a server
	// with "oauth.perCaller": GrantOwn, GrantExchanged, GrantNeedsLogin,
	// or in its report-only mode GrantWouldOwn and GrantWouldLogin; ""
	// for other calls.
	Grant string
}

// The decisions of CallRecord.Grant.
const (
	GrantOwn        = "own"         // the caller's own grant was used
	GrantExchanged  = "exchanged"   // a token exchanged for the caller's own
	GrantNeedsLogin = "needs_login" // refused: the caller has no grant of its own
	GrantWouldOwn   = "would_own"   // report-only: the caller has a grant of its own; the server's was used
	GrantWouldLogin = "would_login" // report-only: the caller would be asked to log in; the server's grant was used
)

// The outcomes of a CallRecord.
const (
	OutcomeOK        = outcomeOK
	OutcomeToolError = outcomeToolErr
	OutcomeError     = outcomeError
)

// EventKind is what happened to a server.
type EventKind string

// The kinds of ServerEvent.
const (
	// EventExited: the server's connection ended (for a stdio server, its
	// process exited: Status says how). The next call reconnects. An idle
	// stop, a reload and Close are not exits.
	EventExited EventKind = "exited"
	// EventRestarted: the server is connected again after its connection
	// ended or a start-up attempt failed.
	EventRestarted EventKind = "restarted"
	// EventBackoff: a start-up attempt failed and the next is scheduled.
	EventBackoff EventKind = "backoff"
	// EventFailed: a start-up attempt failed and no more are scheduled
	// (the server is probed again on activity).
	EventFailed EventKind = "failed"
	// EventRelisted: the server's lists were discovered again on its
	// connection (after list_changed, or a catalogue found stale).
	EventRelisted EventKind = "relisted"
	// EventLaunch: a decision about the server's launch (Decision says
	// which: LaunchPinned, LaunchApproved, LaunchHeld, LaunchWarned).
	EventLaunch EventKind = "launch"
)

// ServerEvent is one change in a server's life.
type ServerEvent struct {
	Server string
	Kind   EventKind
	// Status is how a stdio server's process ended ("exit status 1",
	// "signal: killed"), for EventExited; "" when it did not end or the
	// server is not a process.
	Status string
	// Err is why: the connection's end, the failed attempt.
	Err error
	// Decision is an EventLaunch's decision ("pinned", "approved",
	// "held", "warned") or an EventElicitation's ("blocked", "flagged",
	// "would_block"); "" for other kinds.
	Decision string
	// Sandbox is the server's sandbox mode, and Outcome how it started
	// (SandboxEnforced, SandboxPartial, ...), for EventSandbox and
	// EventSandboxLimit.
	Sandbox, Outcome string
	// Rule is what an EventElicitation's form asked for ("password",
	// "token", "card", "code").
	Rule string
}

// observe calls OnCall, if set, with a call's record.
func (h *Host) observe(rec *CallRecord) {
	if h.onCall != nil {
		h.onCall(*rec)
	}
}

// event calls OnEvent, if set, and leaves the audit row of a guard's
// decision (guardRow).
func (h *Host) event(ev ServerEvent) {
	if row := guardRow(ev); row != nil && h.audit.on() {
		h.audit.record(row)
	}
	if h.onEvent != nil {
		h.onEvent(ev)
	}
}

// OutcomeGuard is the outcome of the audit row of a guard's decision about
// a server, not a call: its tool is "<server>:(launch)",
// "<server>:(sandbox)" or "<server>:(elicitation)", and its code the
// decision.
const OutcomeGuard = "guard"

// guardRow is the audit row of a decision a guard made about a server
// that holds it, refuses or kills it, or starts it against its rule: a
// launch held ("launch_held") or started under "warn" ("launch_warned"); a
// required sandbox that refused to start ("sandbox_refused"); a process
// its sandbox's limits killed or refused ("sandbox_limit"); a form that
// asked for a credential ("elicitation_blocked", "elicitation_flagged",
// "elicitation_would_block"). The decisions
// that follow the rule (a launch pinned at its first start, or approved,
// whose pin the store keeps with its time; a start in the sandbox) are
// counted in the metrics, not written; nil for them.
func guardRow(ev ServerEvent) *store.Call {
	var what, code string
	switch {
	case ev.Kind == EventLaunch && (ev.Decision == LaunchHeld || ev.Decision == LaunchWarned):
		what, code = "(launch)", "launch_"+ev.Decision
	case ev.Kind == EventSandbox && ev.Outcome == SandboxRefused:
		what, code = "(sandbox)", "sandbox_refused"
	case ev.Kind == EventSandboxLimit:
		what, code = "(sandbox)", "sandbox_limit"
	case ev.Kind == EventElicitation:
		what, code = "(elicitation)", "elicitation_"+ev.Decision
	default:
		return nil
	}
	return &store.Call{Time: time.Now(), Tool: ev.Server + ":" + what, Server: ev.Server, Outcome: OutcomeGuard, Code: code}
}

// observing reports whether call records are wanted (by the audit log or
// an observer), so that a caller can skip building one.
func (h *Host) observing() bool { return h.audit.on() || h.onCall != nil }

// spillBytes returns the bytes held by the store of large results (see
// config.Context.SpillBytes).
func (h *Host) spillBytes() int {
	h.spills.mu.Lock()
	defer h.spills.mu.Unlock()
	return h.spills.total
}

// callsInFlight returns the number of tool calls in progress, by server.
func (h *Host) callsInFlight() map[string]int {
	comp := h.comp.Load()
	out := make(map[string]int, len(comp.servers))
	for name, s := range comp.servers {
		out[name] = int(s.inflight.Load())
	}
	return out
}

// refused records a tool call that the view refused before any call was
// made (Resolve: a name the view does not have, a held definition) for
// OnCall, as Call records its own refusals: with the tool's canonical ID
// when name is one of the catalogue's (held or not), else as not
// catalogued. It writes no audit row.
func (v *View) refused(ctx context.Context, name string, args json.RawMessage, err error) {
	h := v.h
	if !h.observing() && h.tracer == nil {
		return
	}
	rec := h.startCall(ctx, name, args, v.options(nil))
	if id, held := h.heldID(name); held {
		rec.of(id.Server, id.String())
	} else if t, ok := h.snapshot().Tool(name); ok {
		rec.of(t.ID.Server, t.ID.String())
	}
	rec.end(nil, err)
}
