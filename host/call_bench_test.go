package host_test

import (
	"context"
	"encoding/json"
	"runtime"
	"sync/atomic"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// BenchmarkCallParallel: 16 callers spread over four servers. A call takes
// no Host lock, so calls to different servers do not wait for each other.
func BenchmarkCallParallel(b *testing.B) {
	servers := map[string]any{}
	names := []string{"a__echo", "b__echo", "c__echo", "d__echo"}
	for _, n := range []string{"a", "b", "c", "d"} {
		servers[n] = child(b, testkit.ModeServer, nil)
	}
	h := open(b, parse(b, servers, nil))
	args := json.RawMessage(`{"text":"x"}`)
	for _, n := range names {
		call(b, h, n, string(args))
	}
	var next atomic.Int64
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0))) // 16 callers
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		name := names[next.Add(1)%int64(len(names))]
		for pb.Next() {
			if _, err := h.Call(context.Background(), name, args, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkCallObserved: one caller, one server; what an observer
// (OnCall) and tracing (spans recorded by the OpenTelemetry SDK, nothing
// exported) add to a call, against neither.
func BenchmarkCallObserved(b *testing.B) {
	for _, c := range []struct {
		name string
		opts host.Options
	}{
		{"off", host.Options{Ephemeral: true}},
		{"observer", host.Options{Ephemeral: true, OnCall: func(host.CallRecord) {}, OnEvent: func(host.ServerEvent) {}}},
		{"traced", host.Options{Ephemeral: true, TracerProvider: sdktrace.NewTracerProvider()}},
	} {
		b.Run(c.name, func(b *testing.B) {
			opts := c.opts
			opts.StopTimeout = fastOpts.StopTimeout
			h := openWith(b, parse(b, map[string]any{"a": child(b, testkit.ModeServer, nil)}, nil), &opts)
			args := json.RawMessage(`{"text":"x"}`)
			call(b, h, "a__echo", string(args))
			ctx, span := sdktrace.NewTracerProvider().Tracer("bench").Start(context.Background(), "client")
			defer span.End()
			for b.Loop() {
				if _, err := h.Call(ctx, "a__echo", args, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
