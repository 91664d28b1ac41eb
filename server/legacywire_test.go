package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// legacyPost sends one raw JSON-RPC message on a legacy session (sid ""
// for initialize) and returns the response, body unread.
func legacyPost(t *testing.T, url, sid string, msg map[string]any) *http.Response {
	t.Helper()
	msg["jsonrpc"] = "2.0"
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads the server-sent events of a response, one data payload
// each, as they come.
func events(r io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				ch <- d
			}
		}
	}()
	return ch
}

// TestLegacyHTTPWire checks the content types of a legacy session's
// answers on the raw wire: application/json for a call, an event stream
// when the call asks for progress (progress first) or when the server asks
// the client for input in the call's course (the request first, on the
// call's own stream, answered by the client with a POST).
func TestLegacyHTTPWire(t *testing.T) {
	url := serveHTTP(t, testServer(nil))
	resp := legacyPost(t, url, "", map[string]any{"id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25",
		"clientInfo":      map[string]any{"name": "raw", "version": "1"},
		"capabilities":    map[string]any{"elicitation": map[string]any{}},
	}})
	sid := resp.Header.Get("Mcp-Session-Id")
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "application/json" || sid == "" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("initialize: %d %q session %q: %s", resp.StatusCode, ct, sid, b)
	}
	if resp := legacyPost(t, url, sid, map[string]any{"method": "notifications/initialized"}); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", resp.StatusCode)
	}

	tests := []struct {
		name   string
		params map[string]any
		ctype  string
		first  string // the first message, JSON-RPC method or "response"
		text   string // in the answer
	}{
		{"call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "plain"}}, "application/json", "response", "plain"},
		{"tool error", map[string]any{"name": "fail", "arguments": map[string]any{"kind": ""}}, "application/json", "response", "plain failure"},
		{"progress token", map[string]any{"name": "progress", "_meta": map[string]any{"progressToken": "p1"}}, "text/event-stream", "notifications/progress", "reported"},
		{"input from the client", map[string]any{"name": "ask"}, "text/event-stream", "elicitation/create", "hello Ada (state s1)"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := legacyPost(t, url, sid, map[string]any{"id": 10 + i, "method": "tools/call", "params": tt.params})
			if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != tt.ctype {
				t.Fatalf("status %d %q, want 200 %q", resp.StatusCode, ct, tt.ctype)
			}
			var msgs []jsonrpc.Message
			if tt.ctype == "application/json" {
				b, _ := io.ReadAll(resp.Body)
				msg, err := jsonrpc.DecodeMessage(b)
				if err != nil {
					t.Fatalf("body %q: %v", b, err)
				}
				msgs = append(msgs, msg)
			} else {
				for data := range events(resp.Body) {
					msg, err := jsonrpc.DecodeMessage([]byte(data))
					if err != nil {
						t.Fatalf("event %q: %v", data, err)
					}
					msgs = append(msgs, msg)
					if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "elicitation/create" {
						// Answer on the session, as a client does.
						legacyPost(t, url, sid, map[string]any{"id": req.ID.Raw(), "result": map[string]any{
							"action": "accept", "content": map[string]any{"name": "Ada"},
						}})
					}
					if _, ok := msg.(*jsonrpc.Response); ok {
						break
					}
				}
			}
			first := "response"
			if req, ok := msgs[0].(*jsonrpc.Request); ok {
				first = req.Method
			}
			if first != tt.first {
				t.Errorf("first message %s, want %s", first, tt.first)
			}
			last, ok := msgs[len(msgs)-1].(*jsonrpc.Response)
			if !ok || last.Error != nil || !strings.Contains(string(last.Result), tt.text) {
				t.Errorf("answer %+v, want a result with %q", msgs[len(msgs)-1], tt.text)
			}
		})
	}
}
