package gateway

import (
	"context"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-mcp/switchboard/host"
)

// Tracing: with Options.TracerProvider, every request from a client is a
// server span, the parent of the host's span for a tool call. Its parent
// is the client's trace context: the W3C traceparent in the request's
// _meta, or else in its HTTP headers.

// traceContext is the W3C Trace Context propagator.
var traceContext = propagation.TraceContext{}

// traceRequests is the receiving middleware that makes a span per request.
func traceRequests(tracer trace.Tracer) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			ctx = remoteContext(ctx, req)
			var attrs []attribute.KeyValue
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
				attrs = append(attrs, attribute.String(host.AttrTool, p.Name))
			}
			ctx, span := tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
			defer span.End()
			res, err := next(ctx, method, req)
			switch r := toolResult(res); {
			case err != nil:
				span.SetAttributes(attribute.String(host.AttrOutcome, host.OutcomeError))
				span.SetStatus(codes.Error, err.Error())
			case r != nil && r.IsError:
				span.SetAttributes(attribute.String(host.AttrOutcome, host.OutcomeToolError))
			case r != nil:
				span.SetAttributes(attribute.String(host.AttrOutcome, host.OutcomeOK))
			}
			return res, err
		}
	}
}

// remoteContext is ctx with the client's trace context, from the request's
// _meta or else its HTTP headers; ctx when it sent none.
func remoteContext(ctx context.Context, req mcp.Request) context.Context {
	if p := req.GetParams(); p != nil {
		if m := metaOf(p); m != nil {
			if _, ok := m["traceparent"].(string); ok {
				return traceContext.Extract(ctx, metaCarrier(m))
			}
		}
	}
	if extra := req.GetExtra(); extra != nil && extra.Header != nil {
		return traceContext.Extract(ctx, propagation.HeaderCarrier(extra.Header))
	}
	return ctx
}

// metaOf is a request's _meta; nil for params that are a nil pointer.
func metaOf(p mcp.Params) map[string]any {
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p.GetMeta()
}

// metaCarrier reads the trace context from a request's _meta.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string { return []string{"traceparent", "tracestate"} }

// toolResult is the tools/call result res, spliced or not; nil for
// another result.
func toolResult(res mcp.Result) *mcp.CallToolResult {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r
	case *splicedResult:
		return r.CallToolResult
	}
	return nil
}
