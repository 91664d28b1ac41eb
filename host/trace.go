package host

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// Tracing: with Options.TracerProvider, each Call is a span, a child of
// the span in the call's context (the gateway's request), and the parent
// of the upstream request's span. The attributes of the spans Switchboard
// makes, here, in the gateway and in upstream.
const (
	AttrServer  = upstream.AttrServer  // the configured server's name
	AttrTool    = upstream.AttrTool    // the tool's name as asked; its canonical ID once found
	AttrEra     = upstream.AttrEra     // the connection's protocol era: "modern" or "legacy"
	AttrOutcome = upstream.AttrOutcome // ok, tool_error, error (CallRecord.Outcome)
	AttrCode    = upstream.AttrCode    // the fault code of an error

	// On a call's span: who called, as it authenticated (a named client,
	// or a verified identity; absent for the operator), through which
	// profile, and the name the client gave itself (clientInfo.name, as
	// declared: never a key).
	AttrCaller     = "switchboard.caller"
	AttrProfile    = "switchboard.profile"
	AttrClientName = "switchboard.client_name"
	// AttrAs is who the upstream saw the call made by: the subject of
	// the caller's own grant, for a server with "oauth.perCaller".
	AttrAs = "switchboard.upstream_as"
)

// TracerName names Switchboard's tracer (its instrumentation scope).
const TracerName = upstream.TracerName

// endSpan puts a call's outcome on its span.
func endSpan(span trace.Span, rec *CallRecord, err error) {
	attrs := make([]attribute.KeyValue, 0, 8)
	for _, a := range [...]struct{ key, val string }{{AttrCaller, rec.Client}, {AttrProfile, rec.Profile}, {AttrClientName, rec.ClientName}, {AttrAs, rec.As}} {
		if a.val != "" {
			attrs = append(attrs, attribute.String(a.key, a.val))
		}
	}
	if rec.Server != "" {
		attrs = append(attrs, attribute.String(AttrServer, rec.Server))
	}
	if rec.Catalogued {
		attrs = append(attrs, attribute.String(AttrTool, rec.Tool))
	}
	attrs = append(attrs, attribute.String(AttrOutcome, rec.Outcome))
	if rec.Code != "" {
		attrs = append(attrs, attribute.String(AttrCode, rec.Code))
	}
	span.SetAttributes(attrs...)
	if err != nil {
		span.SetStatus(codes.Error, rec.Code)
	}
}
