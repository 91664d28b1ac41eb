package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ---------------------------------------------------------------------------
// Shared fixtures and helpers
// ---------------------------------------------------------------------------

// progressLog records the progress a slot receives.
type progressLog struct {
	mu  sync.Mutex
	got []Progress
	// onProgress, when set, runs inside the callback (before it returns).
	onProgress func(Progress)
}

func (l *progressLog) add(p Progress) {
	l.mu.Lock()
	l.got = append(l.got, p)
	f := l.onProgress
	l.mu.Unlock()
	if f != nil {
		f(p)
	}
}

func (l *progressLog) list() []Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Progress(nil), l.got...)
}

// newTestSlot returns a slot for token whose progress is recorded.
func newTestSlot(token string) (*slot, *progressLog) {
	log := &progressLog{}
	_, s := withSlot(context.Background(), token, log.add)
	return s, log
}

// The wire messages used across the tests. "tok" is the slot's token.
const (
	progTok1  = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":3,"message":"one"}}`
	progTok2  = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":2,"total":3,"message":"two"}}`
	progTok3  = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":3,"total":3}}`
	progOther = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"other","progress":9}}`
	progNum   = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`
	logNote   = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`
	srvReq    = `{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`
	// respResult has an unknown content block type and an unknown field:
	// exactly what the SDK would drop or fail on.
	respResult = `{"content":[{"type":"hologram","beam":1}],"x-vendor":{"k":"v"},"isError":false}`
	resp       = `{"jsonrpc":"2.0","id":5,"result":` + respResult + `}`
	respOut    = `{"jsonrpc":"2.0","id":5,"result":{"content":[]}}`
	errResp    = `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"bad arguments"}}`
	inputReq   = `{"jsonrpc":"2.0","id":5,"result":{"resultType":"input_required","inputRequests":{"r1":{"method":"elicitation/create","params":{}}},"requestState":"s"}}`
)

var (
	wantP1 = Progress{Progress: 1, Total: 3, Message: "one"}
	wantP2 = Progress{Progress: 2, Total: 3, Message: "two"}
	wantP3 = Progress{Progress: 3, Total: 3}
)

// sseEvent is an event as go-sdk's scanEventsLimited (mcp/event.go)
// reports it.
type sseEvent struct {
	Name, ID, Retry string
	Data            string
}

// parseSSE mirrors go-sdk v1.8.0's SSE scanner: lines end at '\n' (a
// trailing "\r\n" is trimmed), a blank line dispatches, a line without ':'
// is malformed, data fields are TrimSpace'd and joined with '\n', and empty
// events are not reported.
func parseSSE(b []byte) ([]sseEvent, error) {
	var (
		out  []sseEvent
		evt  sseEvent
		data *bytes.Buffer
	)
	flush := func() {
		if data != nil {
			evt.Data = data.String()
			data = nil
		}
		if evt == (sseEvent{}) {
			return
		}
		out = append(out, evt)
		evt = sseEvent{}
	}
	for len(b) > 0 {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i+1], b[i+1:]
		} else {
			line, b = b, nil
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			flush()
			continue
		}
		before, after, found := bytes.Cut(line, []byte(":"))
		if !found {
			return out, fmt.Errorf("malformed line in SSE stream: %q", line)
		}
		switch string(before) {
		case "event":
			evt.Name = strings.TrimSpace(string(after))
		case "id":
			evt.ID = strings.TrimSpace(string(after))
		case "retry":
			evt.Retry = strings.TrimSpace(string(after))
		case "data":
			if data == nil {
				data = new(bytes.Buffer)
			} else {
				data.WriteByte('\n')
			}
			data.Write(bytes.TrimSpace(after))
		}
	}
	flush()
	return out, nil
}

// sdkMessages parses an SSE stream the way go-sdk's Streamable HTTP client
// does and decodes every message event, failing the test on anything the
// SDK would reject.
func sdkMessages(t *testing.T, stream []byte) []jsonrpc.Message {
	t.Helper()
	events, err := parseSSE(stream)
	if err != nil {
		t.Fatalf("output is not valid SSE: %v\nstream:\n%s", err, stream)
	}
	var msgs []jsonrpc.Message
	for _, e := range events {
		if e.Data == "" || (e.Name != "" && e.Name != "message") {
			continue
		}
		m, err := jsonrpc.DecodeMessage([]byte(e.Data))
		if err != nil {
			t.Fatalf("go-sdk cannot decode event data %q: %v", e.Data, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// eventIDs lists the non-empty ids of a stream's events, in order.
func eventIDs(t *testing.T, stream []byte) []string {
	t.Helper()
	events, err := parseSSE(stream)
	if err != nil {
		t.Fatalf("parse SSE: %v", err)
	}
	var ids []string
	for _, e := range events {
		if e.ID != "" {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

// newRewriter builds an sseRewriter exactly as captureRoundTripper does.
func newRewriter(src io.Reader, s *slot, max int64) *sseRewriter {
	return &sseRewriter{src: bufio.NewReaderSize(src, 64<<10), body: io.NopCloser(src), slot: s, max: max}
}

// readerModes are the ways a source can deliver its bytes.
var readerModes = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"one-byte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
	{"data-err", iotest.DataErrReader},
}

// readAllOneByte drains r one byte per Read, like a slow consumer.
func readAllOneByte(r io.Reader) ([]byte, error) {
	return io.ReadAll(iotest.OneByteReader(r))
}

func compactJSON(t testing.TB, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("compact %q: %v", b, err)
	}
	return buf.String()
}

func mustID(t testing.TB, v any) jsonrpc.ID {
	t.Helper()
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// ---------------------------------------------------------------------------
// rewriteResponse and slot
// ---------------------------------------------------------------------------

func TestRewriteResponse(t *testing.T) {
	const prefill = `{"content":[{"type":"text","text":"first"}]}`
	tests := []struct {
		name    string
		in      string
		prefill string // the slot's raw before the call; "" for empty
		want    string // the output; "" means the input unchanged
		wantRaw string // the slot's raw after; "" means nil (or prefill)
	}{
		{
			name:    "number id",
			in:      `{"jsonrpc":"2.0","id":7,"result":` + respResult + `}`,
			want:    `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`,
			wantRaw: respResult,
		},
		{
			name:    "string id",
			in:      `{"jsonrpc":"2.0","id":"req-42","result":` + respResult + `}`,
			want:    `{"jsonrpc":"2.0","id":"req-42","result":{"content":[]}}`,
			wantRaw: respResult,
		},
		{
			name:    "zero id",
			in:      `{"jsonrpc":"2.0","id":0,"result":{"content":[]}}`,
			want:    `{"jsonrpc":"2.0","id":0,"result":{"content":[]}}`,
			wantRaw: `{"content":[]}`,
		},
		{
			name:    "negative id",
			in:      `{"jsonrpc":"2.0","id":-3,"result":{"a":1}}`,
			want:    `{"jsonrpc":"2.0","id":-3,"result":{"content":[]}}`,
			wantRaw: `{"a":1}`,
		},
		{
			name:    "id beyond int64 kept byte for byte",
			in:      `{"jsonrpc":"2.0","id":18446744073709551617,"result":{"a":1}}`,
			want:    `{"jsonrpc":"2.0","id":18446744073709551617,"result":{"content":[]}}`,
			wantRaw: `{"a":1}`,
		},
		{
			name:    "string id with escapes kept byte for byte",
			in:      `{"jsonrpc":"2.0","id":"\u00e9t\u00e9 \"q\"","result":{"a":1}}`,
			want:    `{"jsonrpc":"2.0","id":"\u00e9t\u00e9 \"q\"","result":{"content":[]}}`,
			wantRaw: `{"a":1}`,
		},
		{
			name:    "whitespace and key order: result kept exactly as sent",
			in:      "{ \"result\" : { \"content\" : [ ] ,\n \"z\" : 1.50 } , \"id\" : \"a\" , \"jsonrpc\" : \"2.0\" }\n",
			want:    `{"jsonrpc":"2.0","id":"a","result":{"content":[]}}`,
			wantRaw: "{ \"content\" : [ ] ,\n \"z\" : 1.50 }",
		},
		{
			name:    "html and line separators in result kept exactly",
			in:      `{"jsonrpc":"2.0","id":1,"result":{"t":"<b>&amp;</b>` + "\u2028" + `"}}`,
			want:    `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
			wantRaw: `{"t":"<b>&amp;</b>` + "\u2028" + `"}`,
		},
		{name: "error response", in: errResp},
		{name: "error response with data", in: `{"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":"m","data":{"result":1}}}`},
		{name: "notification", in: progTok1},
		{name: "notification with result-looking params", in: `{"jsonrpc":"2.0","method":"notifications/message","params":{"result":{"a":1}}}`},
		{name: "server request", in: srvReq},
		{name: "request carrying a result member", in: `{"jsonrpc":"2.0","id":1,"method":"ping","result":{"a":1}}`},
		{name: "response without id", in: `{"jsonrpc":"2.0","result":{"a":1}}`},
		{name: "response without result", in: `{"jsonrpc":"2.0","id":1}`},
		{name: "truncated", in: `{"jsonrpc":"2.0","id":1,"result":{"a":`},
		{name: "empty", in: ``},
		{name: "whitespace only", in: " \n"},
		{name: "null", in: `null`},
		{name: "string", in: `"result"`},
		{name: "batch", in: `[{"jsonrpc":"2.0","id":1,"result":{"a":1}}]`},
		{name: "trailing garbage", in: `{"jsonrpc":"2.0","id":1,"result":{"a":1}} x`},
		{name: "two values", in: `{"jsonrpc":"2.0","id":1,"result":{"a":1}}{"jsonrpc":"2.0","id":2,"result":{}}`},
		{name: "method of wrong type", in: `{"jsonrpc":"2.0","id":1,"method":5,"result":{"a":1}}`},
		{name: "jsonrpc of wrong type", in: `{"jsonrpc":2,"id":1,"result":{"a":1}}`},
		{name: "input_required not captured", in: inputReq},
		{
			name:    "second capture does not overwrite",
			in:      `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"second"}]}}`,
			prefill: prefill,
			wantRaw: prefill,
		},
		{
			name:    "result equal to the stand-in is captured, bytes unchanged",
			in:      `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
			wantRaw: `{"content":[]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newTestSlot("tok")
			if tt.prefill != "" {
				s.raw = json.RawMessage(tt.prefill)
			}
			in := []byte(tt.in)
			got := rewriteResponse(in, s)
			want := tt.want
			if want == "" {
				want = tt.in
			}
			if string(got) != want {
				t.Errorf("output:\n got %s\nwant %s", got, want)
			}
			raw := s.get()
			switch {
			case tt.wantRaw == "" && raw != nil:
				t.Errorf("slot captured %s, want nothing", raw)
			case tt.wantRaw != "" && string(raw) != tt.wantRaw:
				t.Errorf("slot raw:\n got %q\nwant %q", raw, tt.wantRaw)
			}
			if tt.want == "" {
				return
			}
			// The rewritten response is one go-sdk decodes to the same ID.
			gotMsg, err := jsonrpc.DecodeMessage(got)
			if err != nil {
				t.Fatalf("go-sdk cannot decode the output: %v", err)
			}
			inMsg, err := jsonrpc.DecodeMessage(in)
			if err != nil {
				t.Fatalf("go-sdk cannot decode the input: %v", err)
			}
			gr, ok := gotMsg.(*jsonrpc.Response)
			if !ok {
				t.Fatalf("output decodes to %T, want *jsonrpc.Response", gotMsg)
			}
			if gr.ID != inMsg.(*jsonrpc.Response).ID {
				t.Errorf("ID: got %v, want %v", gr.ID, inMsg.(*jsonrpc.Response).ID)
			}
			if gr.Error != nil || string(gr.Result) != string(standIn) {
				t.Errorf("decoded output: result %s error %v, want the stand-in", gr.Result, gr.Error)
			}
			// The capture does not alias the caller's buffer.
			for i := range in {
				in[i] = 'X'
			}
			if string(s.get()) != tt.wantRaw {
				t.Errorf("capture aliases the input buffer: %q", s.get())
			}
		})
	}
}

// An ID with HTML-special characters is re-escaped by json.Marshal
// ("<" becomes "\u003c"): not byte-identical, but the same JSON string, so
// go-sdk matches the response to its call.
func TestRewriteResponseHTMLInID(t *testing.T) {
	s, _ := newTestSlot("")
	in := []byte(`{"jsonrpc":"2.0","id":"a<b>&c","result":{"a":1}}`)
	out := rewriteResponse(in, s)
	if string(s.get()) != `{"a":1}` {
		t.Fatalf("slot raw %q", s.get())
	}
	m, err := jsonrpc.DecodeMessage(out)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.(*jsonrpc.Response).ID, mustID(t, "a<b>&c"); got != want {
		t.Errorf("ID: got %v, want %v", got, want)
	}
}

func TestRewriteResponseTwiceKeepsFirst(t *testing.T) {
	s, _ := newTestSlot("")
	first := `{"jsonrpc":"2.0","id":1,"result":{"n":1}}`
	second := `{"jsonrpc":"2.0","id":1,"result":{"n":2}}`
	if got := rewriteResponse([]byte(first), s); string(got) != `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}` {
		t.Fatalf("first: %s", got)
	}
	if got := rewriteResponse([]byte(second), s); string(got) != second {
		t.Errorf("second was rewritten: %s", got)
	}
	if got := rewriteResponse([]byte(first), s); string(got) != first {
		t.Errorf("repeat was rewritten: %s", got)
	}
	if string(s.get()) != `{"n":1}` {
		t.Errorf("slot raw %s, want the first result", s.get())
	}
}

func TestSlotTake(t *testing.T) {
	s, _ := newTestSlot("")
	if got := s.take(json.RawMessage(`{"resultType":"input_required"}`)); string(got) != `{"resultType":"input_required"}` || s.get() != nil {
		t.Fatalf("input_required: got %s, raw %s", got, s.get())
	}
	if got := s.take(json.RawMessage(`{"a":1}`)); string(got) != string(standIn) {
		t.Fatalf("first take returned %s, want the stand-in", got)
	}
	if got := s.take(json.RawMessage(`{"b":2}`)); string(got) != `{"b":2}` {
		t.Fatalf("second take returned %s, want its input", got)
	}
	if string(s.get()) != `{"a":1}` {
		t.Fatalf("raw %s", s.get())
	}
}

func TestSlotDeliverAndFinish(t *testing.T) {
	s, log := newTestSlot("tok")
	released := 0
	s.release = func() { released++ }
	s.deliver(Progress{Progress: 1})
	s.finish()
	s.deliver(Progress{Progress: 2}) // after the call returned: dropped
	s.finish()                       // idempotent: releases once
	if got := log.list(); !reflect.DeepEqual(got, []Progress{{Progress: 1}}) {
		t.Errorf("progress %+v, want only the report before finish", got)
	}
	if released != 1 {
		t.Errorf("release called %d times, want 1", released)
	}
	// No callback: nothing to do, no panic.
	_, bare := withSlot(context.Background(), "", nil)
	bare.deliver(Progress{Progress: 1})
	bare.finish()
}

// finish waits for a delivery under way, so nothing reaches the caller
// after the call has returned.
func TestSlotFinishWaitsForDelivery(t *testing.T) {
	entered, unblock := make(chan struct{}), make(chan struct{})
	_, s := withSlot(context.Background(), "tok", func(Progress) {
		close(entered)
		<-unblock
	})
	go s.deliver(Progress{Progress: 1})
	<-entered
	finished := make(chan struct{})
	go func() { s.finish(); close(finished) }()
	select {
	case <-finished:
		t.Fatal("finish returned while a delivery was under way")
	case <-time.After(50 * time.Millisecond):
	}
	close(unblock)
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Fatal("finish did not return after the delivery")
	}
}

func TestSlotFault(t *testing.T) {
	s, _ := newTestSlot("")
	if s.getFault() != nil {
		t.Fatal("fault on a new slot")
	}
	first, second := errors.New("first"), errors.New("second")
	s.setFault(first)
	s.setFault(second)
	if s.getFault() != first {
		t.Fatalf("fault %v, want the first", s.getFault())
	}
}

// Exactly one of many concurrent takes captures.
func TestSlotTakeConcurrent(t *testing.T) {
	s, _ := newTestSlot("")
	var wg sync.WaitGroup
	var won atomic.Int32
	for i := range 32 {
		wg.Go(func() {
			raw := json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))
			if string(s.take(raw)) == string(standIn) {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d takes captured, want 1", won.Load())
	}
	if s.get() == nil {
		t.Fatal("nothing captured")
	}
}

func TestSlotFrom(t *testing.T) {
	if slotFrom(context.Background()) != nil {
		t.Fatal("slot from a bare context")
	}
	ctx, s := withSlot(context.Background(), "t", nil)
	if slotFrom(ctx) != s || s.token != "t" || s.progress != nil {
		t.Fatal("withSlot/slotFrom mismatch")
	}
}

func TestParseProgress(t *testing.T) {
	tests := []struct {
		params string
		tok    string
		p      Progress
		ok     bool
	}{
		{`{"progressToken":"a","progress":1.5,"total":10,"message":"m"}`, "a", Progress{1.5, 10, "m"}, true},
		{`{"progressToken":"a","progress":2}`, "a", Progress{Progress: 2}, true},
		{`{"progressToken":7,"progress":2}`, "", Progress{Progress: 2}, false},
		{`{"progress":2}`, "", Progress{Progress: 2}, false},
		{`{"progressToken":"a","progress":"x"}`, "", Progress{}, false},
		{`[]`, "", Progress{}, false},
		{``, "", Progress{}, false},
	}
	for _, tt := range tests {
		tok, p, ok := parseProgress(json.RawMessage(tt.params))
		if ok != tt.ok || (ok && (tok != tt.tok || p != tt.p)) {
			t.Errorf("parseProgress(%s) = %q, %+v, %v; want %q, %+v, %v", tt.params, tok, p, ok, tt.tok, tt.p, tt.ok)
		}
	}
}

func TestMediaType(t *testing.T) {
	for in, want := range map[string]string{
		"application/json":                  "application/json",
		"Application/JSON; charset=utf-8":   "application/json",
		" text/event-stream ;charset=utf-8": "text/event-stream",
		"":                                  "",
	} {
		if got := mediaType(in); got != want {
			t.Errorf("mediaType(%q) = %q, want %q", in, got, want)
		}
	}
}

// Only a result whose own resultType is "input_required" is left for
// go-sdk; a complete result that merely mentions the word is captured.
func TestRewriteResponseInputRequiredByResultType(t *testing.T) {
	tests := []struct {
		name    string
		result  string
		capture bool
	}{
		{"resultType input_required", `{"resultType":"input_required","inputRequests":{}}`, false},
		{"resultType with spaces", `{ "resultType" : "input_required" }`, false},
		{"resultType after content", `{"content":[],"resultType":"input_required","requestState":"x"}`, false},
		{"resultType complete", `{"content":[],"resultType":"complete"}`, true},
		{"text mentions input_required", `{"content":[{"type":"hologram"},{"type":"text","text":"input_required"}]}`, true},
		{"nested resultType", `{"content":[],"structuredContent":{"resultType":"input_required"}}`, true},
		{"key named input_required", `{"content":[],"input_required":true}`, true},
		{"resultType not a string", `{"content":[],"resultType":["input_required"]}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newTestSlot("")
			in := `{"jsonrpc":"2.0","id":1,"result":` + tt.result + `}`
			out := rewriteResponse([]byte(in), s)
			if tt.capture {
				if string(s.get()) != tt.result || string(out) != `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}` {
					t.Errorf("not captured: raw %q, out %s", s.get(), out)
				}
				return
			}
			if s.get() != nil || string(out) != in {
				t.Errorf("input_required captured: raw %q, out %s", s.get(), out)
			}
		})
	}
}

// A multi-round-trip marker spelled with a JSON escape (go-sdk decodes it to
// the same string) is recognised and left for go-sdk.
func TestRewriteResponseEscapedInputRequired(t *testing.T) {

	result := `{"resultType":"input\u005frequired","inputRequests":{"r1":{"method":"elicitation/create","params":{}}},"requestState":"s"}`
	var check struct{ ResultType string }
	if err := json.Unmarshal([]byte(result), &check); err != nil || check.ResultType != "input_required" {
		t.Fatalf("fixture: resultType %q, %v", check.ResultType, err)
	}
	s, _ := newTestSlot("")
	in := `{"jsonrpc":"2.0","id":1,"result":` + result + `}`
	if out := rewriteResponse([]byte(in), s); string(out) != in || s.get() != nil {
		t.Errorf("input_required result captured: raw %q, out %s", s.get(), out)
	}
}

// rewriteResponse reads members with exact keys, as go-sdk's decoder does:
// "Result" is not "result", and any "method" key makes a request.
func TestRewriteResponseAgreesWithSDKDecoder(t *testing.T) {

	tests := []struct{ name, in, wantRaw string }{
		// go-sdk's result is {"a":1}; capture must not take another member.
		{"duplicate differently-cased result", `{"jsonrpc":"2.0","id":1,"result":{"a":1},"Result":{"b":2}}`, `{"a":1}`},
		// go-sdk sees a response without a result: nothing to capture.
		{"upper-case RESULT only", `{"jsonrpc":"2.0","id":1,"RESULT":{"a":1}}`, ""},
		// go-sdk sees a request (method key present): not a response.
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":"","result":{"a":1}}`, ""},
		// go-sdk sees no resultType (a complete result): capture it.
		{"ResultType in other case", `{"jsonrpc":"2.0","id":1,"result":{"ResultType":"input_required","content":[]}}`, `{"ResultType":"input_required","content":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newTestSlot("")
			out := rewriteResponse([]byte(tt.in), s)
			if string(s.get()) != tt.wantRaw {
				t.Errorf("slot raw %q, want %q (output %s)", s.get(), tt.wantRaw, out)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// sseRewriter
// ---------------------------------------------------------------------------

func TestSSERewriter(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		nilProg  bool // the slot has no progress callback
		want     string
		wantRaw  string
		wantProg []Progress
	}{
		{
			name: "full stream",
			in: "id: 0\n\n" + // priming event: only an id
				"event: message\nid: 1\ndata: " + progTok1 + "\n\n" +
				"id: 2\ndata: " + progOther + "\n\n" +
				"data: " + srvReq + "\n\n" +
				": keep-alive comment\n\n" +
				"id: 3\ndata: " + progTok2 + "\n\n" +
				"data: " + logNote + "\n\n" +
				"id: 4\ndata: " + progTok3 + "\n\n" +
				"event: message\nid: 5\ndata: " + resp + "\n\n" +
				"id: 6\ndata: " + progTok1 + "\n\n" + // after the response: verbatim
				"data: " + logNote + "\n\n",
			want: "id: 0\n\n" +
				"id: 1\n\n" +
				"id: 2\ndata: " + progOther + "\n\n" +
				"data: " + srvReq + "\n\n" +
				": keep-alive comment\n\n" +
				"id: 3\n\n" +
				"data: " + logNote + "\n\n" +
				"id: 4\n\n" +
				"event: message\nid: 5\ndata: " + respOut + "\n\n" +
				"id: 6\ndata: " + progTok1 + "\n\n" +
				"data: " + logNote + "\n\n",
			wantRaw:  respResult,
			wantProg: []Progress{wantP1, wantP2, wantP3},
		},
		{
			name: "CRLF line endings",
			in: "id: 0\r\n\r\n" +
				"event: message\r\nid: 1\r\ndata: " + progTok1 + "\r\n\r\n" +
				"data: " + progOther + "\r\n\r\n" +
				"data: " + resp + "\r\n\r\n" +
				"data: " + logNote + "\r\n\r\n",
			want: "id: 0\r\n\r\n" +
				"id: 1\r\n\n" +
				"data: " + progOther + "\r\n\r\n" +
				"data: " + respOut + "\r\n\r\n" +
				"data: " + logNote + "\r\n\r\n",
			wantRaw:  respResult,
			wantProg: []Progress{wantP1},
		},
		{
			name:     "progress without an id line leaves a blank line",
			in:       "data: " + progTok1 + "\n\ndata: " + resp + "\n\n",
			want:     "\ndata: " + respOut + "\n\n",
			wantRaw:  respResult,
			wantProg: []Progress{wantP1},
		},
		{
			name:    "data without a space after the colon",
			in:      "data:" + resp + "\n\n",
			want:    "data: " + respOut + "\n\n",
			wantRaw: respResult,
		},
		{
			name:    "event name with surrounding spaces",
			in:      "event:  message \ndata: " + resp + "\n\n",
			want:    "event:  message \ndata: " + respOut + "\n\n",
			wantRaw: respResult,
		},
		{
			name: "other event names pass verbatim",
			in: "event: endpoint\ndata: " + resp + "\n\n" +
				"event: custom\nid: 1\ndata: " + progTok1 + "\n\n" +
				"event: message\ndata: " + resp + "\n\n",
			want: "event: endpoint\ndata: " + resp + "\n\n" +
				"event: custom\nid: 1\ndata: " + progTok1 + "\n\n" +
				"event: message\ndata: " + respOut + "\n\n",
			wantRaw: respResult,
		},
		{
			name: "multi-line data passes verbatim and is not captured",
			in: "data: {\"jsonrpc\":\"2.0\",\"id\":5,\ndata: \"result\":{\"a\":1}}\n\n" +
				"data: {\"jsonrpc\":\"2.0\",\n" + "data: " + progTok1[len(`{"jsonrpc":"2.0",`):] + "\n\n",
			want: "data: {\"jsonrpc\":\"2.0\",\"id\":5,\ndata: \"result\":{\"a\":1}}\n\n" +
				"data: {\"jsonrpc\":\"2.0\",\n" + "data: " + progTok1[len(`{"jsonrpc":"2.0",`):] + "\n\n",
		},
		{
			name: "error response passes and ends rewriting",
			in:   "data: " + errResp + "\n\ndata: " + progTok1 + "\n\ndata: " + resp + "\n\n",
			want: "data: " + errResp + "\n\ndata: " + progTok1 + "\n\ndata: " + resp + "\n\n",
		},
		{
			name: "input_required response passes and ends rewriting",
			in:   "id: 1\ndata: " + inputReq + "\n\ndata: " + resp + "\n\n",
			want: "id: 1\ndata: " + inputReq + "\n\ndata: " + resp + "\n\n",
		},
		{
			name: "progress with a numeric token passes",
			in:   "data: " + progNum + "\n\n",
			want: "data: " + progNum + "\n\n",
		},
		{
			name:    "no progress callback: progress passes",
			nilProg: true,
			in:      "id: 1\ndata: " + progTok1 + "\n\ndata: " + resp + "\n\n",
			want:    "id: 1\ndata: " + progTok1 + "\n\ndata: " + respOut + "\n\n",
			wantRaw: respResult,
		},
		{
			name: "retry and unknown fields pass",
			in:   "retry: 1000\n\nfoo: bar\ndata: " + logNote + "\n\n",
			want: "retry: 1000\n\nfoo: bar\ndata: " + logNote + "\n\n",
		},
		{
			name: "extra blank lines pass",
			in:   "\n\n\ndata: " + logNote + "\n\n\n",
			want: "\n\n\ndata: " + logNote + "\n\n\n",
		},
		{
			name:    "response at EOF without a line ending",
			in:      "data: " + resp,
			want:    "data: " + respOut,
			wantRaw: respResult,
		},
		{
			name:    "response at EOF without a blank line",
			in:      "data: " + resp + "\n",
			want:    "data: " + respOut + "\n",
			wantRaw: respResult,
		},
		{
			name:     "progress at EOF without a blank line",
			in:       "id: 9\ndata: " + progTok1,
			want:     "id: 9\n\n",
			wantProg: []Progress{wantP1},
		},
		{
			name:    "response with trailing spaces and CR CR LF",
			in:      "data: " + resp + "  \r\r\n\r\n",
			want:    "data: " + respOut + "\r\r\n\r\n",
			wantRaw: respResult,
		},
		{name: "empty stream", in: "", want: ""},
		{name: "only a priming event", in: "id: 0\n\n", want: "id: 0\n\n"},
		{name: "only a priming event with empty data", in: "id: 0\ndata:\n\n", want: "id: 0\ndata:\n\n"},
	}
	for _, tt := range tests {
		for _, mode := range readerModes {
			for _, slow := range []bool{false, true} {
				name := tt.name + "/" + mode.name
				if slow {
					name += "/slow-consumer"
				}
				t.Run(name, func(t *testing.T) {
					log := &progressLog{}
					var progress func(Progress)
					if !tt.nilProg {
						progress = log.add
					}
					_, s := withSlot(context.Background(), "tok", progress)
					r := newRewriter(mode.wrap(strings.NewReader(tt.in)), s, 1<<20)
					var out []byte
					var err error
					if slow {
						out, err = readAllOneByte(r)
					} else {
						out, err = io.ReadAll(r)
					}
					if err != nil {
						t.Fatalf("read: %v", err)
					}
					if string(out) != tt.want {
						t.Errorf("output:\n got %q\nwant %q", out, tt.want)
					}
					if string(s.get()) != tt.wantRaw {
						t.Errorf("slot raw:\n got %q\nwant %q", s.get(), tt.wantRaw)
					}
					if got := log.list(); !reflect.DeepEqual(got, tt.wantProg) {
						t.Errorf("progress: got %+v, want %+v", got, tt.wantProg)
					}
					// Still SSE go-sdk parses, with every event id kept for
					// resumption, and the response is the stand-in.
					sdkMessages(t, out)
					if got, want := eventIDs(t, out), eventIDs(t, []byte(tt.in)); !reflect.DeepEqual(got, want) {
						t.Errorf("event ids: got %q, want %q", got, want)
					}
					// A later Read keeps reporting EOF.
					if n, err := r.Read(make([]byte, 8)); n != 0 || err != io.EOF {
						t.Errorf("Read after EOF = %d, %v", n, err)
					}
				})
			}
		}
	}
}

// Progress reaches the slot before the caller can see the response.
func TestSSERewriterProgressBeforeResponse(t *testing.T) {
	in := "data: " + progTok1 + "\n\n" + "data: " + progTok2 + "\n\n" + "data: " + resp + "\n\n"
	_, s := withSlot(context.Background(), "tok", nil)
	var consumed bytes.Buffer
	var seen []string
	s.progress = func(Progress) { seen = append(seen, consumed.String()) }
	r := newRewriter(iotest.OneByteReader(strings.NewReader(in)), s, 1<<20)
	buf := make([]byte, 1)
	for {
		n, err := r.Read(buf)
		consumed.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 2 {
		t.Fatalf("progress delivered %d times, want 2", len(seen))
	}
	for _, sofar := range seen {
		if strings.Contains(sofar, "result") {
			t.Errorf("progress delivered after the caller read the response: %q", sofar)
		}
	}
	if consumed.String() != "\n\ndata: "+respOut+"\n\n" {
		t.Errorf("output %q", consumed.String())
	}
}

// After the call has returned, the call's progress is neither delivered nor
// passed on to go-sdk (whose handler no longer knows the token).
func TestSSERewriterProgressAfterFinish(t *testing.T) {
	s, log := newTestSlot("tok")
	s.finish()
	in := "id: 1\ndata: " + progTok1 + "\n\ndata: " + resp + "\n\n"
	out, err := io.ReadAll(newRewriter(strings.NewReader(in), s, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	if len(log.list()) != 0 {
		t.Errorf("progress delivered after finish: %+v", log.list())
	}
	if want := "id: 1\n\ndata: " + respOut + "\n\n"; string(out) != want {
		t.Errorf("output:\n got %q\nwant %q", out, want)
	}
}

func TestSSERewriterCap(t *testing.T) {
	const max = 1024
	big := strings.Repeat("x", 2000)
	bigNote := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + big + `"}}`
	okEvent := "id: 1\ndata: " + logNote + "\n\n"
	tests := []struct {
		name     string
		in       string
		wantOut  string // what is delivered before the error
		wantErr  bool
		wantProg int
	}{
		{name: "single line over the cap", in: okEvent + "data: " + bigNote + "\n\n" + "data: " + resp + "\n\n", wantOut: okEvent, wantErr: true},
		{name: "many lines over the cap", in: okEvent + strings.Repeat(": comment line\n", 100) + "\n", wantOut: okEvent, wantErr: true},
		{name: "progress before an oversized response is delivered", in: "data: " + progTok1 + "\n\n" + "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"" + big + "\"}}\n\n", wantOut: "\n", wantErr: true, wantProg: 1},
		{name: "unterminated event over the cap", in: "data: " + bigNote, wantErr: true},
		{name: "events each under the cap", in: strings.Repeat(okEvent, 50), wantOut: strings.Repeat(okEvent, 50)},
	}
	for _, tt := range tests {
		for _, mode := range readerModes {
			t.Run(tt.name+"/"+mode.name, func(t *testing.T) {
				s, log := newTestSlot("tok")
				r := newRewriter(mode.wrap(strings.NewReader(tt.in)), s, max)
				out, err := io.ReadAll(r)
				if tt.wantErr != (err != nil) {
					t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
				}
				if tt.wantErr {
					if !errors.Is(err, ErrResponseTooLarge) {
						t.Errorf("err = %v, want one wrapping ErrResponseTooLarge", err)
					}
					if !strings.Contains(err.Error(), "1 KiB") {
						t.Errorf("err = %v, want it to name the 1 KiB cap", err)
					}
					// The error sticks.
					if n, err2 := r.Read(make([]byte, 10)); n != 0 || !errors.Is(err2, ErrResponseTooLarge) {
						t.Errorf("Read after the error = %d, %v", n, err2)
					}
				}
				if string(out) != tt.wantOut {
					t.Errorf("output before the error:\n got %q\nwant %q", out, tt.wantOut)
				}
				if s.get() != nil {
					t.Errorf("captured %q from an oversized stream", s.get())
				}
				// The call's fault names the cause go-sdk would lose.
				if f := s.getFault(); tt.wantErr != (f != nil) || (f != nil && f != err) {
					t.Errorf("slot fault %v, want the read error (%v)", f, err)
				}
				if got := len(log.list()); got != tt.wantProg {
					t.Errorf("progress delivered %d times, want %d", got, tt.wantProg)
				}
			})
		}
	}
}

// The cap counts an event's bytes, line endings and terminating blank line
// included: an event of exactly max bytes passes; one byte more fails.
func TestSSERewriterCapBoundary(t *testing.T) {
	event := "data: " + resp + "\n\n"
	for _, tc := range []struct {
		max     int64
		wantErr bool
	}{
		{int64(len(event)), false},
		{int64(len(event)) - 1, true},
	} {
		s, _ := newTestSlot("tok")
		out, err := io.ReadAll(newRewriter(strings.NewReader(event), s, tc.max))
		if tc.wantErr {
			if !errors.Is(err, ErrResponseTooLarge) {
				t.Errorf("max %d: err = %v, want ErrResponseTooLarge", tc.max, err)
			}
			continue
		}
		if err != nil || string(out) != "data: "+respOut+"\n\n" || string(s.get()) != respResult {
			t.Errorf("max %d: out %q, err %v, raw %q", tc.max, out, err, s.get())
		}
	}
}

// Lines longer than the 64 KiB bufio buffer but within the cap work.
func TestSSERewriterLongLines(t *testing.T) {
	long := strings.Repeat("abcdefgh", 40<<10) // 320 KiB
	result := `{"content":[{"type":"text","text":"` + long + `"}],"x":1}`
	response := `{"jsonrpc":"2.0","id":"long","result":` + result + `}`
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + long + `"}}`
	progLong := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"message":"` + long + `"}}`
	in := "id: 1\ndata: " + note + "\n\n" +
		"id: 2\ndata: " + progLong + "\r\n\r\n" +
		"data: " + response + "\n\n" +
		"data: " + note + "\n\n"
	want := "id: 1\ndata: " + note + "\n\n" +
		"id: 2\n\n" +
		`data: {"jsonrpc":"2.0","id":"long","result":{"content":[]}}` + "\n\n" +
		"data: " + note + "\n\n"
	for _, mode := range readerModes {
		t.Run(mode.name, func(t *testing.T) {
			s, log := newTestSlot("tok")
			out, err := io.ReadAll(newRewriter(mode.wrap(strings.NewReader(in)), s, 1<<20))
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != want {
				t.Errorf("output differs (len %d, want %d)", len(out), len(want))
			}
			if string(s.get()) != result {
				t.Errorf("captured %d bytes, want the %d-byte result", len(s.get()), len(result))
			}
			if p := log.list(); len(p) != 1 || p[0].Message != long {
				t.Errorf("long progress not delivered: %d reports", len(p))
			}
			sdkMessages(t, out)
		})
	}
}

// countingReader counts the bytes taken from its source.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// A line far over the cap fails without reading (or buffering) it whole.
func TestSSERewriterLongLineOverCap(t *testing.T) {
	const max = 100 << 10
	in := "data: " + strings.Repeat("y", 4<<20) + "\n\n"
	src := &countingReader{r: strings.NewReader(in)}
	s, _ := newTestSlot("tok")
	_, err := io.ReadAll(newRewriter(src, s, max))
	if !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("err = %v, want ErrResponseTooLarge", err)
	}
	if got := src.n.Load(); got > max+2*(64<<10) {
		t.Errorf("read %d bytes of the source before failing, want at most the cap plus a buffer", got)
	}
}

func TestSSERewriterSourceError(t *testing.T) {
	boom := errors.New("boom")
	src := io.MultiReader(strings.NewReader("id: 1\ndata: "+logNote+"\n\ndata: partial"), iotest.ErrReader(boom))
	s, _ := newTestSlot("tok")
	out, err := io.ReadAll(newRewriter(src, s, 1<<20))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	// The partial event is passed on with the error; go-sdk reports both.
	if string(out) != "id: 1\ndata: "+logNote+"\n\ndata: partial" {
		t.Errorf("output %q", out)
	}

	// After the response, errors from the source also pass through.
	src = io.MultiReader(strings.NewReader("data: "+resp+"\n\ndata: x"), iotest.ErrReader(boom))
	s, _ = newTestSlot("tok")
	out, err = io.ReadAll(newRewriter(src, s, 1<<20))
	if !errors.Is(err, boom) || string(out) != "data: "+respOut+"\n\ndata: x" {
		t.Errorf("after the response: out %q, err %v", out, err)
	}
}

type closeSpy struct {
	io.Reader
	closed atomic.Int32
}

func (c *closeSpy) Close() error { c.closed.Add(1); return nil }

func TestSSERewriterClose(t *testing.T) {
	spy := &closeSpy{Reader: strings.NewReader("data: x\n\n")}
	s, _ := newTestSlot("tok")
	r := &sseRewriter{src: bufio.NewReader(spy), body: spy, slot: s, max: 1 << 20}
	if err := r.Close(); err != nil || spy.closed.Load() != 1 {
		t.Fatalf("Close = %v, body closed %d times", err, spy.closed.Load())
	}
}

// Progress is routed before the response check, so a report whose text
// mentions "result" or "error" still reaches the call.
func TestSSERewriterProgressMentioningResultOrError(t *testing.T) {

	for _, msg := range []string{"error", "result"} {
		t.Run(msg, func(t *testing.T) {
			prog := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"message":"` + msg + `"}}`
			in := "id: 1\ndata: " + prog + "\n\ndata: " + resp + "\n\n"
			s, log := newTestSlot("tok")
			out, err := io.ReadAll(newRewriter(strings.NewReader(in), s, 1<<20))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := log.list(), []Progress{{Progress: 1, Message: msg}}; !reflect.DeepEqual(got, want) {
				t.Errorf("progress: got %+v, want %+v", got, want)
			}
			if want := "id: 1\n\ndata: " + respOut + "\n\n"; string(out) != want {
				t.Errorf("output:\n got %q\nwant %q", out, want)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// captureConn
// ---------------------------------------------------------------------------

// fakeConn is an in-memory mcp.Connection: the test plays the server.
type fakeConn struct {
	in       chan jsonrpc.Message // what the server sends
	errs     chan error           // read errors the server causes
	written  chan jsonrpc.Message // what the client wrote
	writeErr error

	closed  chan struct{}
	once    sync.Once
	reading atomic.Int32 // Reads in progress
	reads   atomic.Int32 // Reads started
}

func newFakeConn() *fakeConn {
	return &fakeConn{
		in:      make(chan jsonrpc.Message),
		errs:    make(chan error, 1),
		written: make(chan jsonrpc.Message, 100),
		closed:  make(chan struct{}),
	}
}

func (f *fakeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	f.reads.Add(1)
	f.reading.Add(1)
	defer f.reading.Add(-1)
	select {
	case m := <-f.in:
		return m, nil
	case err := <-f.errs:
		return nil, err
	case <-f.closed:
		return nil, mcp.ErrConnectionClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeConn) Write(_ context.Context, msg jsonrpc.Message) error {
	if f.writeErr != nil {
		return f.writeErr
	}
	select {
	case f.written <- msg:
	default:
	}
	return nil
}

func (f *fakeConn) Close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

func (f *fakeConn) SessionID() string { return "" }

type fakeTransport struct{ conn *fakeConn }

func (t fakeTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

// dialCapture connects a captureConn over a fakeConn, as Dial does.
func dialCapture(t *testing.T, probe time.Duration) (*captureConn, *fakeConn) {
	t.Helper()
	f := newFakeConn()
	c, err := captureTransport{Transport: fakeTransport{f}, probe: probe}.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cc := c.(*captureConn)
	t.Cleanup(func() {
		cc.Close()
		waitNoGoroutine(t, "(*captureConn).pump")
	})
	return cc, f
}

// readMsg reads one message; the server side may need to send first, so
// sends happen in their own goroutine via serve.
func readMsg(t *testing.T, c *captureConn, within time.Duration) (jsonrpc.Message, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	return c.Read(ctx)
}

// serve sends msgs from a goroutine, in order.
func serve(t *testing.T, f *fakeConn, msgs ...jsonrpc.Message) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, m := range msgs {
			select {
			case f.in <- m:
			case <-f.closed:
				return
			case <-time.After(5 * time.Second):
				t.Errorf("server message %v not read", m)
				return
			}
		}
	}()
	return done
}

func waitNoGoroutine(t *testing.T, fn string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if !bytes.Contains(buf[:n], []byte(fn)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutine %s still running:\n%s", fn, buf[:n])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func cloneMsgs(msgs []jsonrpc.Message) []jsonrpc.Message {
	out := make([]jsonrpc.Message, len(msgs))
	for i, m := range msgs {
		switch m := m.(type) {
		case *jsonrpc.Response:
			c := *m
			out[i] = &c
		case *jsonrpc.Request:
			c := *m
			out[i] = &c
		}
	}
	return out
}

func progressNote(tok any, p float64) *jsonrpc.Request {
	params, _ := json.Marshal(map[string]any{"progressToken": tok, "progress": p, "total": 10})
	return &jsonrpc.Request{Method: "notifications/progress", Params: params}
}

func toolsCall(id jsonrpc.ID) *jsonrpc.Request {
	return &jsonrpc.Request{ID: id, Method: "tools/call", Params: json.RawMessage(`{"name":"x","arguments":{},"_meta":{"progressToken":"tok"}}`)}
}

// probeModes runs a test with and without the read pump.
var probeModes = []struct {
	name  string
	probe time.Duration
}{
	{"no-probe", 0},
	{"probe", time.Hour}, // pump on; no server/discover, so the timer never runs
}

func TestCaptureConnCapture(t *testing.T) {
	id1 := mustID(t, float64(1))
	idS := mustID(t, "call-a")
	result := json.RawMessage(respResult)
	tests := []struct {
		name     string
		write    *jsonrpc.Request
		noSlot   bool
		serve    []jsonrpc.Message
		want     []string // the messages Read returns, JSON-encoded, in order
		wantRaw  string
		wantProg []Progress
	}{
		{
			name:    "tools/call result captured (number id)",
			write:   toolsCall(id1),
			serve:   []jsonrpc.Message{&jsonrpc.Response{ID: id1, Result: result}},
			want:    []string{`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`},
			wantRaw: respResult,
		},
		{
			name:    "tools/call result captured (string id)",
			write:   toolsCall(idS),
			serve:   []jsonrpc.Message{&jsonrpc.Response{ID: idS, Result: result}},
			want:    []string{`{"jsonrpc":"2.0","id":"call-a","result":{"content":[]}}`},
			wantRaw: respResult,
		},
		{
			name:  "progress for the token delivered and swallowed",
			write: toolsCall(id1),
			serve: []jsonrpc.Message{
				progressNote("tok", 1),
				progressNote("other", 5),
				progressNote("tok", 2),
				progressNote(7, 3),
				progressNote("tok", 3),
				&jsonrpc.Response{ID: id1, Result: result},
				progressNote("tok", 4), // after the response: the token is gone
			},
			want: []string{
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":5,"progressToken":"other","total":10}}`,
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":3,"progressToken":7,"total":10}}`,
				`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":4,"progressToken":"tok","total":10}}`,
			},
			wantRaw:  respResult,
			wantProg: []Progress{{1, 10, ""}, {2, 10, ""}, {3, 10, ""}},
		},
		{
			name:  "error response untouched",
			write: toolsCall(id1),
			serve: []jsonrpc.Message{&jsonrpc.Response{ID: id1, Error: &jsonrpc.Error{Code: -32602, Message: "bad"}}},
			want:  []string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`},
		},
		{
			name:  "input_required untouched",
			write: toolsCall(id1),
			serve: []jsonrpc.Message{&jsonrpc.Response{ID: id1, Result: json.RawMessage(`{"resultType":"input_required"}`)}},
			want:  []string{`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}`},
		},
		{
			name:   "no slot: untouched",
			write:  toolsCall(id1),
			noSlot: true,
			serve:  []jsonrpc.Message{&jsonrpc.Response{ID: id1, Result: result}},
			want:   []string{`{"jsonrpc":"2.0","id":1,"result":` + respResult + `}`},
		},
		{
			name:  "other method with a slot: untouched",
			write: &jsonrpc.Request{ID: id1, Method: "tools/list"},
			serve: []jsonrpc.Message{&jsonrpc.Response{ID: id1, Result: result}},
			want:  []string{`{"jsonrpc":"2.0","id":1,"result":` + respResult + `}`},
		},
		{
			name:  "response to another id: untouched",
			write: toolsCall(id1),
			serve: []jsonrpc.Message{&jsonrpc.Response{ID: mustID(t, float64(2)), Result: result}},
			want:  []string{`{"jsonrpc":"2.0","id":2,"result":` + respResult + `}`},
		},
		{
			name:  "server request and notification pass",
			write: toolsCall(id1),
			serve: []jsonrpc.Message{
				&jsonrpc.Request{ID: mustID(t, "s1"), Method: "ping"},
				&jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"x"}`)},
			},
			want: []string{
				`{"jsonrpc":"2.0","id":"s1","method":"ping"}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
			},
		},
		{
			name:  "progress request with an id is not swallowed",
			write: toolsCall(id1),
			serve: []jsonrpc.Message{&jsonrpc.Request{ID: mustID(t, "p"), Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":"tok","progress":1}`)}},
			want:  []string{`{"jsonrpc":"2.0","id":"p","method":"notifications/progress","params":{"progressToken":"tok","progress":1}}`},
		},
		{
			name:  "malformed progress params pass",
			write: toolsCall(id1),
			serve: []jsonrpc.Message{&jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`[1]`)}},
			want:  []string{`{"jsonrpc":"2.0","method":"notifications/progress","params":[1]}`},
		},
	}
	for _, tt := range tests {
		for _, pm := range probeModes {
			t.Run(tt.name+"/"+pm.name, func(t *testing.T) {
				c, f := dialCapture(t, pm.probe)
				log := &progressLog{}
				ctx, s := withSlot(context.Background(), "tok", log.add)
				if tt.noSlot {
					ctx = context.Background()
				}
				if err := c.Write(ctx, tt.write); err != nil {
					t.Fatal(err)
				}
				if got := <-f.written; got != jsonrpc.Message(tt.write) {
					t.Fatalf("inner Write got %v", got)
				}
				// captureConn rewrites the messages it reads in place: serve
				// copies, so the subtests do not share them.
				done := serve(t, f, cloneMsgs(tt.serve)...)
				for i, want := range tt.want {
					msg, err := readMsg(t, c, 5*time.Second)
					if err != nil {
						t.Fatalf("read %d: %v", i, err)
					}
					b, err := jsonrpc.EncodeMessage(msg)
					if err != nil {
						t.Fatal(err)
					}
					if compactJSON(t, b) != compactJSON(t, []byte(want)) {
						t.Errorf("read %d:\n got %s\nwant %s", i, b, want)
					}
				}
				<-done
				if string(s.get()) != tt.wantRaw {
					t.Errorf("slot raw %q, want %q", s.get(), tt.wantRaw)
				}
				if got := log.list(); !reflect.DeepEqual(got, tt.wantProg) {
					t.Errorf("progress %+v, want %+v", got, tt.wantProg)
				}
				c.mu.Lock()
				defer c.mu.Unlock()
				if tt.wantRaw != "" && (len(c.pending) != 0 || len(c.tokens) != 0) {
					t.Errorf("after the response: pending %v tokens %v", c.pending, c.tokens)
				}
			})
		}
	}
}

// Progress is delivered synchronously, before Read returns the next message.
func TestCaptureConnProgressSynchronous(t *testing.T) {
	for _, pm := range probeModes {
		t.Run(pm.name, func(t *testing.T) {
			c, f := dialCapture(t, pm.probe)
			id := mustID(t, float64(3))
			log := &progressLog{}
			ctx, s := withSlot(context.Background(), "tok", log.add)
			if err := c.Write(ctx, toolsCall(id)); err != nil {
				t.Fatal(err)
			}
			var inCallback atomic.Bool
			log.onProgress = func(Progress) {
				// Read has not returned: the test goroutine is blocked in it.
				inCallback.Store(true)
			}
			done := serve(t, f, progressNote("tok", 1), progressNote("tok", 2), &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"a":1}`)})
			msg, err := readMsg(t, c, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			<-done
			if _, ok := msg.(*jsonrpc.Response); !ok {
				t.Fatalf("first Read returned %T, want the response (progress swallowed)", msg)
			}
			if got := log.list(); len(got) != 2 || got[0].Progress != 1 || got[1].Progress != 2 || !inCallback.Load() {
				t.Errorf("progress when Read returned: %+v", got)
			}
			if string(s.get()) != `{"a":1}` {
				t.Errorf("raw %s", s.get())
			}
		})
	}
}

func TestCaptureConnWriteErrorForgets(t *testing.T) {
	for _, pm := range probeModes {
		t.Run(pm.name, func(t *testing.T) {
			c, f := dialCapture(t, pm.probe)
			f.writeErr = errors.New("pipe closed")
			ctx, s := withSlot(context.Background(), "tok", func(Progress) { t.Error("progress after a failed write") })
			id := mustID(t, float64(1))
			if err := c.Write(ctx, toolsCall(id)); !errors.Is(err, f.writeErr) {
				t.Fatalf("Write = %v", err)
			}
			c.mu.Lock()
			np, nt := len(c.pending), len(c.tokens)
			c.mu.Unlock()
			if np != 0 || nt != 0 {
				t.Fatalf("after a failed write: %d pending, %d tokens", np, nt)
			}
			done := serve(t, f, progressNote("tok", 1), &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"a":1}`)})
			for range 2 {
				if _, err := readMsg(t, c, 5*time.Second); err != nil {
					t.Fatal(err)
				}
			}
			<-done
			if s.get() != nil {
				t.Errorf("captured %s for a call that was never sent", s.get())
			}
		})
	}
}

// A call that returns without its response (cancelled, timed out) leaves
// nothing behind: finish forgets it, its late progress is not delivered,
// and its late response is not captured.
func TestCaptureConnFinishReleases(t *testing.T) {
	for _, pm := range probeModes {
		t.Run(pm.name, func(t *testing.T) {
			c, f := dialCapture(t, pm.probe)
			log := &progressLog{}
			ctx, s := withSlot(context.Background(), "tok", log.add)
			id := mustID(t, float64(11))
			if err := c.Write(ctx, toolsCall(id)); err != nil {
				t.Fatal(err)
			}
			c.mu.Lock()
			np, nt := len(c.pending), len(c.tokens)
			c.mu.Unlock()
			if np != 1 || nt != 1 {
				t.Fatalf("after Write: %d pending, %d tokens; want 1 and 1", np, nt)
			}
			s.finish()
			c.mu.Lock()
			np, nt = len(c.pending), len(c.tokens)
			c.mu.Unlock()
			if np != 0 || nt != 0 {
				t.Fatalf("after finish: %d pending, %d tokens; want none", np, nt)
			}
			done := serve(t, f, progressNote("tok", 1), &jsonrpc.Response{ID: id, Result: json.RawMessage(respResult)})
			msg, err := readMsg(t, c, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if req, ok := msg.(*jsonrpc.Request); !ok || req.Method != "notifications/progress" {
				t.Errorf("first Read %#v, want the late progress passed on", msg)
			}
			msg, err = readMsg(t, c, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			<-done
			if r, ok := msg.(*jsonrpc.Response); !ok || string(r.Result) != respResult {
				t.Errorf("second Read %#v, want the late response untouched", msg)
			}
			if s.get() != nil || len(log.list()) != 0 {
				t.Errorf("after finish: raw %q, progress %+v", s.get(), log.list())
			}
		})
	}
}

// A connection closed before its handshake completed is aborted (no grace
// period); an established one is closed gracefully.
func TestCaptureConnAbortBeforeEstablished(t *testing.T) {
	for _, tc := range []struct {
		name        string
		established *bool // nil: no flag
		withAbort   bool
		wantAborts  int32
	}{
		{"not established", new(false), true, 1},
		{"established", new(true), true, 0},
		{"no flag", nil, true, 0},
		{"no abort func", new(false), false, 0},
	} {
		for _, pm := range probeModes {
			t.Run(tc.name+"/"+pm.name, func(t *testing.T) {
				f := newFakeConn()
				var aborts atomic.Int32
				tr := captureTransport{Transport: fakeTransport{f}, probe: pm.probe}
				if tc.established != nil {
					tr.established = new(atomic.Bool)
					tr.established.Store(*tc.established)
				}
				if tc.withAbort {
					tr.abort = func() {
						// The inner connection is still open when abort runs.
						select {
						case <-f.closed:
							t.Error("abort after the inner Close")
						default:
						}
						aborts.Add(1)
					}
				}
				conn, err := tr.Connect(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if err := conn.Close(); err != nil {
					t.Fatal(err)
				}
				select {
				case <-f.closed:
				default:
					t.Error("inner connection not closed")
				}
				if got := aborts.Load(); got != tc.wantAborts {
					t.Errorf("abort called %d times, want %d", got, tc.wantAborts)
				}
				waitNoGoroutine(t, "(*captureConn).pump")
			})
		}
	}
}

func TestCaptureConnProbeTimeout(t *testing.T) {
	const probe = 50 * time.Millisecond
	c, f := dialCapture(t, probe)
	id := mustID(t, float64(0))
	start := time.Now()
	if err := c.Write(context.Background(), &jsonrpc.Request{ID: id, Method: "server/discover", Params: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	msg, err := readMsg(t, c, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < probe {
		t.Errorf("synthetic answer after %v, before the %v probe", el, probe)
	}
	r, ok := msg.(*jsonrpc.Response)
	if !ok || r.ID != id || r.Error == nil {
		t.Fatalf("Read = %#v, want an error response to the probe", msg)
	}
	var we *jsonrpc.Error
	if !errors.As(r.Error, &we) || we.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("error %v, want code %d", r.Error, jsonrpc.CodeMethodNotFound)
	}
	if !strings.Contains(we.Message, "server/discover") {
		t.Errorf("message %q does not name the probe", we.Message)
	}

	// The late real answer is dropped; the next message comes through.
	done := serve(t, f,
		&jsonrpc.Response{ID: id, Result: json.RawMessage(`{"supportedVersions":["2026-07-28"]}`)},
		&jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{}`)},
	)
	msg, err = readMsg(t, c, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	if req, ok := msg.(*jsonrpc.Request); !ok || req.Method != "notifications/message" {
		t.Fatalf("Read = %#v, want the notification after the dropped late answer", msg)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.probes) != 0 || len(c.dropped) != 0 {
		t.Errorf("probes %v dropped %v left over", c.probes, c.dropped)
	}
}

func TestCaptureConnProbeAnswered(t *testing.T) {
	const probe = 30 * time.Millisecond
	c, f := dialCapture(t, probe)
	id := mustID(t, "d1")
	if err := c.Write(context.Background(), &jsonrpc.Request{ID: id, Method: "server/discover"}); err != nil {
		t.Fatal(err)
	}
	done := serve(t, f, &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"ok":true}`)})
	msg, err := readMsg(t, c, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	if r, ok := msg.(*jsonrpc.Response); !ok || r.ID != id || r.Error != nil || string(r.Result) != `{"ok":true}` {
		t.Fatalf("Read = %#v, want the real answer", msg)
	}
	c.mu.Lock()
	n := len(c.probes)
	c.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d probe timers left after the answer", n)
	}
	// The stopped timer never answers.
	time.Sleep(4 * probe)
	if _, err := readMsg(t, c, 3*probe); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read after an answered probe = %v, want nothing (deadline)", err)
	}
}

func TestCaptureConnNoProbe(t *testing.T) {
	tests := []struct {
		name  string
		probe time.Duration
		msg   *jsonrpc.Request
	}{
		{"probe disabled", 0, &jsonrpc.Request{ID: mustID(t, float64(1)), Method: "server/discover"}},
		{"discover notification", 10 * time.Millisecond, &jsonrpc.Request{Method: "server/discover"}},
		{"other method", 10 * time.Millisecond, &jsonrpc.Request{ID: mustID(t, float64(1)), Method: "initialize"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := dialCapture(t, tt.probe)
			if err := c.Write(context.Background(), tt.msg); err != nil {
				t.Fatal(err)
			}
			if msg, err := readMsg(t, c, 100*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Read = %v, %v; want no synthetic answer", msg, err)
			}
		})
	}
}

// However the real answer races the timer, the client sees exactly one
// answer per probe.
func TestCaptureConnProbeRace(t *testing.T) {
	c, f := dialCapture(t, time.Millisecond)
	sentinel := &jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{}`)}
	for i := range 200 {
		id := mustID(t, float64(i))
		if err := c.Write(context.Background(), &jsonrpc.Request{ID: id, Method: "server/discover"}); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(i%5) * 500 * time.Microsecond
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(delay)
			select {
			case f.in <- &jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)}:
			case <-time.After(5 * time.Second):
				t.Error("answer not read")
			}
		}()
		msg, err := readMsg(t, c, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := msg.(*jsonrpc.Response); !ok || r.ID != id {
			t.Fatalf("iteration %d: Read = %#v, want an answer to %v", i, msg, id)
		}
		// Once the server has sent its answer, send a sentinel: if the
		// answer lost the race it must be dropped, so the next Read is the
		// sentinel, never a second answer to the probe.
		<-done
		serveDone := serve(t, f, sentinel)
		msg, err = readMsg(t, c, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		<-serveDone
		if msg != jsonrpc.Message(sentinel) {
			t.Fatalf("iteration %d: second Read = %#v, want the sentinel (a second answer to the probe?)", i, msg)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.probes) != 0 || len(c.dropped) != 0 {
		t.Errorf("probes %v dropped %v left over", c.probes, c.dropped)
	}
}

func TestCaptureConnCloseUnblocksRead(t *testing.T) {
	for _, pm := range []time.Duration{0, 50 * time.Millisecond} {
		t.Run(fmt.Sprint("probe=", pm), func(t *testing.T) {
			c, f := dialCapture(t, pm)
			errc := make(chan error, 1)
			go func() {
				_, err := c.Read(context.Background())
				errc <- err
			}()
			// Let Read (and the pump's inner Read) block.
			deadline := time.Now().Add(5 * time.Second)
			for f.reading.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-errc:
				if !errors.Is(err, mcp.ErrConnectionClosed) {
					t.Errorf("Read after Close = %v, want ErrConnectionClosed", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Close did not unblock Read")
			}
			// The inner Read has returned and the pump has exited: no more
			// inner Reads start.
			waitNoGoroutine(t, "(*captureConn).pump")
			for f.reading.Load() != 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if f.reading.Load() != 0 {
				t.Fatal("inner Read still blocked after Close")
			}
			n := f.reads.Load()
			time.Sleep(20 * time.Millisecond)
			if f.reads.Load() != n {
				t.Error("inner Read called after Close")
			}
			// Close is idempotent, and Read keeps failing.
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := readMsg(t, c, time.Second); err == nil {
				t.Error("Read after Close succeeded")
			}
		})
	}
}

// A probe timer that fires after Close neither blocks nor leaks.
func TestCaptureConnCloseWithPendingProbe(t *testing.T) {
	const probe = 20 * time.Millisecond
	c, _ := dialCapture(t, probe)
	for i := range 3 { // more probes than injected's buffer
		if err := c.Write(context.Background(), &jsonrpc.Request{ID: mustID(t, float64(i)), Method: "server/discover"}); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	time.Sleep(5 * probe)
	waitNoGoroutine(t, "(*captureConn).armProbe")
	waitNoGoroutine(t, "(*captureConn).pump")
}

// An inner read error reaches the caller and ends the pump.
func TestCaptureConnReadError(t *testing.T) {
	for _, pm := range probeModes {
		t.Run(pm.name, func(t *testing.T) {
			c, f := dialCapture(t, pm.probe)
			f.errs <- io.EOF
			if _, err := readMsg(t, c, 5*time.Second); !errors.Is(err, io.EOF) {
				t.Fatalf("Read = %v, want EOF", err)
			}
			if pm.probe > 0 {
				waitNoGoroutine(t, "(*captureConn).pump")
			}
		})
	}
}

func TestCaptureConnReadContext(t *testing.T) {
	for _, pm := range probeModes {
		t.Run(pm.name, func(t *testing.T) {
			c, _ := dialCapture(t, pm.probe)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := c.Read(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("Read = %v, want context.Canceled", err)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// captureRoundTripper
// ---------------------------------------------------------------------------

// rtServer serves canned responses and records what it received.
type rtServer struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
	methods []string
}

func newRTServer(t *testing.T, h http.HandlerFunc) *rtServer {
	t.Helper()
	s := &rtServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		s.methods = append(s.methods, r.Method)
		s.mu.Unlock()
		h(w, r)
	}))
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Fatalf("test server on %s, want 127.0.0.1", s.URL)
	}
	t.Cleanup(s.Close)
	return s
}

func baseTransport(t *testing.T) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

func serveJSON(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

func serveSSE(stream string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		// Deliver in pieces, flushed, to exercise partial reads.
		for len(stream) > 0 {
			n := min(len(stream), 7)
			io.WriteString(w, stream[:n])
			w.(http.Flusher).Flush()
			stream = stream[n:]
		}
	}
}

func postReq(t *testing.T, ctx context.Context, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

func TestCaptureRoundTripperHeaders(t *testing.T) {
	srv := newRTServer(t, serveJSON(`{}`))
	rt := &captureRoundTripper{
		next:    baseTransport(t),
		headers: http.Header{"Authorization": {"Bearer s3cret"}, "X-Multi": {"a", "b"}},
		maxBody: 1 << 20,
	}
	client := &http.Client{Transport: rt}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		req, err := http.NewRequest(method, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Multi", "replaced")
		req.Header.Set("Mcp-Session-Id", "sess")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// The caller's request is not mutated.
		if req.Header.Get("Authorization") != "" || req.Header.Get("X-Multi") != "replaced" {
			t.Errorf("%s: caller's request mutated: %v", method, req.Header)
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for i, h := range srv.headers {
		if h.Get("Authorization") != "Bearer s3cret" || !reflect.DeepEqual(h.Values("X-Multi"), []string{"a", "b"}) || h.Get("Mcp-Session-Id") != "sess" {
			t.Errorf("%s: server got headers %v", srv.methods[i], h)
		}
	}
}

func TestCaptureRoundTripperJSON(t *testing.T) {
	const max = 1000
	big := `{"jsonrpc":"2.0","id":5,"result":{"t":"` + strings.Repeat("z", 2000) + `"}}`
	exact := `{"jsonrpc":"2.0","id":5,"result":{"t":"` + strings.Repeat("z", max-len(`{"jsonrpc":"2.0","id":5,"result":{"t":""}}`)) + `"}}`
	tests := []struct {
		name       string
		ct         string
		body       string
		slot       bool
		want       string // "" means the body unchanged
		wantRaw    string
		wantTooBig bool
	}{
		{name: "result rewritten", ct: "application/json", body: resp, slot: true, want: respOut, wantRaw: respResult},
		{name: "media type with parameters", ct: "Application/JSON; charset=utf-8", body: resp, slot: true, want: respOut, wantRaw: respResult},
		{name: "no slot: unchanged", ct: "application/json", body: resp},
		{name: "error response unchanged", ct: "application/json", body: errResp, slot: true},
		{name: "empty JSON body", ct: "application/json", body: "", slot: true},
		{name: "body at the cap", ct: "application/json", body: exact, slot: true, want: respOut, wantRaw: exact[len(`{"jsonrpc":"2.0","id":5,"result":`) : len(exact)-1]},
		{name: "body over the cap", ct: "application/json", body: big, slot: true, wantTooBig: true},
		{name: "body over the cap without slot", ct: "application/json", body: big, wantTooBig: true},
		{name: "other media type untouched and unbounded", ct: "text/plain", body: big, slot: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRTServer(t, func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", tt.ct)
				io.WriteString(w, tt.body)
			})
			rt := &captureRoundTripper{next: baseTransport(t), maxBody: max, server: "weather"}
			ctx := context.Background()
			s, _ := newTestSlot("tok")
			if tt.slot {
				ctx = context.WithValue(ctx, slotKey{}, s)
			}
			resp, err := rt.RoundTrip(postReq(t, ctx, srv.URL))
			if tt.wantTooBig {
				if resp != nil || !errors.Is(err, ErrResponseTooLarge) {
					t.Fatalf("RoundTrip = %v, %v; want ErrResponseTooLarge", resp, err)
				}
				if !strings.Contains(err.Error(), `"weather"`) {
					t.Errorf("error %q does not name the server", err)
				}
				// go-sdk reports only that the request failed: the call's
				// slot keeps the cause.
				if f := s.getFault(); tt.slot && f != err {
					t.Errorf("slot fault %v, want the returned error", f)
				}
				if s.get() != nil {
					t.Error("captured from an oversized body")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == "" {
				want = tt.body
			}
			if string(body) != want {
				t.Errorf("body:\n got %s\nwant %s", body, want)
			}
			if resp.ContentLength != int64(len(body)) {
				t.Errorf("ContentLength %d, body %d bytes", resp.ContentLength, len(body))
			}
			if cl := resp.Header.Get("Content-Length"); cl != "" && cl != fmt.Sprint(len(body)) {
				t.Errorf("Content-Length header %s, body %d bytes", cl, len(body))
			}
			if string(s.get()) != tt.wantRaw {
				t.Errorf("slot raw %q, want %q", s.get(), tt.wantRaw)
			}
			if f := s.getFault(); f != nil {
				t.Errorf("slot fault %v", f)
			}
		})
	}
}

func TestCaptureRoundTripperSSE(t *testing.T) {
	stream := "id: 0\n\n" +
		"id: 1\ndata: " + progTok1 + "\n\n" +
		"id: 2\ndata: " + progOther + "\n\n" +
		"id: 3\ndata: " + resp + "\n\n"
	want := "id: 0\n\nid: 1\n\nid: 2\ndata: " + progOther + "\n\nid: 3\ndata: " + respOut + "\n\n"
	t.Run("slot", func(t *testing.T) {
		srv := newRTServer(t, serveSSE(stream))
		rt := &captureRoundTripper{next: baseTransport(t), maxBody: 4096}
		log := &progressLog{}
		ctx, s := withSlot(context.Background(), "tok", log.add)
		resp, err := rt.RoundTrip(postReq(t, ctx, srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		rw, ok := resp.Body.(*sseRewriter)
		if !ok {
			t.Fatalf("body is %T, want *sseRewriter", resp.Body)
		}
		if rw.max != 4096 || rw.slot != s {
			t.Errorf("rewriter max %d slot %p, want 4096 and the request's slot", rw.max, rw.slot)
		}
		out, err := readAllOneByte(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != want {
			t.Errorf("stream:\n got %q\nwant %q", out, want)
		}
		if string(s.get()) != respResult {
			t.Errorf("raw %q", s.get())
		}
		if got := log.list(); !reflect.DeepEqual(got, []Progress{wantP1}) {
			t.Errorf("progress %+v", got)
		}
		sdkMessages(t, out)
	})
	t.Run("no slot", func(t *testing.T) {
		srv := newRTServer(t, serveSSE(stream))
		rt := &captureRoundTripper{next: baseTransport(t), maxBody: 16}
		resp, err := rt.RoundTrip(postReq(t, context.Background(), srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, ok := resp.Body.(*sseRewriter); ok {
			t.Fatal("body wrapped without a slot")
		}
		if out, err := io.ReadAll(resp.Body); err != nil || string(out) != stream {
			t.Errorf("stream %q, %v", out, err)
		}
	})
	t.Run("event over the cap", func(t *testing.T) {
		srv := newRTServer(t, serveSSE("data: "+logNote+"\n\ndata: "+resp+"\n\n"))
		rt := &captureRoundTripper{next: baseTransport(t), maxBody: int64(len("data: " + logNote + "\n\n")), server: "s"}
		ctx, s := withSlot(context.Background(), "tok", nil)
		resp, err := rt.RoundTrip(postReq(t, ctx, srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if !errors.Is(err, ErrResponseTooLarge) {
			t.Fatalf("read err %v, want ErrResponseTooLarge", err)
		}
		if string(out) != "data: "+logNote+"\n\n" || s.get() != nil {
			t.Errorf("out %q raw %q", out, s.get())
		}
		// go-sdk would report a bare "request terminated": the call's slot
		// keeps the cause.
		if f := s.getFault(); f != err {
			t.Errorf("slot fault %v, want the read error %v", f, err)
		}
	})
}

func TestCaptureRoundTripperNonPOSTUntouched(t *testing.T) {
	for _, tc := range []struct {
		method string
		h      http.HandlerFunc
		body   string
	}{
		{http.MethodGet, serveSSE("data: " + resp + "\n\n"), "data: " + resp + "\n\n"},
		{http.MethodGet, serveJSON(resp), resp},
		{http.MethodDelete, serveJSON(resp), resp},
	} {
		srv := newRTServer(t, tc.h)
		rt := &captureRoundTripper{next: baseTransport(t), maxBody: 16}
		ctx, s := withSlot(context.Background(), "tok", nil)
		req, err := http.NewRequestWithContext(ctx, tc.method, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.method, err)
		}
		if _, ok := resp.Body.(*sseRewriter); ok {
			t.Errorf("%s: body wrapped", tc.method)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(body) != tc.body {
			t.Errorf("%s: body %q, %v", tc.method, body, err)
		}
		if s.get() != nil || s.getFault() != nil {
			t.Errorf("%s: captured %s, fault %v", tc.method, s.get(), s.getFault())
		}
	}
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestCaptureRoundTripperNextError(t *testing.T) {
	boom := errors.New("dial refused")
	rt := &captureRoundTripper{next: rtFunc(func(*http.Request) (*http.Response, error) { return nil, boom }), maxBody: 16, headers: http.Header{"A": {"b"}}}
	ctx, _ := withSlot(context.Background(), "tok", nil)
	if resp, err := rt.RoundTrip(postReq(t, ctx, "http://127.0.0.1:1/")); resp != nil || !errors.Is(err, boom) {
		t.Fatalf("RoundTrip = %v, %v", resp, err)
	}
}

// End to end: go-sdk's own Streamable HTTP client, over the capture round
// tripper, against a go-sdk server whose tools/call answers are replaced by
// canned ones. The rewritten stream must be one go-sdk accepts, and the
// unknown content block type must not fail the call.
func TestCaptureRoundTripperWithSDKClient(t *testing.T) {
	for _, mode := range []string{"sse", "json"} {
		t.Run(mode, func(t *testing.T) {
			server := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
			sdkHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
			srv := newRTServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					body, _ := io.ReadAll(r.Body)
					var m struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
					}
					if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" {
						res := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + respResult + `}`
						if mode == "json" {
							serveJSON(res)(w, r)
							return
						}
						serveSSE("id: 0\n\n"+
							"event: message\nid: 1\ndata: "+progTok1+"\n\n"+
							"id: 2\ndata: "+logNote+"\n\n"+
							"id: 3\ndata: "+progTok2+"\r\n\r\n"+
							"id: 4\ndata: "+res+"\n\n")(w, r)
						return
					}
					r.Body = io.NopCloser(bytes.NewReader(body))
				}
				sdkHandler.ServeHTTP(w, r)
			})
			client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
			rt := &captureRoundTripper{next: baseTransport(t), maxBody: 1 << 20, server: "fake"}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()

			log := &progressLog{}
			callCtx, s := withSlot(ctx, "tok", log.add)
			params := &mcp.CallToolParams{Name: "anything", Arguments: map[string]any{}}
			params.SetProgressToken("tok")
			res, err := cs.CallTool(callCtx, params)
			if err != nil {
				t.Fatalf("CallTool through the capture: %v", err)
			}
			if len(res.Content) != 0 {
				t.Errorf("SDK saw content %v, want the stand-in", res.Content)
			}
			if string(s.get()) != respResult {
				t.Errorf("raw %q, want %q", s.get(), respResult)
			}
			var want []Progress
			if mode == "sse" {
				want = []Progress{wantP1, wantP2}
			}
			if got := log.list(); !reflect.DeepEqual(got, want) {
				t.Errorf("progress when CallTool returned: %+v, want %+v", got, want)
			}

			// Without the capture, go-sdk itself would have to decode the
			// unknown content type.
			if _, err := cs.CallTool(ctx, params); err != nil {
				t.Logf("without a slot go-sdk fails as expected: %v", err)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Fuzz targets
// ---------------------------------------------------------------------------

var sseSeeds = []string{
	"",
	"id: 0\n\n",
	"data: " + resp + "\n\n",
	"data:" + resp,
	"id: 1\r\ndata: " + progTok1 + "\r\n\r\ndata: " + resp + "\r\n\r\n",
	"event: message\nid: 1\ndata: " + progTok1 + "\n\nid: 2\ndata: " + progOther + "\n\ndata: " + srvReq + "\n\ndata: " + resp + "\n\ndata: " + logNote + "\n\n",
	"event: endpoint\ndata: " + resp + "\n\n",
	"data: {\"jsonrpc\":\"2.0\",\"id\":5,\ndata: \"result\":{\"a\":1}}\n\n",
	"data: " + errResp + "\n\ndata: " + resp + "\n\n",
	"data: " + inputReq + "\n\n",
	": comment\nretry: 10\n\n\n\ndata: " + logNote + "\n\n",
	"data\n\n",
	"data: {\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}\n\n",
	"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"tok\",\"progress\":1,\"message\":\"error\"}}\n\n",
	"\r\r\n\rdata: x\r",
}

// FuzzSSERewriter: never panics or hangs; however the source is chunked,
// the output, capture and progress are the same; a stream with no response
// or progress event passes byte for byte; a stream where nothing was
// captured or delivered parses (as go-sdk does) to the same events.
func FuzzSSERewriter(f *testing.F) {
	for _, s := range sseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<18 {
			return
		}
		type result struct {
			out  []byte
			err  error
			raw  json.RawMessage
			prog []Progress
		}
		run := func(src io.Reader, max int64) result {
			done := make(chan result, 1)
			go func() {
				s, log := newTestSlot("tok")
				out, err := io.ReadAll(newRewriter(src, s, max))
				done <- result{out, err, s.get(), log.list()}
			}()
			select {
			case r := <-done:
				return r
			case <-time.After(20 * time.Second):
				t.Fatalf("sseRewriter hung on %q", data)
				panic("unreachable")
			}
		}
		whole := run(bytes.NewReader(data), 1<<20)
		if whole.err != nil {
			t.Fatalf("error under the cap: %v", whole.err)
		}
		slow := run(iotest.OneByteReader(bytes.NewReader(data)), 1<<20)
		if !bytes.Equal(slow.out, whole.out) || !bytes.Equal(slow.raw, whole.raw) || !reflect.DeepEqual(slow.prog, whole.prog) || slow.err != nil {
			t.Fatalf("chunking changed the result:\nwhole %q %q %v\nslow  %q %q %v %v", whole.out, whole.raw, whole.prog, slow.out, slow.raw, slow.prog, slow.err)
		}

		mentions := bytes.Contains(data, []byte(`"result"`)) || bytes.Contains(data, []byte(`"error"`)) || bytes.Contains(data, []byte("notifications/progress"))
		if !mentions && !bytes.Equal(whole.out, data) {
			t.Fatalf("stream without response or progress changed:\n in %q\nout %q", data, whole.out)
		}
		if whole.raw == nil && len(whole.prog) == 0 {
			inEv, inErr := parseSSE(data)
			outEv, outErr := parseSSE(whole.out)
			if (inErr == nil) != (outErr == nil) || !reflect.DeepEqual(inEv, outEv) {
				t.Fatalf("nothing captured, yet events changed:\n in %q\nout %q\n%v %v\n%v %v", data, whole.out, inEv, inErr, outEv, outErr)
			}
		}
		if whole.raw != nil {
			if !json.Valid(whole.raw) || !bytes.Contains(data, whole.raw) {
				t.Fatalf("captured %q: not a valid JSON value taken from the input", whole.raw)
			}
			if !bytes.Contains(whole.out, []byte(`"result":{"content":[]}`)) {
				t.Fatalf("captured but no stand-in in the output %q", whole.out)
			}
		}
		if n := bytes.Count(data, []byte("notifications/progress")); len(whole.prog) > n {
			t.Fatalf("%d progress reports from %d notifications", len(whole.prog), n)
		}

		// A small cap: only ever ErrResponseTooLarge, never a panic.
		small := run(bytes.NewReader(data), 64)
		if small.err != nil && !errors.Is(small.err, ErrResponseTooLarge) {
			t.Fatalf("small cap: err %v", small.err)
		}
	})
}

// member returns the value of the last top-level member whose name
// matches name as encoding/json matches struct fields (case-insensitively).
func member(data []byte, name string) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var val json.RawMessage
	found := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if key == name {
			val, found = v, true
		}
	}
	return val, found
}

func decodeNumber(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}

var responseSeeds = []string{
	resp, errResp, inputReq, progTok1, srvReq,
	`{"jsonrpc":"2.0","id":"a<b","result":{"content":[]}}`,
	`{"jsonrpc":"2.0","id":18446744073709551617,"result":{"a":[1,2,{"b":null}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":null}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1},"Result":{"b":2}}`,
	`{"jsonrpc":"2.0","id":1,"method":"","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"},"result":{"a":1}}`,
	`[]`, `null`, ``, `{"id":1,"result":"x"}`,
}

// FuzzRewriteResponse: never panics; a rewritten output carries the
// stand-in under the same id and the slot holds exactly the input's result;
// a second rewrite into the same slot never changes anything.
func FuzzRewriteResponse(f *testing.F) {
	for _, s := range responseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		s, _ := newTestSlot("tok")
		out := rewriteResponse(data, s)
		if !bytes.Equal(data, in) {
			t.Fatal("rewriteResponse modified its input")
		}
		raw := s.get()
		changed := !bytes.Equal(out, data)
		if changed && raw == nil {
			t.Fatalf("output changed but nothing captured:\n in %q\nout %q", data, out)
		}
		if raw != nil {
			orig, ok := member(data, "result")
			if !ok {
				t.Fatalf("captured %q from input without a result member: %q", raw, data)
			}
			if compactJSON(t, raw) != compactJSON(t, orig) {
				t.Fatalf("captured %q, the input's result is %q", raw, orig)
			}
			if !changed && string(raw) != string(standIn) {
				t.Fatalf("captured %q but output unchanged", raw)
			}
			if inputRequired(raw) {
				t.Fatalf("captured an input_required result %q", raw)
			}
		}
		if changed {
			if !json.Valid(out) {
				t.Fatalf("invalid output %q", out)
			}
			res, _ := member(out, "result")
			if string(res) != string(standIn) {
				t.Fatalf("output result %q, want the stand-in", res)
			}
			inID, _ := member(data, "id")
			outID, ok := member(out, "id")
			if !ok || !reflect.DeepEqual(decodeNumber(t, inID), decodeNumber(t, outID)) {
				t.Fatalf("id changed: %q -> %q", inID, outID)
			}
			if e, ok := member(data, "error"); ok {
				oe, _ := member(out, "error")
				if !reflect.DeepEqual(decodeNumber(t, e), decodeNumber(t, oe)) {
					t.Fatalf("error member changed: %q -> %q", e, oe)
				}
			}
		}
		// The slot is now full (or the input was not capturable): a second
		// rewrite leaves the input as it is.
		if again := rewriteResponse(data, s); !bytes.Equal(again, data) {
			t.Fatalf("second rewrite changed %q to %q", data, again)
		}
		if !bytes.Equal(s.get(), raw) {
			t.Fatalf("second rewrite overwrote the capture")
		}
	})
}

// TestCaptureConnModernOnly: a connection pinned to the modern era never
// sends initialize; the refusal carries the server's answer to discover,
// when it refused one.
func TestCaptureConnModernOnly(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  *jsonrpc.Error // the server's answer to discover; nil: a result
		wantMsg string
	}{
		{"discover refused", &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found"}, "Method not found"},
		{"discover answered", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeConn()
			conn, err := captureTransport{Transport: fakeTransport{f}, modernOnly: true}.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			c := conn.(*captureConn)
			t.Cleanup(func() { c.Close() })
			id := mustID(t, float64(1))
			if err := c.Write(context.Background(), &jsonrpc.Request{ID: id, Method: "server/discover"}); err != nil {
				t.Fatal(err)
			}
			resp := &jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)}
			if tc.answer != nil {
				resp = &jsonrpc.Response{ID: id, Error: tc.answer}
			}
			done := serve(t, f, resp)
			if _, err := readMsg(t, c, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			<-done
			err = c.Write(context.Background(), &jsonrpc.Request{ID: mustID(t, float64(2)), Method: "initialize", Params: json.RawMessage(`{}`)})
			if !errors.Is(err, errModernOnly) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("initialize written: %v, want the modern-only refusal naming %q", err, tc.wantMsg)
			}
			var we *jsonrpc.Error
			if got := errors.As(err, &we); got != (tc.answer != nil) {
				t.Errorf("refusal wraps the server's error: %v, want %v", got, tc.answer != nil)
			}
			for len(f.written) > 0 {
				if m := <-f.written; m.(*jsonrpc.Request).Method == "initialize" {
					t.Errorf("initialize reached the server")
				}
			}
			// Other messages still go through.
			if err := c.Write(context.Background(), &jsonrpc.Request{ID: mustID(t, float64(3)), Method: "ping"}); err != nil {
				t.Errorf("ping: %v", err)
			}
		})
	}
}
