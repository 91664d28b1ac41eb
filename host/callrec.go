package host

import (
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// callRec is the record of one tool call: started when the call is asked,
// told what it resolved to and when it went out, and ended once, whatever
// the call's end (done, failed, or refused before it went out: by policy,
// confirmation, quota, approval or a held definition). Ending it writes a
// row in the audit log when the call is audited (the audit log shows what
// was asked as well as what ran: refusals, not malformed requests), gives
// OnCall its CallRecord, and puts the outcome on the call's span.
type callRec struct {
	h    *Host
	ctx  context.Context // the call's: its span, its script run
	args json.RawMessage
	opts *CallOptions
	// start is when the call went out; zero for a call that never did,
	// whose record starts when it ends.
	start time.Time
	// server and tool are the tool's server and canonical ID once it is
	// catalogued; until then tool is the name as asked.
	server, tool string
	catalogued   bool
	audited      bool
	argSecrets   []SecretDecision // credentials found in the arguments (screenArgs)
}

// startCall starts the record of a call of name.
func (h *Host) startCall(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) *callRec {
	return &callRec{h: h, ctx: ctx, tool: name, args: args, opts: opts}
}

// of records that the call is of a tool of the catalogue (a built-in one
// has no server).
func (r *callRec) of(server, tool string) {
	r.server, r.tool, r.catalogued = server, tool, true
}

// sent records that the call goes out now.
func (r *callRec) sent() { r.start = time.Now() }

// end records the call's end. It is called once.
func (r *callRec) end(res *Result, err error) {
	h := r.h
	if !h.observing() && h.tracer == nil {
		return
	}
	start := r.start
	if start.IsZero() {
		start = time.Now()
	}
	rec := callRecord(r.server, r.tool, r.catalogued, r.opts, r.args, start, res, err)
	rec.Run = runOf(r.ctx)
	if len(r.argSecrets) > 0 {
		rec.Secrets = append(r.argSecrets[:len(r.argSecrets):len(r.argSecrets)], rec.Secrets...)
	}
	if r.audited && h.audit.on() {
		h.audit.record(auditRow(&rec, r.args))
	}
	h.observe(&rec)
	if h.tracer != nil {
		endSpan(trace.SpanFromContext(r.ctx), &rec, err)
	}
}
