package cli_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// observeToken is the bearer token of the gateways these tests start.
const observeToken = "observe-test-token-0123456789abcdef"

// startServe runs `switchboard serve --http 127.0.0.1:0` with env as its
// whole environment (plus a fresh home and the token) until the test ends
// or stop is called.
func startServe(t *testing.T, env map[string]string, args ...string) *gatewayRun {
	t.Helper()
	env = withEnv(env, "SWITCHBOARD_HOME", t.TempDir())
	env["OBSERVE_TOKEN"] = observeToken
	return startGateway(t, env, "", append([]string{"--token-env", "OBSERVE_TOKEN"}, args...)...)
}

// headerTransport adds the bearer token, and a traceparent header when
// one is set, to every request.
type headerTransport struct {
	token string // "" means observeToken

	mu          sync.Mutex
	traceparent string
}

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	tok := h.token
	if tok == "" {
		tok = observeToken
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	h.mu.Lock()
	if h.traceparent != "" {
		req.Header.Set("traceparent", h.traceparent)
	}
	h.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func (h *headerTransport) set(tp string) {
	h.mu.Lock()
	h.traceparent = tp
	h.mu.Unlock()
}

// scrape reads the gateway's /metrics with the token and parses it with
// the Prometheus text parser.
func scrape(t *testing.T, g *gatewayRun) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+observeToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// value is the value of the metric of family name whose labels include
// want; -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if got[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// serverPID finds the stdio server child of this process whose
// environment holds marker.
func serverPID(t *testing.T, marker string) int {
	t.Helper()
	var pid int
	find := func() bool {
		for _, c := range proc.Live(proc.Children(os.Getpid())) {
			env, err := os.ReadFile(filepath.Join("/proc", itoa(c.PID), "environ"))
			if err == nil && bytes.Contains(env, []byte(marker)) {
				pid = c.PID
				return true
			}
		}
		return false
	}
	if !proc.Eventually(10*time.Second, find) {
		t.Fatal("the stdio server's process was not found")
	}
	return pid
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestServeMetricsAndLog: after real calls through a real gateway,
// /metrics (behind the token) parses with the Prometheus text parser and
// counts them by server, tool, outcome and code, a name that matched no
// tool only as "other"; every call has its log line, in text and in JSON;
// a killed server's exit is logged with its status, its restart too, and
// both are counted.
func TestServeMetricsAndLog(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			exe, _ := os.Executable()
			marker := filepath.Join(t.TempDir(), "mark-"+format)
			env := testkit.ChildEnv(testkit.ModeServer)
			env[testkit.MarkVar] = marker
			path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
				"kit": map[string]any{"command": exe, "env": env, "eager": true},
			}})
			g := startServe(t, map[string]string{}, "--config", path, "--log-format", format)
			cs := connect(t, g, &headerTransport{})
			ctx := context.Background()
			call := func(name string, args map[string]any) *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					return nil
				}
				return res
			}
			if res := call("kit__echo", map[string]any{"text": "secret-argument"}); res == nil || res.IsError {
				t.Fatalf("echo: %+v\n%s", res, g.stderr.String())
			}
			if res := call("kit__fail", nil); res == nil || !res.IsError {
				t.Fatalf("fail: %+v", res)
			}
			call("kit__made_up_by_the_client", nil)

			// Without the token, /metrics is refused (and the refusal counted).
			resp, err := http.Get(g.base + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET /metrics without a token: %s, want 401", resp.Status)
			}

			fams := scrape(t, g)
			for _, c := range []struct {
				name   string
				labels map[string]string
				want   float64
			}{
				{"switchboard_calls_total", map[string]string{"server": "kit", "tool": "kit:echo", "outcome": "ok", "code": ""}, 1},
				{"switchboard_calls_total", map[string]string{"server": "kit", "tool": "kit:fail", "outcome": "tool_error"}, 1},
				{"switchboard_calls_total", map[string]string{"server": "", "tool": "other", "outcome": "error", "code": "not_found"}, 1},
				{"switchboard_call_duration_seconds", map[string]string{"server": "kit"}, 2},
				{"switchboard_server_state", map[string]string{"server": "kit", "state": "ready"}, 1},
				{"switchboard_server_state", map[string]string{"server": "kit", "state": "failed"}, 0},
				{"switchboard_calls_in_flight", map[string]string{"server": "kit"}, 0},
				{"switchboard_held_definitions", map[string]string{"server": "kit", "reason": "changed"}, 0},
				{"switchboard_spill_bytes", nil, 0},
				{"switchboard_frontdoor_refusals_total", map[string]string{"reason": "no_token"}, 1},
			} {
				if got := value(fams, c.name, c.labels); got != c.want {
					t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
				}
			}
			for _, f := range fams {
				for _, m := range f.GetMetric() {
					for _, l := range m.GetLabel() {
						if strings.Contains(l.GetValue(), "made_up") || strings.Contains(l.GetValue(), "secret") {
							t.Errorf("%s has a label value from a client: %s=%q", f.GetName(), l.GetName(), l.GetValue())
						}
					}
				}
			}

			// Kill the server's process: its exit is logged with its
			// status, the next call restarts it, and both are counted.
			if err := syscall.Kill(serverPID(t, marker), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			exited := regexp.MustCompile(`server exited.*signal: killed`)
			if !proc.Eventually(10*time.Second, func() bool { return exited.MatchString(g.stderr.String()) }) {
				t.Fatalf("no exit logged with its status:\n%s", g.stderr.String())
			}
			if res := call("kit__echo", map[string]any{"text": "again"}); res == nil || res.IsError {
				t.Fatalf("echo after the kill: %+v\n%s", res, g.stderr.String())
			}
			fams = scrape(t, g)
			for _, ev := range []string{"exited", "restarted"} {
				if got := value(fams, "switchboard_server_events_total", map[string]string{"server": "kit", "event": ev}); got != 1 {
					t.Errorf("switchboard_server_events_total{event=%q} = %v, want 1", ev, got)
				}
			}
			g.stop()

			log := g.stderr.String()
			if strings.Contains(log, "secret-argument") {
				t.Errorf("an argument value reached the log:\n%s", log)
			}
			calls := callLines(t, format, log)
			want := []map[string]string{
				{"tool": "kit:echo", "outcome": "ok"},
				{"tool": "kit:fail", "outcome": "tool_error"},
				{"tool": "kit__made_up_by_the_client", "outcome": "error", "code": "not_found"},
				{"tool": "kit:echo", "outcome": "ok"},
			}
			if len(calls) != len(want) {
				t.Fatalf("%d call lines, want %d:\n%s", len(calls), len(want), log)
			}
			for i, w := range want {
				for k, v := range w {
					if calls[i][k] != v {
						t.Errorf("call line %d: %s=%q, want %q (%v)", i, k, calls[i][k], v, calls[i])
					}
				}
				if _, ok := calls[i]["client"]; !ok || calls[i]["latency"] == "" {
					t.Errorf("call line %d has no client or latency: %v", i, calls[i])
				}
			}
			if restarted := "server restarted"; !strings.Contains(log, restarted) {
				t.Errorf("no %q in the log:\n%s", restarted, log)
			}
		})
	}
}

// callLines returns the fields of each "call" line of a log.
func callLines(t *testing.T, format, log string) []map[string]string {
	t.Helper()
	var out []map[string]string
	sc := bufio.NewScanner(strings.NewReader(log))
	field := regexp.MustCompile(`(\w+)=("(?:[^"\\]|\\.)*"|\S*)`)
	for sc.Scan() {
		line := sc.Text()
		switch format {
		case "json":
			if !strings.HasPrefix(line, "{") {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("a log line is not JSON: %q: %v", line, err)
			}
			if m["msg"] != "call" || m["level"] != "INFO" {
				continue
			}
			f := map[string]string{}
			for k, v := range m {
				b, _ := json.Marshal(v)
				f[k] = strings.Trim(string(b), `"`)
			}
			out = append(out, f)
		default:
			if !strings.Contains(line, " msg=call ") || !strings.Contains(line, "level=INFO") {
				continue
			}
			f := map[string]string{}
			for _, m := range field.FindAllStringSubmatch(line, -1) {
				f[m[1]] = strings.Trim(m[2], `"`)
			}
			out = append(out, f)
		}
	}
	return out
}

// otlpReceiver is an OTLP/HTTP trace receiver (protobuf) on 127.0.0.1:0.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	url   string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		data, err := io.ReadAll(body)
		var ex collectortrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(data, &ex)
		}
		if req.URL.Path != "/v1/traces" || err != nil {
			t.Errorf("OTLP receiver: %s %s: %v", req.Method, req.URL.Path, err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range ex.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				r.spans = append(r.spans, ss.GetSpans()...)
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	r.url = "http://" + ln.Addr().String()
	return r
}

// trace returns the spans of trace id.
func (r *otlpReceiver) trace(id []byte) []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range r.spans {
		if bytes.Equal(s.GetTraceId(), id) {
			out = append(out, s)
		}
	}
	return out
}

// seen is what the HTTP upstream received with one tools/call.
type seen struct{ header, meta string }

// tracedUpstream is a go-sdk Streamable HTTP server on 127.0.0.1:0 with
// an "echo" tool that records the traceparent it receives, in the HTTP
// header and in _meta.
func tracedUpstream(t *testing.T) (url string, got func() []seen) {
	t.Helper()
	var mu sync.Mutex
	var calls []seen
	s := mcp.NewServer(&mcp.Implementation{Name: "traced", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text."}, func(_ context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		var sn seen
		if h := req.Extra.Header; h != nil {
			sn.header = h.Get("traceparent")
		}
		sn.meta, _ = req.Params.GetMeta()["traceparent"].(string)
		mu.Lock()
		calls = append(calls, sn)
		mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/mcp", func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), calls...)
	}
}

// TestServeTraces: with OTEL_EXPORTER_OTLP_ENDPOINT set, a call through
// the gateway to an HTTP upstream is a trace whose spans nest: the
// client's span (its traceparent in _meta, or in the HTTP header) → the
// gateway's request span → the host's call span → the upstream request
// span; the upstream receives that last span as its parent, in its HTTP
// header and in _meta.
func TestServeTraces(t *testing.T) {
	t.Parallel()
	recv := newOTLPReceiver(t)
	upURL, upSeen := tracedUpstream(t)
	const tracerToken = "tracer-client-token-0123456789abcdef"
	path := writeConfig(t, map[string]any{
		"mcpServers": map[string]any{"up": map[string]any{"url": upURL, "trust": "trusted"}},
		"clients":    map[string]any{"tracer": map[string]any{"tokenEnv": "TRACER_TOKEN"}},
	})
	g := startServe(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": recv.url, "TRACER_TOKEN": tracerToken}, "--config", path)
	rt := &headerTransport{token: tracerToken}
	cs := connect(t, g, rt)
	ctx := context.Background()

	viaMeta := mustHex(t, "0af7651916cd43dd8448eb211c80319c")
	viaHeader := mustHex(t, "4bf92f3577b34da6a3ce929d0e0e4736")
	clientSpan := mustHex(t, "b7ad6b7169203331")
	tp := func(trace []byte) string {
		return "00-" + hex.EncodeToString(trace) + "-" + hex.EncodeToString(clientSpan) + "-01"
	}

	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "a"},
		Meta: mcp.Meta{"traceparent": tp(viaMeta)}}); err != nil {
		t.Fatalf("call with _meta.traceparent: %v\n%s", err, g.stderr.String())
	}
	rt.set(tp(viaHeader))
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "b"}}); err != nil {
		t.Fatalf("call with a traceparent header: %v", err)
	}
	rt.set("")
	g.stop() // sends the spans still queued

	seenBy := upSeen()
	if len(seenBy) != 2 {
		t.Fatalf("the upstream saw %d calls, want 2", len(seenBy))
	}
	for i, id := range [][]byte{viaMeta, viaHeader} {
		spans := recv.trace(id)
		byParent := map[string][]*tracepb.Span{}
		for _, s := range spans {
			byParent[hex.EncodeToString(s.GetParentSpanId())] = append(byParent[hex.EncodeToString(s.GetParentSpanId())], s)
		}
		child := func(parent []byte, what string, kind tracepb.Span_SpanKind) *tracepb.Span {
			t.Helper()
			for _, s := range byParent[hex.EncodeToString(parent)] {
				if s.GetKind() == kind {
					return s
				}
			}
			t.Fatalf("trace %d: no %s span (kind %v) under %x; spans: %v", i, what, kind, parent, spanList(spans))
			return nil
		}
		gw := child(clientSpan, "gateway request", tracepb.Span_SPAN_KIND_SERVER)
		call := child(gw.GetSpanId(), "host call", tracepb.Span_SPAN_KIND_INTERNAL)
		up := child(call.GetSpanId(), "upstream request", tracepb.Span_SPAN_KIND_CLIENT)
		if e := attr(up, "switchboard.era"); e != "modern" && e != "legacy" {
			t.Errorf("trace %d: upstream span's era %q", i, e)
		}
		if gw.GetName() != "tools/call" || up.GetName() != "tools/call" {
			t.Errorf("trace %d: span names %q, %q; want tools/call", i, gw.GetName(), up.GetName())
		}
		for _, c := range []struct {
			span *tracepb.Span
			key  string
			want string
		}{
			{gw, "switchboard.tool", "up__echo"},
			{gw, "switchboard.outcome", "ok"},
			{call, "switchboard.server", "up"},
			{call, "switchboard.tool", "up:echo"},
			{call, "switchboard.outcome", "ok"},
			{call, "switchboard.era", attr(up, "switchboard.era")},
			{call, "switchboard.caller", "tracer"},
			{call, "switchboard.client_name", "observer"},
			{up, "switchboard.server", "up"},
			{up, "switchboard.tool", "echo"},
			{up, "switchboard.outcome", "ok"},
		} {
			if got := attr(c.span, c.key); got != c.want {
				t.Errorf("trace %d: span %q: %s = %q, want %q", i, c.span.GetName(), c.key, got, c.want)
			}
		}
		want := "00-" + hex.EncodeToString(id) + "-" + hex.EncodeToString(up.GetSpanId()) + "-01"
		if seenBy[i].header != want || seenBy[i].meta != want {
			t.Errorf("call %d: the upstream saw traceparent %q in its header and %q in _meta, want %q", i, seenBy[i].header, seenBy[i].meta, want)
		}
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func attr(s *tracepb.Span, key string) string {
	for _, a := range s.GetAttributes() {
		if a.GetKey() == key {
			return a.GetValue().GetStringValue()
		}
	}
	return ""
}

func spanList(spans []*tracepb.Span) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.GetName() + " " + s.GetKind().String() + " " + hex.EncodeToString(s.GetSpanId()) + "<" + hex.EncodeToString(s.GetParentSpanId()) + "; ")
	}
	return b.String()
}
