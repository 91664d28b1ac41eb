package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

func TestMain(m *testing.M) {
	testkit.MaybeRunChild()
	os.Exit(m.Run())
}

// later is a Source whose host is set once it is open.
type later struct{ h atomic.Pointer[host.Host] }

func (l *later) Servers() []host.ServerStatus    { return l.h.Load().Servers() }
func (l *later) CallsInFlight() map[string]int   { return hostlink.Of(l.h.Load()).CallsInFlight() }
func (l *later) SpillBytes() int                 { return hostlink.Of(l.h.Load()).SpillBytes() }
func (l *later) StoreUp() bool                   { return hostlink.Of(l.h.Load()).StoreUp() }
func (l *later) AuditStats() hostlink.AuditStats { return hostlink.Of(l.h.Load()).AuditStats() }

// TestMetrics: calls through a real host are counted by server, tool,
// outcome and code, a name that matched no tool as "other", whatever it
// says; states, calls in flight, held definitions and spill bytes are read
// at the scrape; refusals by reason.
func TestMetrics(t *testing.T) {
	exe, _ := os.Executable()
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"kit": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer), "eager": true},
		"off": map[string]any{"command": exe, "enabled": false},
	}})
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	src := &later{}
	m := telemetry.NewMetrics(src)
	h, err := host.Open(context.Background(), cfg, &host.Options{Ephemeral: true, OnCall: m.Call, OnEvent: m.Event, StopTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	src.h.Store(h)
	ctx := context.Background()
	h.Call(ctx, "kit__echo", json.RawMessage(`{"text":"a"}`), &host.CallOptions{Client: "ci"})
	h.Call(ctx, "kit__echo", json.RawMessage(`{"text":"b"}`), &host.CallOptions{Client: "sub:some-person"})
	h.Call(ctx, "kit__fail", nil, nil)
	for _, name := range []string{"kit__made_up_1", "kit__made_up_2", "nothing"} {
		h.Call(ctx, name, nil, nil)
	}
	m.Refused("no_token")

	fams := scrape(t, m)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"switchboard_calls_total", map[string]string{"server": "kit", "tool": "kit:echo", "outcome": "ok", "code": ""}, 2},
		{"switchboard_calls_total", map[string]string{"server": "kit", "tool": "kit:fail", "outcome": "tool_error", "code": ""}, 1},
		{"switchboard_calls_total", map[string]string{"server": "", "tool": telemetry.OtherTool, "outcome": "error", "code": "not_found"}, 3},
		{"switchboard_caller_calls_total", map[string]string{"caller": "ci", "outcome": "ok"}, 1},
		{"switchboard_caller_calls_total", map[string]string{"caller": "jwt", "outcome": "ok"}, 1},
		{"switchboard_caller_calls_total", map[string]string{"caller": "operator", "outcome": "error"}, 3},
		{"switchboard_call_duration_seconds", map[string]string{"server": "kit"}, 3},
		{"switchboard_server_state", map[string]string{"server": "kit", "state": "ready"}, 1},
		{"switchboard_server_state", map[string]string{"server": "off", "state": "disabled"}, 1},
		{"switchboard_server_state", map[string]string{"server": "off", "state": "ready"}, 0},
		{"switchboard_calls_in_flight", map[string]string{"server": "kit"}, 0},
		{"switchboard_held_definitions", map[string]string{"server": "kit", "reason": "injection"}, 0},
		{"switchboard_spill_bytes", map[string]string{}, 0},
		{"switchboard_store_up", map[string]string{}, 1},
		{"switchboard_audit_rows_waiting", map[string]string{}, 0},
		{"switchboard_audit_rows_dropped_total", map[string]string{}, 0},
		{"switchboard_frontdoor_refusals_total", map[string]string{"reason": "no_token"}, 1},
	} {
		if got := value(fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				if strings.Contains(l.GetValue(), "made_up") || l.GetValue() == "nothing" || strings.Contains(l.GetValue(), "some-person") {
					t.Errorf("%s has a label value a client chose: %s=%q", f.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
}

func scrape(t *testing.T, m *telemetry.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the metrics: %v", err)
	}
	return fams
}

// value is the value of the metric of family name with exactly labels;
// -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	for _, mt := range fams[name].GetMetric() {
		got := map[string]string{}
		for _, l := range mt.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := len(got) == len(labels)
		for k, v := range labels {
			if got[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case mt.Counter != nil:
			return mt.Counter.GetValue()
		case mt.Gauge != nil:
			return mt.Gauge.GetValue()
		case mt.Histogram != nil:
			return float64(mt.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestTracingFromEnv: tracing is off unless the OTEL_* variables ask for
// it, and a configuration it cannot honour is refused.
func TestTracingFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantOn  bool
		wantErr string
	}{
		{"nothing set", nil, false, ""},
		{"an endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, ""},
		{"a traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true, ""},
		{"otlp named", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, ""},
		{"none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, false, ""},
		{"SDK disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false, ""},
		{"another exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, "only otlp"},
		{"grpc", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, "only http/protobuf"},
		{"http/protobuf", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			tr, err := telemetry.NewTracing(context.Background(), lookup, "test")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if on := tr != nil; on != tt.wantOn {
				t.Fatalf("tracing on: %v, want %v", on, tt.wantOn)
			}
			if tr != nil {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := tr.Shutdown(ctx); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// BenchmarkObserveCall: what a call costs the gateway's observer: its
// counter, its histogram and its log line (to a discarding handler of
// each format).
func BenchmarkObserveCall(b *testing.B) {
	m := telemetry.NewMetrics(&later{})
	rec := host.CallRecord{Start: time.Now(), Latency: 300 * time.Microsecond, Client: "c", Server: "kit", Tool: "kit:echo", Catalogued: true, Outcome: host.OutcomeOK}
	b.Run("metrics", func(b *testing.B) {
		for b.Loop() {
			m.Call(rec)
		}
	})
	for _, h := range []slog.Handler{slog.NewTextHandler(io.Discard, nil), slog.NewJSONHandler(io.Discard, nil)} {
		log := slog.New(h)
		b.Run(fmt.Sprintf("log-%T", h), func(b *testing.B) {
			for b.Loop() {
				telemetry.LogCall(log, rec)
			}
		})
	}
}

// storeDown is a Source whose store does not answer and whose audit rows
// wait and were dropped.
type storeDown struct{}

func (storeDown) Servers() []host.ServerStatus    { return nil }
func (storeDown) CallsInFlight() map[string]int   { return nil }
func (storeDown) SpillBytes() int                 { return 0 }
func (storeDown) StoreUp() bool                   { return false }
func (storeDown) AuditStats() hostlink.AuditStats { return hostlink.AuditStats{Waiting: 7, Dropped: 3} }

// TestStoreMetrics: a store that does not answer, and the audit queue, are
// read at the scrape.
func TestStoreMetrics(t *testing.T) {
	fams := scrape(t, telemetry.NewMetrics(storeDown{}))
	for _, tt := range []struct {
		name string
		want float64
	}{
		{"switchboard_store_up", 0},
		{"switchboard_audit_rows_waiting", 7},
		{"switchboard_audit_rows_dropped_total", 3},
	} {
		if got := value(fams, tt.name, map[string]string{}); got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestSecretMetrics: each credential found in a call is counted by
// direction, rule and action, and no label holds the credential.
func TestSecretMetrics(t *testing.T) {
	exe, _ := os.Executable()
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"kit": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer)},
	}})
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	src := &later{}
	m := telemetry.NewMetrics(src)
	h, err := host.Open(context.Background(), cfg, &host.Options{Ephemeral: true, OnCall: m.Call, StopTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	src.h.Store(h)
	if _, err := h.Call(context.Background(), "kit__echo", json.RawMessage(`{"text":"`+testkit.RevealToken+`"}`), nil); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, m)
	for _, c := range []map[string]string{
		{"direction": "arguments", "rule": "github-token", "action": "flagged"},
		{"direction": "results", "rule": "github-token", "action": "redacted"},
	} {
		if got := value(fams, "switchboard_secret_decisions_total", c); got != 1 {
			t.Errorf("switchboard_secret_decisions_total%v = %v, want 1", c, got)
		}
	}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				if strings.Contains(l.GetValue(), testkit.RevealToken[4:20]) {
					t.Errorf("%s has the token in a label", f.GetName())
				}
			}
		}
	}
}

// TestLaunchDecisionMetric: a decision about a server's launch is counted
// by server and decision, not as a server event.
func TestLaunchDecisionMetric(t *testing.T) {
	m := emptyMetrics(t)
	m.Event(host.ServerEvent{Server: "kit", Kind: host.EventLaunch, Decision: host.LaunchHeld})
	m.Event(host.ServerEvent{Server: "kit", Kind: host.EventLaunch, Decision: host.LaunchHeld})
	m.Event(host.ServerEvent{Server: "kit", Kind: host.EventLaunch, Decision: host.LaunchApproved})
	fams := scrape(t, m)
	for decision, want := range map[string]float64{"held": 2, "approved": 1} {
		if got := value(fams, "switchboard_launch_pin_decisions_total", map[string]string{"server": "kit", "decision": decision}); got != want {
			t.Errorf("decisions %s = %v, want %v", decision, got, want)
		}
	}
	if got := value(fams, "switchboard_server_events_total", map[string]string{"server": "kit", "event": "launch"}); got != -1 {
		t.Errorf("a launch decision counted as a server event: %v", got)
	}
}

// TestElicitationSecretMetric: a server's form that asked for a
// credential is counted among the secret decisions, direction
// elicitation, by what it asked for and what was done.
func TestElicitationSecretMetric(t *testing.T) {
	m := emptyMetrics(t)
	m.Event(host.ServerEvent{Server: "x", Kind: host.EventElicitation, Decision: host.SecretBlocked, Rule: "token"})
	m.Event(host.ServerEvent{Server: "x", Kind: host.EventElicitation, Decision: host.SecretFlagged, Rule: "password"})
	fams := scrape(t, m)
	for _, c := range []struct{ rule, action string }{{"token", "blocked"}, {"password", "flagged"}} {
		if got := value(fams, "switchboard_secret_decisions_total", map[string]string{"direction": "elicitation", "rule": c.rule, "action": c.action}); got != 1 {
			t.Errorf("%s %s = %v, want 1", c.rule, c.action, got)
		}
	}
}

// TestCallerGrantMetric: the decisions about callers' own grants are
// counted by server and decision; calls without one are not.
func TestCallerGrantMetric(t *testing.T) {
	m := emptyMetrics(t)
	for _, g := range []string{host.GrantOwn, host.GrantOwn, host.GrantNeedsLogin, host.GrantWouldLogin, ""} {
		m.Call(host.CallRecord{Server: "gh", Tool: "gh:whoami", Catalogued: true, Outcome: host.OutcomeOK, Grant: g})
	}
	fams := scrape(t, m)
	for decision, want := range map[string]float64{"own": 2, "needs_login": 1, "would_login": 1, "exchanged": -1} {
		if got := value(fams, "switchboard_caller_grant_decisions_total", map[string]string{"server": "gh", "decision": decision}); got != want {
			t.Errorf("decisions %s = %v, want %v", decision, got, want)
		}
	}
}

// emptyMetrics returns the metrics of a host with no servers, closed when
// the test ends.
func emptyMetrics(t *testing.T) *telemetry.Metrics {
	t.Helper()
	cfg, err := config.Parse([]byte(`{"mcpServers": {}}`), "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Open(context.Background(), cfg, &host.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	src := &later{}
	src.h.Store(h)
	return telemetry.NewMetrics(src)
}
