package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// The raw tools/call path (raw.go) must answer exactly what go-sdk's path
// answers. These tests serve one gateway twice, on one listener with the
// raw path (the default) and on one without (HTTPOptions.NoRawCalls), send
// both the same requests, and compare the answers: HTTP status, media type
// and the JSON-RPC message decoded as JSON. The gateway's debug log counts
// the calls the raw path served, so each case also checks which path it
// took.

// rawServed counts the gateway's "served raw" debug records.
type rawServed struct{ n atomic.Int64 }

func (c *rawServed) Enabled(context.Context, slog.Level) bool { return true }
func (c *rawServed) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "tools/call served raw" {
		c.n.Add(1)
	}
	return nil
}
func (c *rawServed) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *rawServed) WithGroup(string) slog.Handler      { return c }

// rawFixture is a gateway in front of "web" (Streamable HTTP, 2026-07-28),
// "s" (stdio) and "gone" (unreachable once started), served with and
// without the raw path.
type rawFixture struct {
	raw, sdk string // endpoint URLs
	served   *rawServed
	gateway  *gateway.Gateway
}

func newRawFixture(t *testing.T, top map[string]any, maxFrame int) *rawFixture {
	t.Helper()
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testkit.NewServer() },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}))
	t.Cleanup(web.Close)
	gone := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testkit.NewServer() },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{"mcpServers": map[string]any{
		"s":    map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer), "trust": "trusted"},
		"web":  map[string]any{"url": web.URL, "trust": "trusted"},
		"gone": map[string]any{"url": gone.URL, "trust": "trusted", "startupAttempts": 1},
	}}
	for k, v := range top {
		doc[k] = v
	}
	data, _ := json.Marshal(doc)
	cfg, err := config.Parse(data, "raw.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Open(context.Background(), cfg, &host.Options{StopTimeout: 500 * time.Millisecond, Forward: true, MaxFrame: maxFrame})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	// Unreachable from now on (see TestUnreachableUpstreamIsAToolResult).
	gone.Listener.Close()
	gone.CloseClientConnections()

	served := &rawServed{}
	g := gateway.New(h, &gateway.Options{Version: "test", Logger: slog.New(served), OnConfirm: cfg.Policy.OnConfirm})
	serve := func(noRaw bool) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- g.ServeHTTP(ctx, ln, gateway.HTTPOptions{Front: frontdoor.Options{Token: token}, NoRawCalls: noRaw})
		}()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("ServeHTTP: %v", err)
			}
		})
		return "http://" + ln.Addr().String() + "/mcp"
	}
	return &rawFixture{raw: serve(false), sdk: serve(true), served: served, gateway: g}
}

// unavailableDetail is the part of an unavailable server's message that
// depends on the server's state rather than on the path (a call may
// redial, a later one reports the back-off): masked before comparing
// (maskUnavailable), like spillID.
var unavailableDetail = regexp.MustCompile(`\(unavailable\): (\\"|[^"])*`)

// spillID is the random ID of a large result the host stored (spilled):
// different for every call, masked too; so is a sealed requestState, which
// holds its expiry to the second.
var (
	spillID     = regexp.MustCompile(`switchboard:spill/[0-9a-f]+`)
	sealedState = regexp.MustCompile(`"sb1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"`)
)

func maskUnavailable(s string) string {
	s = spillID.ReplaceAllString(s, "switchboard:spill/…")
	s = sealedState.ReplaceAllString(s, `"sb1.…"`)
	return unavailableDetail.ReplaceAllString(s, "(unavailable): …")
}

// answer is an HTTP answer to a JSON-RPC request, for comparison.
type answer struct {
	Status    int
	MediaType string
	Message   any // the JSON-RPC message, decoded; for SSE, the first event's
}

// post sends a 2026-07-28 request the way go-sdk's client does, with the
// headers given (nil values delete one).
func post(t *testing.T, url, body string, headers map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	a := answer{Status: resp.StatusCode, MediaType: mt}
	if mt == "text/event-stream" {
		data = firstEventData(t, data)
	}
	if err := json.Unmarshal(data, &a.Message); err != nil {
		a.Message = "not JSON: " + string(data)
	}
	return a
}

// firstEventData returns the data of the first SSE event carrying any.
func firstEventData(t *testing.T, stream []byte) []byte {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(nil, 64<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		if line == "" && data != nil {
			break
		}
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimPrefix(d, " ")...)
		}
	}
	return data
}

// callBody is a tools/call request body as go-sdk's client writes it in
// the 2026-07-28 era; args "" leaves the arguments out.
func callBody(id, name, args string) string {
	a := ""
	if args != "" {
		a = `,"arguments":` + args
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q%s,"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientInfo":{"name":"raw-test","version":"1"},`+
		`"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}}}}}`, id, name, a)
}

// same sends one request to both endpoints and reports a difference; it
// checks that the raw endpoint took the raw path (or did not).
func (f *rawFixture) same(t *testing.T, body string, headers map[string]string, wantRaw bool) answer {
	t.Helper()
	before := f.served.n.Load()
	got := post(t, f.raw, body, headers)
	if served := f.served.n.Load() - before; served != map[bool]int64{true: 1, false: 0}[wantRaw] {
		t.Errorf("raw path served %d calls, want raw=%t", served, wantRaw)
	}
	want := post(t, f.sdk, body, headers)
	got = maskAnswer(got)
	sameAnswer(t, got, maskAnswer(want))
	return got
}

// maskAnswer masks what differs between calls in an answer (maskUnavailable).
func maskAnswer(a answer) answer {
	data, _ := json.Marshal(a.Message)
	json.Unmarshal([]byte(maskUnavailable(string(data))), &a.Message)
	return a
}

// sameAnswer reports a difference between the raw path's answer and
// go-sdk's.
func sameAnswer(t *testing.T, got, want answer) bool {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("raw path answers differently (-go-sdk +raw):\n%s", diff)
		return false
	}
	return true
}

// result returns the result of an answer, or fails.
func (a answer) result(t *testing.T) map[string]any {
	t.Helper()
	m, _ := a.Message.(map[string]any)
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", a.Message)
	}
	return res
}

// rawCase is one request sent to both paths: whether the raw path serves
// it, and what else to check of its answer.
type rawCase struct {
	name    string
	body    string
	headers map[string]string
	raw     bool
	check   func(t *testing.T, a answer)
}

// newCasesFixture is the fixture of the case tables: a policy rule denying
// web:roots, a cap on result text, a 64 KiB frame cap.
func newCasesFixture(t *testing.T) *rawFixture {
	return newRawFixture(t, map[string]any{
		"policy":   map[string]any{"rules": []any{map[string]any{"deny": "web:roots"}}},
		"security": map[string]any{"resultTextMaxBytes": 2000},
	}, 64<<10)
}

func TestRawCallsAnswerAsGoSDK(t *testing.T) {
	f := newCasesFixture(t)
	big := `"` + strings.Repeat("a", 100<<10) + `"`
	cases := []rawCase{
		{name: "normal call, HTTP upstream", body: callBody("1", "web__echo", `{"text":"hi"}`), raw: true,
			check: func(t *testing.T, a answer) {
				res := a.result(t)
				if res["resultType"] != "complete" || res["isError"] != nil {
					t.Errorf("result %v", res)
				}
				meta, _ := res["_meta"].(map[string]any)
				if info, _ := meta["io.modelcontextprotocol/serverInfo"].(map[string]any); info["name"] != "switchboard" {
					t.Errorf("serverInfo %v, want the gateway's", meta)
				}
			}},
		{name: "normal call, stdio upstream", body: callBody(`"str-id"`, "s__echo", `{"text":"hi"}`), raw: true},
		{name: "100 KB arguments", body: callBody("2", "web__echo", `{"text":`+big+`}`), raw: true},
		{name: "no arguments", body: callBody("3", "s__fail", ""), raw: true},
		{name: "null arguments", body: callBody("4", "s__fail", "null"), raw: true},
		{name: "isError result", body: callBody("5", "web__fail", `{}`), raw: true,
			check: func(t *testing.T, a answer) {
				if a.result(t)["isError"] != true {
					t.Errorf("result %v, want isError", a.Message)
				}
			}},
		{name: "unknown tool", body: callBody("6", "nope__echo", `{}`), headers: map[string]string{"Mcp-Name": "nope__echo"}, raw: false,
			check: func(t *testing.T, a answer) {
				if a.Status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(a.Message), "-32602") {
					t.Errorf("answer %+v, want -32602 with 400", a)
				}
			}},
		{name: "unavailable upstream", body: callBody("7", "gone__echo", `{"text":"x"}`), raw: true,
			check: func(t *testing.T, a answer) {
				res := a.result(t)
				meta, _ := res["_meta"].(map[string]any)
				e, _ := meta[gateway.ErrorMetaKey].(map[string]any)
				if res["isError"] != true || e["server"] != "gone" || e["code"] != "unavailable" {
					t.Errorf("result %v, want isError naming gone", res)
				}
			}},
		{name: "policy-denied tool", body: callBody("8", "web__roots", `{}`), raw: true,
			check: func(t *testing.T, a answer) {
				meta, _ := a.result(t)["_meta"].(map[string]any)
				if e, _ := meta[gateway.ErrorMetaKey].(map[string]any); e["code"] != "policy_blocked" {
					t.Errorf("result %v, want policy_blocked", a.Message)
				}
			}},
		{name: "text over the result cap (cut or stored by the host)", body: callBody("9", "web__big", `{"bytes":5000}`), raw: true},
		{name: "result over the frame cap", body: callBody("10", "s__big", `{"bytes":200000}`), raw: true,
			check: func(t *testing.T, a answer) {
				if a.result(t)["isError"] != true {
					t.Errorf("result %v, want isError", a.Message)
				}
			}},
		{name: "input required (2026-07-28 upstream asks)", body: withCaps(callBody("21", "web__ask", `{}`), `{"elicitation":{"form":{}}}`), raw: true,
			check: func(t *testing.T, a answer) {
				if res := a.result(t); res["resultType"] != "input_required" || res["inputRequests"] == nil {
					t.Errorf("result %v, want input_required", res)
				}
			}},
		{name: "input required (stdio upstream asks)", body: withCaps(callBody("22", "s__ask", `{}`), `{"elicitation":{"form":{}}}`), raw: true},
		{name: "client without elicitation", body: callBody("23", "web__ask", `{}`), raw: true},
		{name: "progress token, no progress", body: strings.Replace(callBody("11", "s__echo", `{"text":"p"}`), `"_meta":{`, `"_meta":{"progressToken":"tok",`, 1), raw: true},
		{name: "progress token, progress (handed over)", body: strings.Replace(callBody("25", "web__slow", `{"steps":2,"delay_ms":1}`), `"_meta":{`, `"_meta":{"progressToken":7,`, 1), raw: true,
			check: func(t *testing.T, a answer) {
				if m, _ := a.Message.(map[string]any); m["method"] != "notifications/progress" {
					t.Errorf("first event %v, want a progress notification", a.Message)
				}
			}},
		// Left to go-sdk.
		{name: "progress escaped", body: strings.Replace(callBody("24", "web__slow", `{"steps":1,"delay_ms":1}`), `"_meta":{`, `"_meta":{"progress\u0054oken":"tok",`, 1), raw: false},
		{name: "log level", body: strings.Replace(callBody("12", "s__echo", `{"text":"p"}`), `"_meta":{`, `"_meta":{"io.modelcontextprotocol/logLevel":"debug",`, 1), raw: false},
		{name: "name header mismatch", body: callBody("13", "s__echo", `{"text":"p"}`), headers: map[string]string{"Mcp-Name": "web__echo"}, raw: false},
		{name: "no name header", body: callBody("14", "s__echo", `{"text":"p"}`), headers: map[string]string{"Mcp-Name": ""}, raw: false},
		{name: "meta version mismatch", body: strings.Replace(callBody("15", "s__echo", `{}`), `protocolVersion":"2026-07-28"`, `protocolVersion":"2025-11-25"`, 1), raw: false},
		{name: "no capabilities", body: strings.Replace(callBody("16", "s__echo", `{}`), `,"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}}`, ``, 1), raw: false},
		{name: "capabilities in another case", body: strings.Replace(callBody("17", "s__echo", `{"text":"c"}`), `"roots"`, `"Roots"`, 1), raw: false},
		{name: "arguments not an object", body: callBody("18", "s__echo", `[1]`), raw: false},
		{name: "malformed JSON", body: `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"s__echo"`, raw: false},
		{name: "batch", body: "[" + callBody("20", "s__echo", `{}`) + "]", raw: false},
		{name: "escaped id", body: callBody(`"a\u0062"`, "s__echo", `{"text":"e"}`), raw: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			headers := map[string]string{"Mcp-Name": nameOf(c.body)}
			for k, v := range c.headers {
				headers[k] = v
			}
			a := f.same(t, c.body, headers, c.raw)
			if c.check != nil {
				c.check(t, a)
			}
		})
	}
}

// withCaps replaces the client capabilities of a callBody.
func withCaps(body, caps string) string {
	return strings.Replace(body, `{"roots":{"listChanged":true}}`, caps, 1)
}

// nameOf returns the tool name of a request body, "" if none.
func nameOf(body string) string {
	var m struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	json.Unmarshal([]byte(body), &m)
	return m.Params.Name
}

// TestRawCallsThroughClients: go-sdk clients of both eras get the same
// results from both endpoints, including for a call whose upstream asks
// the client for input (an elicitation, sampling) and a confirmation; the
// raw endpoint serves every call raw to begin with (a legacy session's
// question hands the call over to go-sdk, legacy.go).
func TestRawCallsThroughClients(t *testing.T) {
	t.Run("plain", func(t *testing.T) { testRawCallsThroughClients(t, nil) })
	t.Run("confirm", func(t *testing.T) {
		testRawCallsThroughClients(t, map[string]any{"policy": map[string]any{"confirm": "always"}})
	})
}

func testRawCallsThroughClients(t *testing.T, top map[string]any) {
	f := newRawFixture(t, top, 0)
	ctx := context.Background()
	type call struct {
		name string
		args any
	}
	calls := []call{
		{"web__echo", map[string]any{"text": strings.Repeat("x", 100<<10)}},
		{"s__echo", map[string]any{"text": "hi"}},
		{"web__fail", map[string]any{}},
		{"gone__echo", map[string]any{"text": "x"}},
		{"web__ask", map[string]any{}},
		{"s__ask", map[string]any{}},
		{"web__sample", map[string]any{}},
	}
	for _, era := range []struct{ name, version string }{{"modern", ""}, {"legacy", "2025-11-25"}} {
		t.Run(era.name, func(t *testing.T) {
			results := map[string][]string{}
			for _, url := range []string{f.raw, f.sdk} {
				var mu sync.Mutex
				c := mcp.NewClient(&mcp.Implementation{Name: "raw-client", Version: "1"}, &mcp.ClientOptions{
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						mu.Lock()
						defer mu.Unlock()
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "allow": true}}, nil
					},
					CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
						return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "model says"}}, nil
					},
				})
				tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{http.DefaultTransport}}}
				var opts *mcp.ClientSessionOptions
				if era.version != "" {
					opts = &mcp.ClientSessionOptions{ProtocolVersion: era.version}
				}
				cs, err := c.Connect(ctx, tr, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				before := f.served.n.Load()
				for _, cl := range calls {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: cl.name, Arguments: cl.args})
					var out string
					if err != nil {
						out = "error: " + err.Error()
					} else {
						data, _ := json.Marshal(res)
						out = maskUnavailable(string(data))
					}
					results[url] = append(results[url], out)
				}
				served := f.served.n.Load() - before
				switch {
				case url == f.raw && served < int64(len(calls)):
					t.Errorf("raw endpoint, %s client: %d of %d calls served raw", era.name, served, len(calls))
				case url == f.sdk && served != 0:
					t.Errorf("%s, era %s: %d calls served raw, want 0", url, era.name, served)
				}
			}
			for i, cl := range calls {
				if diff := cmp.Diff(results[f.sdk][i], results[f.raw][i]); diff != "" {
					t.Errorf("%s: raw path answers differently (-go-sdk +raw):\n%s", cl.name, diff)
				}
			}
		})
	}
}
