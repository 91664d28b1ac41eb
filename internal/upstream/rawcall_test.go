package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// The raw upstream tools/call (rawcall.go) must answer exactly as the
// go-sdk path does. Each test dials the same real server twice, once with
// the raw path and once with Options.NoRawCalls, makes the same calls on
// both and compares results and errors.

func TestMain(m *testing.M) {
	maybeRunStdioChild()
	testkit.MaybeRunChild()
	os.Exit(m.Run())
}

// rawServer is the testkit server behind a stateless (2026-07-28)
// Streamable HTTP handler on 127.0.0.1:0, behind a middleware that can
// refuse tools/call with a status or answer the "novel" tool itself.
type rawServer struct {
	url    string
	status atomic.Int32 // when non-zero, tools/call POSTs get this status
	calls  atomic.Int64 // tools/call POSTs seen
	cancel atomic.Int64 // notifications/cancelled POSTs seen
	// legacyStd counts legacy-era POSTs that carried Mcp-Method or
	// Mcp-Name, which go-sdk sends from 2026-07-28 on only.
	legacyStd atomic.Int64
}

func newRawServer(t *testing.T, stateless bool) *rawServer {
	t.Helper()
	rs := &rawServer{}
	srv := testkit.NewServer()
	opts := &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}
	if !stateless {
		opts = &mcp.StreamableHTTPOptions{SessionTimeout: time.Minute}
	}
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			serveResumed(w, r)
			return
		}
		if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && v < rawVersion && (r.Header.Get("Mcp-Method") != "" || r.Header.Get("Mcp-Name") != "") {
			rs.legacyStd.Add(1)
		}
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "" {
			// A legacy request carries its method and tool name in the
			// body only: put them where the 2026-07-28 era has them.
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
				r.Header.Set("Mcp-Method", msg.Method)
				if msg.Method == "tools/call" {
					r.Header.Set("Mcp-Name", msg.Params.Name)
				}
			}
		}
		switch r.Header.Get("Mcp-Method") {
		case "notifications/cancelled":
			rs.cancel.Add(1)
		case "tools/call":
			rs.calls.Add(1)
			if st := rs.status.Load(); st != 0 {
				http.Error(w, http.StatusText(int(st)), int(st))
				return
			}
			if strings.HasPrefix(r.Header.Get("Mcp-Name"), "novel") {
				serveNovel(t, w, r)
				return
			}
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(web.Close)
	rs.url = web.URL
	return rs
}

// serveNovel answers a tools/call for "novel-json" or "novel-sse" with a
// result go-sdk's types could not hold (an unknown content type, unknown
// members), after progress and a log message on the SSE stream.
func serveNovel(t *testing.T, w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		t.Errorf("novel: %v", err)
	}
	result := `{"content":[{"type":"hologram","frames":[1,2,3]},{"type":"text","text":"hi","x-extra":true}],"futureField":{"a":[1,{"b":null}]},"isError":false}`
	resp := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + `}`
	switch r.Header.Get("Mcp-Name") {
	case "novel-err400":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32602,"message":"invalid argument \"x\"","data":{"x":1}}}`)
		return
	case "novel-errsse":
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+string(req.ID)+",\"error\":{\"code\":-32602,\"message\":\"bad x\"}}\n\n")
		return
	case "novel-resume":
		// Numbers its events and ends the stream before the response,
		// which waits for the client's GET with Last-Event-ID.
		// (A plain result: go-sdk's capture point does not see a resumed
		// stream, so go-sdk would decode anything novel itself and fail.)
		resumable.Store(r.Header.Get("Mcp-Session-Id")+"|r1", `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"content":[{"type":"text","text":"resumed"}]}}`)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: r0\nretry: 10\ndata:\n\n")
		if tok, ok := req.Params.Meta["progressToken"].(string); ok {
			fmt.Fprintf(w, "id: r1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%q,\"progress\":1}}\n\n", tok)
		} else {
			io.WriteString(w, "id: r1\ndata:\n\n")
		}
		return
	case "novel-withdraw":
		// Asks the client, withdraws the question, and answers once the
		// client's handler has seen the withdrawal (or after 5 s).
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"q1\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-withdrawAsked:
		case <-time.After(5 * time.Second):
		}
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"q1\"}}\n\n")
		w.(http.Flusher).Flush()
		text := "the handler did not see the withdrawal"
		select {
		case <-withdrawSeen:
			text = "the handler saw the withdrawal"
		case <-time.After(5 * time.Second):
		}
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+string(req.ID)+",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\""+text+"\"}]}}\n\n")
		return
	case "novel-errjson":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32603,"message":"boom"}}`)
		return
	}
	if r.Header.Get("Mcp-Name") == "novel-json" {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if tok, ok := req.Params.Meta["progressToken"].(string); ok {
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%q,\"progress\":%d,\"total\":3,\"message\":\"result error step\"}}\n\n", tok, i)
		}
	}
	io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"on the stream\"}}\n\n")
	io.WriteString(w, ": a comment\n\nevent: message\ndata: "+resp+"\n\n")
}

// eras runs f against a stateless 2026-07-28 server and a legacy one with
// sessions (protocol 2025-11-25).
func eras(t *testing.T, f func(t *testing.T, stateless bool)) {
	t.Run("2026-07-28", func(t *testing.T) { f(t, true) })
	t.Run("legacy", func(t *testing.T) { f(t, false) })
}

// resumable holds the responses novel-resume left for the resumed stream,
// by session ID and last event ID.
var resumable sync.Map

// serveResumed answers a GET that resumes a novel-resume stream.
func serveResumed(w http.ResponseWriter, r *http.Request) {
	resp, ok := resumable.LoadAndDelete(r.Header.Get("Mcp-Session-Id") + "|" + r.Header.Get("Last-Event-ID"))
	if !ok {
		http.Error(w, "no such stream", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, "id: r2\nevent: message\ndata: "+resp.(string)+"\n\n")
}

// dialBoth dials the server with and without the raw path.
func dialBoth(t *testing.T, url string, extra string) (raw, sdk *Conn) {
	t.Helper()
	return dialRaw(t, url, extra, false), dialRaw(t, url, extra, true)
}

func dialRaw(t *testing.T, url, extra string, noRaw bool) *Conn {
	t.Helper()
	return dialEntry(t, fmt.Sprintf(`"url":%q,"trust":"trusted"%s`, url, extra), noRaw)
}

// dialEntry dials and discovers the server whose configuration members
// are entry, with or without the raw path.
func dialEntry(t *testing.T, entry string, noRaw bool) *Conn {
	t.Helper()
	cfg, err := config.Parse([]byte(`{"mcpServers":{"up":{`+entry+`}}}`), "raw.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(context.Background(), cfg.Servers[0], &Options{Forward: true, NoRawCalls: noRaw})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Discover(context.Background()); err != nil {
		t.Fatalf("Discover: %v", err)
	}
	return c
}

// rawCount is how many raw exchanges the connection made.
func rawCount(c *Conn) int64 {
	if c.raw == nil {
		return 0
	}
	return c.raw.ids.Load()
}

// outcome is a call's result or error, in a comparable form.
type outcome struct {
	Raw     string
	IsError bool
	Code    fault.Code
	Err     string
}

func call(t *testing.T, c *Conn, ctx context.Context, name, args string, opts *CallOptions) outcome {
	t.Helper()
	var a json.RawMessage
	if args != "" {
		a = json.RawMessage(args)
	}
	res, err := c.CallTool(ctx, name, a, opts)
	if err != nil {
		return outcome{Code: fault.CodeOf(err), Err: err.Error()}
	}
	return outcome{Raw: string(res.Raw), IsError: res.IsError}
}

// same makes the call on both connections and requires the same outcome.
func same(t *testing.T, raw, sdk *Conn, name, args string) outcome {
	t.Helper()
	r0, s0 := rawCount(raw), rawCount(sdk)
	got := call(t, raw, context.Background(), name, args, nil)
	want := call(t, sdk, context.Background(), name, args, nil)
	// A legacy session's ID is each connection's own.
	if id := raw.session.ID(); id != "" {
		got.Err = strings.ReplaceAll(got.Err, id, "<session>")
	}
	if id := sdk.session.ID(); id != "" {
		want.Err = strings.ReplaceAll(want.Err, id, "<session>")
	}
	if got != want {
		t.Errorf("%s %s:\nraw    %+v\ngo-sdk %+v", name, args, got, want)
	}
	if rawCount(raw) == r0 {
		t.Errorf("%s: the raw connection did not take the raw path", name)
	}
	if rawCount(sdk) != s0 {
		t.Errorf("%s: the NoRawCalls connection took the raw path", name)
	}
	return got
}

func TestRawCallSameAsSDK(t *testing.T) { eras(t, testRawCallSameAsSDK) }

func testRawCallSameAsSDK(t *testing.T, stateless bool) {
	rs := newRawServer(t, stateless)
	raw, sdk := dialBoth(t, rs.url, "")
	if v := raw.Info().ProtocolVersion; (v == rawVersion) != stateless || v != sdk.Info().ProtocolVersion {
		t.Fatalf("protocol %s (go-sdk path: %s), stateless server: %v", v, sdk.Info().ProtocolVersion, stateless)
	}
	if !stateless && (raw.session.ID() == "" || sdk.session.ID() == "") {
		t.Fatal("no session with the legacy server")
	}
	defer func() {
		if n := rs.legacyStd.Load(); n != 0 {
			t.Errorf("%d legacy requests carried Mcp-Method or Mcp-Name", n)
		}
	}()
	big := strings.Repeat("0123456789 \\\"é\n", 100<<10/16)
	bigArgs, _ := json.Marshal(map[string]string{"text": big})
	cases := []struct {
		name, tool, args string
		want             func(outcome) bool
	}{
		{"echo", "echo", `{"text":"hello"}`, func(o outcome) bool { return strings.Contains(o.Raw, `"hello"`) && !o.IsError }},
		{"echo 100KB", "echo", string(bigArgs), func(o outcome) bool { return len(o.Raw) > 100<<10 }},
		{"echo, spaced arguments", "echo", "{ \"text\" :\n \"x\" }", func(o outcome) bool { return strings.Contains(o.Raw, `"x"`) }},
		{"no arguments", "grow", "", func(o outcome) bool { return strings.Contains(o.Raw, "grew") }},
		{"isError", "fail", `{}`, func(o outcome) bool { return o.IsError && strings.Contains(o.Raw, "on purpose") }},
		{"unknown tool", "nope", `{}`, func(o outcome) bool { return o.Code == fault.CodeNotFound }},
		{"arguments against the schema", "echo", `{"text":5}`, func(o outcome) bool { return o.IsError && strings.Contains(o.Raw, "validating") }},
		{"invalid params, HTTP 400", "novel-err400", `{}`, func(o outcome) bool { return o.Code == fault.CodeInvalidInput }},
		{"invalid params, SSE", "novel-errsse", `{}`, func(o outcome) bool { return o.Code == fault.CodeInvalidInput }},
		{"internal error, JSON", "novel-errjson", `{}`, func(o outcome) bool { return o.Code == fault.CodeServerError }},
		{"big result", "big", `{"bytes":200000}`, func(o outcome) bool { return len(o.Raw) > 200000 }},
		{"unknown content type, SSE", "novel-sse", `{}`, func(o outcome) bool {
			return strings.Contains(o.Raw, `"hologram"`) && strings.Contains(o.Raw, `"futureField"`)
		}},
		{"unknown content type, JSON", "novel-json", `{}`, func(o outcome) bool { return strings.Contains(o.Raw, `"x-extra":true`) }},
		{"stream resumed with Last-Event-ID", "novel-resume", `{}`, func(o outcome) bool { return strings.Contains(o.Raw, `"resumed"`) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := same(t, raw, sdk, tc.tool, tc.args)
			if !tc.want(got) {
				t.Errorf("unexpected outcome %+v", got)
			}
		})
	}
}

func TestRawCallHTTPStatus(t *testing.T) {
	for _, tc := range []rawStatusCase{
		{http.StatusUnauthorized, fault.CodeAuthFailure, true},
		{http.StatusTooManyRequests, fault.CodeRateLimited, false},
		{http.StatusServiceUnavailable, fault.CodeTransient, false},
		{http.StatusInternalServerError, fault.CodeServerError, false},
		{http.StatusNotFound, fault.CodeServerError, true}, // legacy: the session is gone
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			eras(t, func(t *testing.T, stateless bool) { testRawCallHTTPStatus(t, stateless, tc) })
		})
	}
}

type rawStatusCase struct {
	status int
	code   fault.Code
	ends   bool // the connection ends, as go-sdk's transport ends it
}

func testRawCallHTTPStatus(t *testing.T, stateless bool, tc rawStatusCase) {
	rs := newRawServer(t, stateless)
	raw, sdk := dialBoth(t, rs.url, "")
	ids := []string{raw.session.ID(), sdk.session.ID()}
	rs.status.Store(int32(tc.status))
	got := same(t, raw, sdk, "echo", `{"text":"x"}`)
	if got.Code != tc.code {
		t.Errorf("code %s, want %s", got.Code, tc.code)
	}
	wait := time.Duration(0)
	if tc.ends {
		wait = 10 * time.Second
	}
	for _, c := range []*Conn{raw, sdk} {
		select {
		case <-c.Done():
			if !tc.ends {
				t.Errorf("connection ended: %v", c.Err())
			}
		case <-time.After(wait):
			if tc.ends {
				t.Errorf("connection still alive after HTTP %d", tc.status)
			}
		}
	}
	if !tc.ends {
		return
	}
	// The same reason, but for the session's ID, which is each
	// connection's own.
	why := func(c *Conn, id string) string {
		if c.Err() == nil {
			return "<nil>"
		}
		if id == "" {
			return c.Err().Error()
		}
		return strings.ReplaceAll(c.Err().Error(), id, "<session>")
	}
	if a, b := why(raw, ids[0]), why(sdk, ids[1]); a == "<nil>" || a != b {
		t.Errorf("why the connection ended:\nraw    %v\ngo-sdk %v", a, b)
	}
	// A call on the ended connection was never sent: the host redials on
	// this code.
	if o := call(t, raw, context.Background(), "echo", `{"text":"x"}`, nil); o.Code != fault.CodeUnavailable {
		t.Errorf("call after the end: %+v, want unavailable", o)
	}
}

type progressList struct {
	mu   sync.Mutex
	list []Progress
}

func (p *progressList) add(x Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, x)
}

func (p *progressList) get() []Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Progress(nil), p.list...)
}

func TestRawCallProgress(t *testing.T) { eras(t, testRawCallProgress) }

func testRawCallProgress(t *testing.T, stateless bool) {
	rs := newRawServer(t, stateless)
	raw, sdk := dialBoth(t, rs.url, "")
	for _, tool := range []string{"slow", "novel-sse", "novel-resume"} {
		var lists [2][]Progress
		var outs [2]outcome
		for i, c := range []*Conn{raw, sdk} {
			var pl progressList
			outs[i] = call(t, c, context.Background(), tool, `{"steps":4,"delay_ms":1}`, &CallOptions{Progress: pl.add})
			lists[i] = pl.get() // all of it by the time the call returned
		}
		if outs[0] != outs[1] {
			t.Errorf("%s: raw %+v, go-sdk %+v", tool, outs[0], outs[1])
		}
		if fmt.Sprint(lists[0]) != fmt.Sprint(lists[1]) || len(lists[0]) == 0 {
			t.Errorf("%s: progress\nraw    %v\ngo-sdk %v", tool, lists[0], lists[1])
		}
		for i, p := range lists[0] {
			if p.Progress != float64(i+1) {
				t.Errorf("%s: progress out of order: %v", tool, lists[0])
				break
			}
		}
	}
	if rawCount(raw) == 0 {
		t.Error("the raw path was not taken")
	}
}

// logPeer answers input requests and records log messages.
type logPeer struct {
	pass bool // pass input requests on (a 2026-07-28 downstream client)
	mu   sync.Mutex
	logs []string
}

func (p *logPeer) CreateMessage(_ context.Context, _ string, _ *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return &mcp.CreateMessageWithToolsResult{Model: "m", Role: "assistant", Content: []mcp.Content{&mcp.TextContent{Text: "Paris"}}}, nil
}

func (p *logPeer) Elicit(_ context.Context, server string, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada of " + server}}, nil
}

func (p *logPeer) ListRoots(context.Context, string) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///r"}}}, nil
}

func (p *logPeer) Log(_ context.Context, server string, lp *mcp.LoggingMessageParams) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.logs = append(p.logs, fmt.Sprint(server, lp.Level, lp.Data))
}

func (p *logPeer) PassInput() bool { return p.pass }

func (p *logPeer) ClientCapabilities() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}, Sampling: &mcp.SamplingCapabilities{}}
}

// relayMade reports whether the connection made its relay session.
func relayMade(c *Conn) bool {
	c.raw.relay.mu.Lock()
	defer c.raw.relay.mu.Unlock()
	return c.raw.relay.r != nil
}

// withdrawAsked and withdrawSeen pace the novel-withdraw tool: its
// elicitation reached the client's handler, and that handler saw the
// server withdraw it.
var withdrawAsked, withdrawSeen = make(chan struct{}, 1), make(chan struct{}, 1)

// waitPeer's elicitation handler waits until its context ends.
type waitPeer struct {
	logPeer
	asked atomic.Int32
}

func (p *waitPeer) Elicit(ctx context.Context, _ string, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	p.asked.Add(1)
	select {
	case withdrawAsked <- struct{}{}:
	default:
	}
	<-ctx.Done()
	select {
	case withdrawSeen <- struct{}{}:
	default:
	}
	return nil, ctx.Err()
}

// TestRawCallLegacyWithdrawn: a legacy server that withdraws its question
// (notifications/cancelled for its own request) stops the client's
// handler, on both paths, while the call goes on.
func TestRawCallLegacyWithdrawn(t *testing.T) {
	rs := newRawServer(t, false)
	raw, sdk := dialBoth(t, rs.url, `,"elicitation":true`)
	for i, c := range []*Conn{raw, sdk} {
		for _, ch := range []chan struct{}{withdrawAsked, withdrawSeen} {
			select {
			case <-ch: // left by the path before
			default:
			}
		}
		got := call(t, c, WithPeer(context.Background(), &waitPeer{}), "novel-withdraw", `{}`, nil)
		if !strings.Contains(got.Raw, "the handler saw the withdrawal") {
			t.Errorf("path %d: %+v", i, got)
		}
	}
	if rawCount(raw) == 0 || !relayMade(raw) {
		t.Error("the raw path and its relay were not used")
	}
}

// TestRawCallLegacyCloseWhileAsking: closing a connection whose relay has
// requests in the client's handlers returns promptly, and the handlers
// see their contexts end.
func TestRawCallLegacyCloseWhileAsking(t *testing.T) {
	rs := newRawServer(t, false)
	c := dialRaw(t, rs.url, `,"elicitation":true`, false)
	p := &waitPeer{}
	ctx := WithPeer(context.Background(), p)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { c.CallTool(ctx, "ask", json.RawMessage(`{}`), nil) })
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.asked.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if p.asked.Load() < 2 {
		t.Fatalf("%d questions reached the client, want 2", p.asked.Load())
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close still waiting after 10 s")
	}
	wg.Wait()
}

// badPeer answers an elicitation with content its schema refuses, and
// fails sampling.
type badPeer struct{ logPeer }

func (*badPeer) Elicit(context.Context, string, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": 5}}, nil
}

func (*badPeer) CreateMessage(context.Context, string, *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return nil, errors.New("no model here")
}

// TestRawCallLegacyServerRequests: a legacy server asks the client during
// the call, on the call's stream; the raw path answers through go-sdk's
// client code (relay.go) and the outcome is the go-sdk path's, refusals
// included.
func TestRawCallLegacyServerRequests(t *testing.T) {
	rs := newRawServer(t, false)
	raw, sdk := dialBoth(t, rs.url, `,"elicitation":true,"sampling":true,"roots":true`)
	shy, shySDK := dialBoth(t, rs.url, `,"elicitation":false,"sampling":false,"roots":false`)
	for _, tc := range []struct {
		name, tool string
		raw, sdk   *Conn
		peer       Peer
		want       string // in the result; "" for a failure
	}{
		{"elicitation", "ask", raw, sdk, &logPeer{}, "accept: Ada of up"},
		{"sampling", "sample", raw, sdk, &logPeer{}, "model said: Paris"},
		{"roots", "roots", raw, sdk, &logPeer{}, "roots: file:///r"},
		{"elicitation, content against the schema", "ask", raw, sdk, &badPeer{}, ""},
		{"sampling fails", "sample", raw, sdk, &badPeer{}, ""},
		{"elicitation, no client", "ask", raw, sdk, nil, ""},
		{"elicitation, not allowed", "ask", shy, shySDK, &logPeer{}, ""},
		{"roots, not allowed", "roots", shy, shySDK, &logPeer{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := tc.tool
			ctx := context.Background()
			if tc.peer != nil {
				ctx = WithPeer(ctx, tc.peer)
			}
			n := rawCount(tc.raw)
			got := call(t, tc.raw, ctx, tool, `{}`, nil)
			want := call(t, tc.sdk, ctx, tool, `{}`, nil)
			if got != want {
				t.Errorf("raw    %+v\ngo-sdk %+v", got, want)
			}
			if tc.want != "" && !strings.Contains(got.Raw, tc.want) {
				t.Errorf("result %+v, want %q in it", got, tc.want)
			}
			if tc.want == "" && got.Raw != "" && !got.IsError {
				t.Errorf("result %+v, want a failure", got)
			}
			if rawCount(tc.raw) == n {
				t.Error("the raw path was not taken")
			}
			if !relayMade(tc.raw) && tc.raw.allows(map[string]string{"ask": "elicitation", "sample": "sampling", "roots": "roots"}[tc.tool]) {
				t.Error("the server's request did not go through the relay")
			}
		})
	}
}

func TestRawCallInputRequired(t *testing.T) {
	rs := newRawServer(t, true)
	raw, sdk := dialBoth(t, rs.url, `,"elicitation":true,"sampling":true,"roots":true`)
	for _, tool := range []string{"ask", "sample", "roots"} {
		// Answered through the peer.
		var outs [2]outcome
		for i, c := range []*Conn{raw, sdk} {
			outs[i] = call(t, c, WithPeer(context.Background(), &logPeer{}), tool, `{}`, nil)
		}
		if outs[0] != outs[1] || outs[0].Raw == "" {
			t.Errorf("%s answered: raw %+v, go-sdk %+v", tool, outs[0], outs[1])
		}
		// Passed on, then retried with the responses.
		var reqs [2]string
		for i, c := range []*Conn{raw, sdk} {
			ctx := WithPeer(context.Background(), &logPeer{pass: true})
			_, err := c.CallTool(ctx, tool, json.RawMessage(`{}`), nil)
			var ir *InputRequired
			if !errors.As(err, &ir) {
				t.Fatalf("%s: err = %v, want *InputRequired", tool, err)
			}
			b, _ := json.Marshal(ir.Requests)
			reqs[i] = string(b) + " state=" + ir.State
			responses, ferr := c.fulfil(ctx, &logPeer{}, ir.Requests)
			if ferr != nil {
				t.Fatal(ferr)
			}
			outs[i] = call(t, c, ctx, tool, `{}`, &CallOptions{InputResponses: responses, RequestState: ir.State})
		}
		if reqs[0] != reqs[1] {
			t.Errorf("%s input requests:\nraw    %s\ngo-sdk %s", tool, reqs[0], reqs[1])
		}
		if outs[0] != outs[1] || outs[0].Raw == "" {
			t.Errorf("%s retried: raw %+v, go-sdk %+v", tool, outs[0], outs[1])
		}
	}
	if rawCount(raw) < 9 {
		t.Errorf("%d raw exchanges, want at least 9", rawCount(raw))
	}
}

func TestRawCallLogToPeer(t *testing.T) { eras(t, testRawCallLogToPeer) }

func testRawCallLogToPeer(t *testing.T, stateless bool) {
	rs := newRawServer(t, stateless)
	raw, sdk := dialBoth(t, rs.url, "")
	var logs [2][]string
	for i, c := range []*Conn{raw, sdk} {
		p := &logPeer{}
		if o := call(t, c, WithPeer(context.Background(), p), "novel-sse", `{}`, nil); o.Raw == "" {
			t.Fatalf("call: %+v", o)
		}
		p.mu.Lock()
		logs[i] = p.logs
		p.mu.Unlock()
	}
	if fmt.Sprint(logs[0]) != fmt.Sprint(logs[1]) || len(logs[0]) != 1 {
		t.Errorf("logs: raw %q, go-sdk %q", logs[0], logs[1])
	}
}

func TestRawCallCancel(t *testing.T) { eras(t, testRawCallCancel) }

func testRawCallCancel(t *testing.T, stateless bool) {
	rs := newRawServer(t, stateless)
	raw, sdk := dialBoth(t, rs.url, "")
	for _, c := range []*Conn{raw, sdk} {
		before := testkit.SlowCancelled.Load()
		cancels := rs.cancel.Load()
		ctx, cancel := context.WithCancel(context.Background())
		first := make(chan struct{})
		var once sync.Once
		errc := make(chan error, 1)
		go func() {
			_, err := c.CallTool(ctx, "slow", json.RawMessage(`{"steps":1000,"delay_ms":20}`), &CallOptions{Progress: func(Progress) { once.Do(func() { close(first) }) }})
			errc <- err
		}()
		<-first
		cancel()
		err := <-errc
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		// The server saw it: its handler's context was cancelled, and
		// notifications/cancelled arrived.
		deadline := time.Now().Add(20 * time.Second)
		for (testkit.SlowCancelled.Load() == before || rs.cancel.Load() == cancels) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if testkit.SlowCancelled.Load() == before {
			t.Error("the server's handler never saw the cancellation")
		}
		if rs.cancel.Load() == cancels {
			t.Error("no notifications/cancelled reached the server")
		}
	}
	if rawCount(raw) == 0 {
		t.Error("the raw path was not taken")
	}
}

func TestRawCallTimeout(t *testing.T) { eras(t, testRawCallTimeout) }

func testRawCallTimeout(t *testing.T, stateless bool) {
	rs := newRawServer(t, stateless)
	raw, sdk := dialBoth(t, rs.url, `,"callTimeoutMs":300`)
	got := call(t, raw, context.Background(), "slow", `{"steps":1000,"delay_ms":20}`, nil)
	want := call(t, sdk, context.Background(), "slow", `{"steps":1000,"delay_ms":20}`, nil)
	if got.Code != fault.CodeTimeout || got.Code != want.Code {
		t.Errorf("raw %+v, go-sdk %+v; want timeout", got, want)
	}
	if rawCount(raw) == 0 {
		t.Error("the raw path was not taken")
	}
}

func TestRawCallUnreachable(t *testing.T) { eras(t, testRawCallUnreachable) }

func testRawCallUnreachable(t *testing.T, stateless bool) {
	rs := newRawServer(t, stateless)
	raw, sdk := dialBoth(t, rs.url, "")
	// A server that goes away between calls: the request never reaches
	// it, and the dial error says so.
	raw.server.URL, sdk.server.URL = "http://127.0.0.1:1/mcp", "http://127.0.0.1:1/mcp"
	got := call(t, raw, context.Background(), "echo", `{"text":"x"}`, nil)
	if got.Code != fault.CodeUnavailable {
		t.Errorf("raw %+v, want unavailable", got)
	}
}

func TestRawCallNotUsed(t *testing.T) {
	t.Run("legacy SSE transport", func(t *testing.T) {
		srv := testkit.NewServer()
		sse := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		t.Cleanup(sse.Close)
		c := dialEntry(t, fmt.Sprintf(`"url":%q,"type":"sse","trust":"trusted"`, sse.URL), false)
		if o := call(t, c, context.Background(), "echo", `{"text":"x"}`, nil); o.Raw == "" {
			t.Fatalf("call: %+v", o)
		}
		if rawCount(c) != 0 {
			t.Errorf("%d raw exchanges; want HTTP+SSE on go-sdk", rawCount(c))
		}
	})
	t.Run("arguments not an object", func(t *testing.T) {
		rs := newRawServer(t, true)
		raw, sdk := dialBoth(t, rs.url, "")
		for _, args := range []string{`[1]`, `{"text":`, `"x"`} {
			got := call(t, raw, context.Background(), "echo", args, nil)
			want := call(t, sdk, context.Background(), "echo", args, nil)
			if got != want {
				t.Errorf("%s: raw %+v, go-sdk %+v", args, got, want)
			}
		}
		if rawCount(raw) != 0 {
			t.Errorf("%d raw exchanges, want 0", rawCount(raw))
		}
	})
	t.Run("x-mcp-header tool", func(t *testing.T) {
		rs := newRawServer(t, true)
		c := dialRaw(t, rs.url, "", false)
		c.raw.noteTools([]*mcp.Tool{{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","x-mcp-header":"Text"}}}`)}})
		if c.rawEligible("echo", json.RawMessage(`{"text":"x"}`)) {
			t.Error("a tool with x-mcp-header annotations is eligible")
		}
		if c.rawEligible("a tool", nil) || c.rawEligible("tööl", nil) {
			t.Error("a name go-sdk would send in another form is eligible")
		}
	})
}

func TestTopMembers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{`{"a":1,"b":"x\"}","c":{"d":[1,2]}}`, `a=1 b="x\"}" c={"d":[1,2]}`},
		{` { "a" : true , "a" : null } `, `a=null`},
		{`{"\u0061":2}`, `a=2`},
		{`{}`, ``},
	} {
		m, ok := topMembers([]byte(tc.in))
		if !ok {
			t.Errorf("%s: not an object", tc.in)
			continue
		}
		var parts []string
		for _, k := range []string{"a", "b", "c"} {
			if v, ok := m[k]; ok {
				parts = append(parts, k+"="+string(v))
			}
		}
		if got := strings.Join(parts, " "); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, in := range []string{`[]`, `"x"`, ``} {
		if _, ok := topMembers([]byte(in)); ok {
			t.Errorf("%q: an object?", in)
		}
	}
}

func TestRawRequestEncoding(t *testing.T) {
	rs := newRawServer(t, true)
	c := dialRaw(t, rs.url, "", false)
	body, err := c.rawRequest(rawIDBase+7, "echo", json.RawMessage(`{"text":"a\u00e9"}`), "sb-1", nil, nil, "st")
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      int64           `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	var p mcp.CallToolParams
	if err := json.Unmarshal(msg.Params, &p); err != nil {
		t.Fatal(err)
	}
	var a struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	json.Unmarshal(msg.Params, &a)
	if msg.JSONRPC != "2.0" || msg.ID != rawIDBase+7 || msg.Method != "tools/call" || p.Name != "echo" || p.RequestState != "st" ||
		!bytes.Equal(a.Arguments, []byte(`{"text":"a\u00e9"}`)) || p.GetProgressToken() != "sb-1" ||
		p.Meta[mcp.MetaKeyProtocolVersion] != rawVersion || p.Meta[mcp.MetaKeyClientCapabilities] == nil || p.Meta[mcp.MetaKeyClientInfo] == nil {
		t.Errorf("request %s", body)
	}
}

// capPeer reports fixed client capabilities.
type capPeer struct {
	logPeer
	caps *mcp.ClientCapabilities
}

func (p *capPeer) ClientCapabilities() *mcp.ClientCapabilities { return p.caps }

// TestRawRequestMetaRemembered: a remembered _meta is the one encoded
// afresh, for each kind of peer, and a new discover forgets it.
func TestRawRequestMetaRemembered(t *testing.T) {
	rs := newRawServer(t, true)
	c := dialRaw(t, rs.url, `,"elicitation":true,"sampling":true,"roots":true`, false)
	elicit := &mcp.ElicitationCapabilities{}
	peers := []Peer{
		nil,
		&logPeer{},
		&capPeer{caps: &mcp.ClientCapabilities{}},
		&capPeer{caps: &mcp.ClientCapabilities{Elicitation: elicit}},
		&capPeer{caps: &mcp.ClientCapabilities{Elicitation: elicit, RootsV2: &mcp.RootCapabilities{ListChanged: true}}},
		&capPeer{caps: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}},
	}
	seen := map[string]bool{}
	for round := range 2 {
		for i, p := range peers {
			got, err := c.rawRequestMeta(p, "")
			if err != nil {
				t.Fatal(err)
			}
			want, _ := c.encodeRequestMeta(p, "")
			if string(got) != string(want) {
				t.Errorf("round %d, peer %d: remembered %s, encoded %s", round, i, got, want)
			}
			seen[string(got)] = true
		}
	}
	// Each peer's differs (logPeer reports fresh values on every call,
	// which are never remembered under a stale key).
	if len(seen) != len(peers) {
		t.Errorf("%d distinct _meta for the %d peers: %v", len(seen), len(peers), seen)
	}
	if with, _ := c.rawRequestMeta(peers[3], "sb-9"); !bytes.Contains(with, []byte(`"progressToken":"sb-9"`)) {
		t.Errorf("with a token: %s", with)
	}
	c.raw.noteDiscover([]byte(`{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"x":{}}}}}`))
	got, _ := c.rawRequestMeta(peers[0], "")
	if !bytes.Contains(got, []byte(`{"x":{}}`)) {
		t.Errorf("after a new discover: %s", got)
	}
}
