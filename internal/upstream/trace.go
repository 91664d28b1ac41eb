package upstream

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-mcp/switchboard/internal/era"
)

// Tracing: with Options.TracerProvider, every request sent to a server
// within a traced call (a context that holds a span) is a client span, a
// child of that call's span, and carries the W3C trace context to the
// server: in _meta ("traceparent", "tracestate"), to every server, and in
// the HTTP headers of the request to an HTTP server. Requests outside a
// traced call (discovery at start-up, re-listing) make no span.

// The attributes of Switchboard's spans (the host re-exports them).
const (
	AttrServer  = "switchboard.server"  // the configured server's name
	AttrTool    = "switchboard.tool"    // the tool's name (as asked at the host; the server's own name upstream)
	AttrEra     = "switchboard.era"     // the connection's protocol era: "modern" or "legacy"
	AttrOutcome = "switchboard.outcome" // ok, tool_error (the tool ran and failed) or error
	AttrCode    = "switchboard.code"    // the fault code of an error; upstream, the JSON-RPC error code
)

// TracerName names Switchboard's tracer (its instrumentation scope).
const TracerName = "github.com/switchboard-mcp/switchboard"

// traceContext is the W3C Trace Context propagator.
var traceContext = propagation.TraceContext{}

// EraOf names the era of a protocol version, for AttrEra.
func EraOf(version string) string {
	switch {
	case era.Modern(version):
		return "modern"
	case era.Legacy(version):
		return "legacy"
	}
	return ""
}

// traceMiddleware is the client's sending middleware that makes a span per
// request and puts the trace context in its _meta.
func (c *Conn) traceMiddleware(tracer trace.Tracer) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") || !trace.SpanContextFromContext(ctx).IsValid() {
				return next(ctx, method, req)
			}
			attrs := []attribute.KeyValue{
				attribute.String(AttrServer, c.server.Name),
				attribute.String(AttrEra, EraOf(c.info.ProtocolVersion)),
			}
			if p, ok := req.GetParams().(*mcp.CallToolParams); ok && p != nil {
				attrs = append(attrs, attribute.String(AttrTool, p.Name))
			}
			ctx, span := tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
			defer span.End()
			if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
				m := maps.Clone(p.GetMeta())
				if m == nil {
					m = map[string]any{}
				}
				traceContext.Inject(ctx, metaCarrier(m))
				p.SetMeta(m)
			}
			res, err := next(ctx, method, req)
			switch r, _ := res.(*mcp.CallToolResult); {
			case err != nil:
				span.SetAttributes(attribute.String(AttrOutcome, "error"))
				if code := jsonrpcCode(err); code != 0 {
					span.SetAttributes(attribute.Int64(AttrCode, code))
				}
				span.SetStatus(codes.Error, err.Error())
			case r != nil && r.IsError:
				span.SetAttributes(attribute.String(AttrOutcome, "tool_error"))
			default:
				span.SetAttributes(attribute.String(AttrOutcome, "ok"))
			}
			return res, err
		}
	}
}

// injectHeaders puts the trace context of req's context, if it holds a
// span, in a copy of req's headers.
func injectHeaders(req *http.Request) *http.Request {
	ctx := req.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return req
	}
	req = req.Clone(ctx)
	traceContext.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return req
}

// metaCarrier carries the trace context in a request's _meta.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	return []string{"traceparent", "tracestate"}
}

// jsonrpcCode is the JSON-RPC error code of err; 0 for another error.
func jsonrpcCode(err error) int64 {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return rpc.Code
	}
	return 0
}
