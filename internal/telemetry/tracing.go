package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracing follows the OpenTelemetry environment variables
// (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/),
// except that it is off unless asked for:
//
//   - OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none: off;
//   - OTEL_TRACES_EXPORTER=otlp: on;
//   - unset: on when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
//     OTEL_EXPORTER_OTLP_ENDPOINT is set, else off;
//   - any other exporter is refused.
//
// Spans go to an OTLP collector over HTTP with protobuf
// (OTEL_EXPORTER_OTLP_PROTOCOL, or its _TRACES_ form, may be unset or
// http/protobuf; grpc and http/json are refused). The endpoint is
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, or
// OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces appended (default
// http://localhost:4318/v1/traces); headers, timeout, compression,
// certificates, the sampler (OTEL_TRACES_SAMPLER, default parent-based
// always-on) and the resource (OTEL_SERVICE_NAME, default "switchboard";
// OTEL_RESOURCE_ATTRIBUTES) are read from the process's environment by the
// OpenTelemetry SDK.

// Tracing is a running tracer provider.
type Tracing struct {
	Provider trace.TracerProvider
	sdk      *sdktrace.TracerProvider
}

// Shutdown sends the spans still queued and stops the exporter, bounded
// by ctx.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.sdk.Shutdown(ctx)
}

// NewTracing starts the tracer provider that the environment (read
// through lookup) asks for; nil, nil when tracing is off.
func NewTracing(ctx context.Context, lookup func(string) (string, bool), version string) (*Tracing, error) {
	get := func(k string) string {
		v, _ := lookup(k)
		return strings.TrimSpace(v)
	}
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	tracesEndpoint, endpoint := get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), get("OTEL_EXPORTER_OTLP_ENDPOINT")
	switch exp := get("OTEL_TRACES_EXPORTER"); exp {
	case "none":
		return nil, nil
	case "":
		if tracesEndpoint == "" && endpoint == "" {
			return nil, nil
		}
	case "otlp":
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: only otlp (or none) is supported", exp)
	}
	protocol := get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = get("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if protocol != "" && protocol != "http/protobuf" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: only http/protobuf is supported", protocol)
	}
	var opts []otlptracehttp.Option
	switch {
	case tracesEndpoint != "":
		opts = append(opts, otlptracehttp.WithEndpointURL(tracesEndpoint))
	case endpoint != "":
		opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimSuffix(endpoint, "/")+"/v1/traces"))
	}
	exporter, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", "switchboard"), attribute.String("service.version", version)}
	if name := get("OTEL_SERVICE_NAME"); name != "" {
		attrs[0] = attribute.String("service.name", name)
	}
	res, err := resource.Merge(resource.Environment(), resource.NewSchemaless(attrs...))
	if err != nil {
		res = resource.NewSchemaless(attrs...)
	}
	sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	return &Tracing{Provider: sdk, sdk: sdk}, nil
}
