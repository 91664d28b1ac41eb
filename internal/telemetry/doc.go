// Package telemetry is what an operator of `switchboard serve` watches:
// the Prometheus metrics served at /metrics (metrics.go), OpenTelemetry
// tracing configured from the standard OTEL_* environment variables
// (tracing.go), and the log line per call (log.go).
//
// It reads the host through plain values (host.CallRecord,
// host.ServerEvent) and a small Source interface, so that the host knows
// nothing of Prometheus; it keeps its metrics in its own registry, never
// the global one.
package telemetry
