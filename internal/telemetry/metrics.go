package telemetry

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
)

// Source is what the metrics read from a host at each scrape.
type Source interface {
	Servers() []host.ServerStatus
	CallsInFlight() map[string]int
	SpillBytes() int
	StoreUp() bool
	AuditStats() hostlink.AuditStats
}

// OtherTool is the tool label of a call whose name matched no tool of the
// catalogue: label values stay a bounded set, whatever clients send.
const OtherTool = "other"

// The states a server may be in, for switchboard_server_state.
var states = []host.State{
	host.StateReady, host.StateIdle, host.StateStarting, host.StateDegraded, host.StateBackoff,
	host.StateFailed, host.StateDisabled, host.StateClosed, host.StateMisconfigured, host.StateHeld,
}

// Metrics are the gateway's Prometheus metrics, in a registry of their
// own. Counters are fed by Call, Event and Refused; gauges are read from
// the Source at each scrape. It is safe for concurrent use.
type Metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec   // server, tool, outcome, code
	callers  *prometheus.CounterVec   // caller, outcome
	latency  *prometheus.HistogramVec // server
	events   *prometheus.CounterVec   // server, event
	launches *prometheus.CounterVec   // server, decision
	sandbox  *prometheus.CounterVec   // server, mode, outcome
	refusals *prometheus.CounterVec   // reason
	secrets  *prometheus.CounterVec   // direction, rule, action
	gates    *prometheus.CounterVec   // server, decision
	grants   *prometheus.CounterVec   // server, decision
}

// NewMetrics returns the metrics of the host src.
func NewMetrics(src Source) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_calls_total",
			Help: "Tool calls, by server, tool (its canonical ID; \"other\" for a name that matched none), outcome (ok, tool_error, error) and fault code.",
		}, []string{"server", "tool", "outcome", "code"}),
		callers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_caller_calls_total",
			Help: "Tool calls by caller (a named client's name, \"jwt\" for a verified identity that names none, \"operator\" for the static token and callers it does not tell apart) and outcome.",
		}, []string{"caller", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "switchboard_call_duration_seconds",
			Help:    "Latency of tool calls, by server.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"server"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_server_events_total",
			Help: "Changes in servers' lives: exited (the connection or process ended), restarted, backoff (a start-up attempt failed, the next is scheduled), failed (no more are), relisted (lists discovered again), sandbox (a stdio server started or refused under its sandbox), sandbox_limit (its memory limit killed a process, or its process limit refused one).",
		}, []string{"server", "event"}),
		launches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_launch_pin_decisions_total",
			Help: "Decisions about servers' launches (docs/PINS.md), by server and decision: pinned (at a first start), approved (by a person), held (not started until approved), warned (would have been held; security.onLaunchChange: warn).",
		}, []string{"server", "decision"}),
		sandbox: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_sandbox_starts_total",
			Help: "Starts of stdio servers by sandbox mode (off, report, on, required) and outcome (enforced, partial: a protection missing here, report, off, refused: required and a protection missing).",
		}, []string{"server", "mode", "outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_frontdoor_refusals_total",
			Help: "HTTP requests the front door refused, and connections it closed because too many had not authenticated (conn_evicted), by reason.",
		}, []string{"reason"}),
		secrets: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_secret_decisions_total",
			Help: "Credentials found in tool calls, by direction (arguments, results), rule (github-token, jwt, ...) and action (redacted, flagged, blocked; would_redact, would_block in report-only mode); and servers' forms that asked for one (direction elicitation, rule password, token, card or code).",
		}, []string{"direction", "rule", "action"}),
		grants: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_caller_grant_decisions_total",
			Help: "Calls to servers with oauth.perCaller by server and decision: own (the caller's own grant), exchanged (a token exchanged for the caller's), needs_login (refused: the caller has none); would_own, would_login in report-only mode (the server's one grant was used).",
		}, []string{"server", "decision"}),
	}
	m.gates = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchboard_call_gates_total",
		Help: "Per-call approval and data-flow decisions, by server and decision: calls held, used (made on an approval), refused (denied), expired, flow_blocked; a person's decisions approved and denied; would_hold and would_block in report-only mode.",
	}, []string{"server", "decision"})
	m.reg.MustRegister(m.calls, m.callers, m.latency, m.events, m.launches, m.sandbox, m.refusals, m.secrets, m.gates, m.grants, &gauges{src: src})
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Registry is the metrics' own registry.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Call counts one finished call (host.Options.OnCall).
func (m *Metrics) Call(rec host.CallRecord) {
	if rec.Gate != "" {
		m.gates.WithLabelValues(rec.Server, rec.Gate).Inc()
	}
	if rec.Outcome == host.OutcomeGuard {
		return // a person's decision on a held call, not a call
	}
	tool := rec.Tool
	if !rec.Catalogued {
		tool = OtherTool
	}
	m.calls.WithLabelValues(rec.Server, tool, rec.Outcome, rec.Code).Inc()
	m.callers.WithLabelValues(callerLabel(rec.Client), rec.Outcome).Inc()
	m.latency.WithLabelValues(rec.Server).Observe(rec.Latency.Seconds())
	for _, d := range rec.Secrets {
		m.secrets.WithLabelValues(d.Direction, d.Rule, d.Action).Inc()
	}
	if rec.Grant != "" {
		m.grants.WithLabelValues(rec.Server, rec.Grant).Inc()
	}
}

// callerLabel is a call's caller as a label of bounded cardinality: a
// named client's configured name as it is, every verified identity that
// names no client ("sub:<subject>") as "jwt", and the rest as "operator".
func callerLabel(client string) string {
	switch {
	case client == "":
		return "operator"
	case strings.HasPrefix(client, "sub:"):
		return "jwt"
	}
	return client
}

// Event counts one change in a server's life (host.Options.OnEvent).
func (m *Metrics) Event(ev host.ServerEvent) {
	if ev.Kind == host.EventLaunch {
		m.launches.WithLabelValues(ev.Server, ev.Decision).Inc()
		return
	}
	m.events.WithLabelValues(ev.Server, string(ev.Kind)).Inc()
	if ev.Kind == host.EventElicitation {
		m.secrets.WithLabelValues(host.SecretsElicitation, ev.Rule, ev.Decision).Inc()
	}
	if ev.Kind == host.EventSandbox {
		m.sandbox.WithLabelValues(ev.Server, ev.Sandbox, ev.Outcome).Inc()
	}
}

// Refused counts one request refused, or one connection closed, by the front door
// (frontdoor.Options.OnRefuse).
func (m *Metrics) Refused(reason string) {
	m.refusals.WithLabelValues(reason).Inc()
}

// gauges are read from the host at each scrape.
type gauges struct{ src Source }

var (
	stateDesc = prometheus.NewDesc("switchboard_server_state",
		"1 for the state each server is in (ready, idle, starting, degraded, backoff, failed, disabled, closed, misconfigured), 0 for the others.",
		[]string{"server", "state"}, nil)
	inFlightDesc = prometheus.NewDesc("switchboard_calls_in_flight",
		"Tool calls in progress, by server.", []string{"server"}, nil)
	heldDesc = prometheus.NewDesc("switchboard_held_definitions",
		"Tool definitions held back until approved, by server and why (changed: the definition changed since it was approved; injection: its metadata matches an injection pattern).",
		[]string{"server", "reason"}, nil)
	spillDesc = prometheus.NewDesc("switchboard_spill_bytes",
		"Bytes held by the store of large results.", nil, nil)
	storeUpDesc = prometheus.NewDesc("switchboard_store_up",
		"1 while the state store answers and takes audit rows, 0 while it does not (the gateway serves from memory and audit rows wait).", nil, nil)
	auditWaitingDesc = prometheus.NewDesc("switchboard_audit_rows_waiting",
		"Audit rows the store refused, kept for retry (a bounded queue).", nil, nil)
	auditDroppedDesc = prometheus.NewDesc("switchboard_audit_rows_dropped_total",
		"Audit rows lost: the retry queue was full, or the store still refused them at shutdown.", nil, nil)
)

func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- stateDesc
	ch <- inFlightDesc
	ch <- heldDesc
	ch <- spillDesc
	ch <- storeUpDesc
	ch <- auditWaitingDesc
	ch <- auditDroppedDesc
}

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	inFlight := g.src.CallsInFlight()
	for _, s := range g.src.Servers() {
		for _, st := range states {
			v := 0.0
			if s.State == st {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, v, s.Name, string(st))
		}
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(inFlight[s.Name]), s.Name)
		ch <- prometheus.MustNewConstMetric(heldDesc, prometheus.GaugeValue, float64(len(s.Held)), s.Name, "changed")
		ch <- prometheus.MustNewConstMetric(heldDesc, prometheus.GaugeValue, float64(len(s.HeldInjection)), s.Name, "injection")
	}
	ch <- prometheus.MustNewConstMetric(spillDesc, prometheus.GaugeValue, float64(g.src.SpillBytes()))
	up := 0.0
	if g.src.StoreUp() {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(storeUpDesc, prometheus.GaugeValue, up)
	a := g.src.AuditStats()
	ch <- prometheus.MustNewConstMetric(auditWaitingDesc, prometheus.GaugeValue, float64(a.Waiting))
	ch <- prometheus.MustNewConstMetric(auditDroppedDesc, prometheus.CounterValue, float64(a.Dropped))
}
