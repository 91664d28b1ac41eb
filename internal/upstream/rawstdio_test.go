package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// The raw stdio tools/call (rawstdio.go) must answer exactly as the go-sdk
// path does: each test starts the same real stdio server twice (the test
// binary re-executed), once with the raw path and once with NoRawCalls.

// rawStdioVar selects this file's child server; rawStdioMarkVar names the
// file its "wait" tool appends to when its call is cancelled.
const (
	rawStdioVar     = "SWITCHBOARD_RAWSTDIO_CHILD"
	rawStdioMarkVar = "SWITCHBOARD_RAWSTDIO_MARK"
)

// maybeRunStdioChild serves the testkit server plus a few tools on stdio
// when the environment asks for it.
func maybeRunStdioChild() {
	if os.Getenv(rawStdioVar) == "" {
		return
	}
	s := testkit.NewServer()
	mcp.AddTool(s, &mcp.Tool{Name: "wait", Description: "Waits for cancellation."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		if mark := os.Getenv(rawStdioMarkVar); mark != "" {
			if f, err := os.OpenFile(mark, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				f.WriteString("cancelled\n")
				f.Close()
			}
		}
		return nil, nil, ctx.Err()
	})
	s.AddTool(&mcp.Tool{Name: "badparams", InputSchema: &jsonschemaObject}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid argument \"x\""}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "elicit-direct", Description: "Asks the client directly (a server-to-client request)."}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: nil})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(res.Action, res.Content)}}}, nil, nil
	})
	if err := s.Run(context.Background(), wireElicit()); err != nil {
		fmt.Fprintln(os.Stderr, "rawstdio server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// wireElicit returns the server's transport: stdio, through a proxy that
// answers tools/call "elicit-wire" itself by sending the client a real
// elicitation/create request on the wire mid-call (what a legacy-era
// server does; go-sdk's server refuses to on 2026-07-28) and returning the
// client's answer as the tool's text.
func wireElicit() mcp.Transport {
	toServerR, toServerW := io.Pipe()
	fromServerR, fromServerW := io.Pipe()
	var outMu sync.Mutex
	write := func(b []byte) {
		outMu.Lock()
		defer outMu.Unlock()
		os.Stdout.Write(append(b, '\n'))
	}
	var pendingMu sync.Mutex
	pending := map[string]json.RawMessage{} // server request ID → the tools/call ID
	go func() {
		sc := bufio.NewScanner(fromServerR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			write(append([]byte(nil), sc.Bytes()...))
		}
	}()
	go func() {
		defer toServerW.Close()
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, 64<<20)
		n := 0
		for sc.Scan() {
			line := sc.Bytes()
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(line, &msg) == nil {
				if msg.Method == "tools/call" && msg.Params.Name == "log-wire" {
					// Three log messages, then the answer, in this order on
					// the wire.
					for i := 1; i <= 3; i++ {
						write([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"line %d"}}`, i)))
					}
					write([]byte(`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":{"content":[{"type":"text","text":"logged"}]}}`))
					continue
				}
				if msg.Method == "tools/call" && msg.Params.Name == "elicit-wire" {
					n++
					sid := fmt.Sprintf("\"srv-%d\"", n)
					pendingMu.Lock()
					pending[sid] = msg.ID
					pendingMu.Unlock()
					write([]byte(`{"jsonrpc":"2.0","id":` + sid + `,"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`))
					continue
				}
				if msg.Method == "" && msg.ID != nil {
					pendingMu.Lock()
					callID, ok := pending[string(msg.ID)]
					delete(pending, string(msg.ID))
					pendingMu.Unlock()
					if ok {
						answer := string(msg.Result) + string(msg.Error)
						text, _ := json.Marshal("client answered: " + answer)
						write([]byte(`{"jsonrpc":"2.0","id":` + string(callID) + `,"result":{"content":[{"type":"text","text":` + string(text) + `}]}}`))
						continue
					}
				}
			}
			toServerW.Write(append(append([]byte(nil), line...), '\n'))
		}
	}()
	return &mcp.IOTransport{Reader: toServerR, Writer: nopWriteCloser{fromServerW}}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

var jsonschemaObject = json.RawMessage(`{"type":"object"}`)

func dialStdio(t *testing.T, env map[string]string, extra string, noRaw bool) *Conn {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	envJSON, _ := json.Marshal(env)
	return dialEntry(t, fmt.Sprintf(`"command":%q,"env":%s,"trust":"trusted"%s`, exe, envJSON, extra), noRaw)
}

func dialStdioBoth(t *testing.T, env map[string]string, extra string) (raw, sdk *Conn) {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	env[rawStdioVar] = "1"
	raw, sdk = dialStdio(t, env, extra, false), dialStdio(t, env, extra, true)
	if v := raw.Info().ProtocolVersion; v != rawVersion {
		t.Fatalf("protocol %s, want %s", v, rawVersion)
	}
	return raw, sdk
}

func TestRawStdioSameAsSDK(t *testing.T) {
	raw, sdk := dialStdioBoth(t, nil, "")
	big := strings.Repeat("0123456789 \\\"é\n\u2028<>&", 100<<10/20)
	bigArgs, _ := json.Marshal(map[string]string{"text": big})
	cases := []struct {
		name, tool, args string
		want             func(outcome) bool
	}{
		{"echo", "echo", `{"text":"hello"}`, func(o outcome) bool { return strings.Contains(o.Raw, `"hello"`) && !o.IsError }},
		{"echo 100KB", "echo", string(bigArgs), func(o outcome) bool { return len(o.Raw) > 100<<10 }},
		{"echo, spaced arguments", "echo", "{ \"text\" :\n \"x\" }", func(o outcome) bool { return strings.Contains(o.Raw, `"x"`) }},
		{"echo, mentions the raw ID prefix", "echo", `{"text":"\"sbraw-1\""}`, func(o outcome) bool { return strings.Contains(o.Raw, `sbraw-1`) }},
		{"no arguments", "grow", "", func(o outcome) bool { return strings.Contains(o.Raw, "grew") }},
		{"isError", "fail", `{}`, func(o outcome) bool { return o.IsError && strings.Contains(o.Raw, "on purpose") }},
		{"unknown tool", "nope", `{}`, func(o outcome) bool { return o.Code == fault.CodeNotFound }},
		{"arguments against the schema", "echo", `{"text":5}`, func(o outcome) bool { return o.IsError && strings.Contains(o.Raw, "validating") }},
		{"invalid params", "badparams", `{}`, func(o outcome) bool { return o.Code == fault.CodeInvalidInput }},
		{"big result", "big", `{"bytes":200000}`, func(o outcome) bool { return len(o.Raw) > 200000 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := same(t, raw, sdk, tc.tool, tc.args)
			if !tc.want(got) {
				t.Errorf("unexpected outcome %+v", got)
			}
		})
	}
	t.Run("not eligible", func(t *testing.T) {
		for _, args := range []string{`[1]`, `{"text":`, `"x"`} {
			r0 := rawCount(raw)
			got := call(t, raw, context.Background(), "echo", args, nil)
			want := call(t, sdk, context.Background(), "echo", args, nil)
			if got != want {
				t.Errorf("%s: raw %+v, go-sdk %+v", args, got, want)
			}
			if rawCount(raw) != r0 {
				t.Errorf("%s took the raw path", args)
			}
		}
	})
}

func TestRawStdioConcurrent(t *testing.T) {
	raw, _ := dialStdioBoth(t, nil, "")
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			text := fmt.Sprintf("call %d", i)
			args, _ := json.Marshal(map[string]string{"text": text})
			var err error
			var res *ToolResult
			if i%2 == 0 {
				res, err = raw.CallTool(context.Background(), "echo", args, nil)
			} else {
				// Interleaved with go-sdk's own requests on the same pipe.
				_, err = raw.ReadResource(context.Background(), "test://static")
			}
			if err != nil {
				t.Errorf("%d: %v", i, err)
				return
			}
			if res != nil && !strings.Contains(string(res.Raw), text) {
				t.Errorf("%d: %s", i, res.Raw)
			}
		})
	}
	wg.Wait()
}

func TestRawStdioProgress(t *testing.T) {
	raw, sdk := dialStdioBoth(t, nil, "")
	var lists [2][]Progress
	var outs [2]outcome
	for i, c := range []*Conn{raw, sdk} {
		var pl progressList
		outs[i] = call(t, c, context.Background(), "slow", `{"steps":6,"delay_ms":1}`, &CallOptions{Progress: pl.add})
		lists[i] = pl.get() // all of it by the time the call returned
	}
	if outs[0] != outs[1] || outs[0].Raw == "" {
		t.Errorf("raw %+v, go-sdk %+v", outs[0], outs[1])
	}
	if fmt.Sprint(lists[0]) != fmt.Sprint(lists[1]) || len(lists[0]) != 6 {
		t.Errorf("progress\nraw    %v\ngo-sdk %v", lists[0], lists[1])
	}
	for i, p := range lists[0] {
		if p.Progress != float64(i+1) {
			t.Errorf("progress out of order: %v", lists[0])
			break
		}
	}
	if rawCount(raw) == 0 {
		t.Error("the raw path was not taken")
	}
}

func TestRawStdioInput(t *testing.T) {
	raw, sdk := dialStdioBoth(t, nil, `,"elicitation":true,"sampling":true,"roots":true`)
	// ask, sample and roots: input-required results on this era;
	// elicit-direct: a server-to-client request on the connection during
	// the call, which go-sdk's client answers through the call's peer.
	for _, tool := range []string{"ask", "sample", "roots", "elicit-direct", "elicit-wire"} {
		var outs [2]outcome
		r0 := rawCount(raw)
		for i, c := range []*Conn{raw, sdk} {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			outs[i] = call(t, c, WithPeer(ctx, &logPeer{}), tool, `{}`, nil)
			cancel()
		}
		if outs[0] != outs[1] {
			t.Errorf("%s: raw %+v, go-sdk %+v", tool, outs[0], outs[1])
		}
		if rawCount(raw) == r0 {
			t.Errorf("%s: the raw path was not taken", tool)
		}
		t.Logf("%s: %+v", tool, outs[0])
	}
}

func TestRawStdioCancel(t *testing.T) {
	for i, noRaw := range []bool{false, true} {
		mark := filepath.Join(t.TempDir(), "mark")
		c := dialStdio(t, map[string]string{rawStdioVar: "1", rawStdioMarkVar: mark}, "", noRaw)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := c.CallTool(ctx, "wait", json.RawMessage(`{}`), nil)
			errc <- err
		}()
		time.Sleep(200 * time.Millisecond)
		cancel()
		err := <-errc
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%d: err = %v, want context.Canceled", i, err)
		}
		// The server's handler saw the cancellation (notifications/cancelled
		// for the right request ID).
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if b, _ := os.ReadFile(mark); strings.Contains(string(b), "cancelled") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if b, _ := os.ReadFile(mark); !strings.Contains(string(b), "cancelled") {
			t.Errorf("%d: the server never saw the cancellation", i)
		}
		// The connection is still good.
		if o := call(t, c, context.Background(), "echo", `{"text":"after"}`, nil); !strings.Contains(o.Raw, "after") {
			t.Errorf("%d: call after cancel: %+v", i, o)
		}
		if (rawCount(c) > 0) == noRaw {
			t.Errorf("%d: raw count %d", i, rawCount(c))
		}
	}
}

func TestRawStdioTimeout(t *testing.T) {
	raw, sdk := dialStdioBoth(t, nil, "")
	// Set after Discover, which a loaded machine can make slow.
	raw.server.CallTimeout, sdk.server.CallTimeout = 300*time.Millisecond, 300*time.Millisecond
	got := call(t, raw, context.Background(), "slow", `{"steps":1000,"delay_ms":20}`, nil)
	want := call(t, sdk, context.Background(), "slow", `{"steps":1000,"delay_ms":20}`, nil)
	if got.Code != fault.CodeTimeout || got != want {
		t.Errorf("raw %+v, go-sdk %+v; want the same timeout", got, want)
	}
	if rawCount(raw) == 0 {
		t.Error("the raw path was not taken")
	}
}

func TestRawStdioCrash(t *testing.T) {
	raw, sdk := dialStdioBoth(t, nil, "")
	var outs, after [2]outcome
	for i, c := range []*Conn{raw, sdk} {
		outs[i] = call(t, c, context.Background(), "crash", `{}`, nil)
		select {
		case <-c.Done():
		case <-time.After(20 * time.Second):
			t.Fatalf("%d: connection still alive after the crash", i)
		}
		after[i] = call(t, c, context.Background(), "echo", `{"text":"x"}`, nil)
	}
	t.Logf("crash: raw %+v, go-sdk %+v", outs[0], outs[1])
	if outs[0] != outs[1] || outs[0].Code != fault.CodeUnknownOutcome {
		t.Errorf("crash: raw %+v, go-sdk %+v; want unknown_outcome", outs[0], outs[1])
	}
	if after[0] != after[1] || after[0].Code != fault.CodeUnavailable {
		t.Errorf("after the crash: raw %+v, go-sdk %+v; want unavailable", after[0], after[1])
	}
	if rawCount(raw) != 1 {
		t.Errorf("%d raw exchanges, want 1", rawCount(raw))
	}
}

func TestRawStdioNotUsedOnLegacy(t *testing.T) {
	c := dialStdio(t, testkit.ChildEnv(testkit.ModeLegacyNovel), "", false)
	if o := call(t, c, context.Background(), "novel", `{}`, nil); !strings.Contains(o.Raw, "hologram") {
		t.Fatalf("call: %+v", o)
	}
	if c.Info().ProtocolVersion == rawVersion || rawCount(c) != 0 {
		t.Errorf("protocol %s, %d raw exchanges; want a legacy session on go-sdk", c.Info().ProtocolVersion, rawCount(c))
	}
}

// TestRawStdioLogsBeforeResult: log messages the server sends during a
// call reach the call's client before the call returns, on both paths
// (the raw path takes the response in the frame filter, ahead of go-sdk's
// reading of what came before it).
func TestRawStdioLogsBeforeResult(t *testing.T) {
	raw, sdk := dialStdioBoth(t, nil, "")
	for round := range 20 {
		for i, c := range []*Conn{raw, sdk} {
			p := &logPeer{}
			out := call(t, c, WithPeer(context.Background(), p), "log-wire", `{}`, nil)
			p.mu.Lock()
			logs := fmt.Sprint(p.logs)
			p.mu.Unlock()
			if want := "[upinfoline 1 upinfoline 2 upinfoline 3]"; logs != want || !strings.Contains(out.Raw, "logged") {
				t.Fatalf("round %d, %s: logs %s when the call returned %+v; want %s", round, []string{"raw", "go-sdk"}[i], logs, out, want)
			}
		}
	}
	if rawCount(raw) == 0 {
		t.Error("the raw path was not taken")
	}
}
