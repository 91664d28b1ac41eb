package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
)

// TestToClient covers the gateway's one mapping from a failure to what its
// client gets: an isError result or a JSON-RPC error with a real code.
func TestToClient(t *testing.T) {
	t.Parallel()
	g := &Gateway{log: slog.New(slog.DiscardHandler)}
	live := context.Background()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	upstreamAsks := fault.New(fault.CodeServerError, "s", "call tool", fmt.Errorf("calling: %w",
		&jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "needs sampling"}))
	tests := []struct {
		name    string
		ctx     context.Context
		kind    requestKind
		err     error
		isError fault.Code // the code of an isError result; "" when an RPC error is wanted
		rpc     int64
	}{
		{"tool: unavailable", live, toolCall, fault.New(fault.CodeUnavailable, "s", "", nil), fault.CodeUnavailable, 0},
		{"tool: unknown outcome", live, toolCall, fault.New(fault.CodeUnknownOutcome, "s", "", nil), fault.CodeUnknownOutcome, 0},
		{"tool: timeout", live, toolCall, fault.New(fault.CodeTimeout, "s", "", nil), fault.CodeTimeout, 0},
		{"tool: rate limited", live, toolCall, fault.New(fault.CodeRateLimited, "s", "", nil), fault.CodeRateLimited, 0},
		{"tool: needs login", live, toolCall, fault.New(fault.CodeNeedsLogin, "s", "", errors.New("needs login (run: switchboard login s)")), fault.CodeNeedsLogin, 0},
		{"tool: policy", live, toolCall, fault.New(fault.CodePolicyBlocked, "s", "", nil), fault.CodePolicyBlocked, 0},
		{"tool: no code", live, toolCall, errors.New("odd"), fault.CodeServerError, 0},
		{"tool: not found", live, toolCall, fault.New(fault.CodeNotFound, "s", "", nil), "", jsonrpc.CodeInvalidParams},
		{"tool: invalid input", live, toolCall, fault.New(fault.CodeInvalidInput, "s", "", nil), "", jsonrpc.CodeInvalidParams},
		{"tool: client cancelled", gone, toolCall, fmt.Errorf("call: %w", context.Canceled), "", jsonrpc.CodeInternalError},
		{"tool: the upstream asks the client", live, toolCall, upstreamAsks, "", mcp.CodeMissingRequiredClientCapabilities},
		{"resource: not found", live, resourceRead, fault.New(fault.CodeNotFound, "s", "", nil), "", mcp.CodeResourceNotFound},
		{"resource: unavailable", live, resourceRead, fault.New(fault.CodeUnavailable, "s", "", nil), "", jsonrpc.CodeInternalError},
		{"resource: client cancelled", gone, resourceRead, context.Canceled, "", jsonrpc.CodeInternalError},
		{"prompt: not found", live, promptGet, fault.New(fault.CodeNotFound, "s", "", nil), "", jsonrpc.CodeInvalidParams},
		{"prompt: invalid input", live, promptGet, fault.New(fault.CodeInvalidInput, "s", "", nil), "", jsonrpc.CodeInvalidParams},
		{"prompt: the upstream asks the client", live, promptGet, upstreamAsks, "", mcp.CodeMissingRequiredClientCapabilities},
		{"prompt: timeout", live, promptGet, fault.New(fault.CodeTimeout, "s", "", nil), "", jsonrpc.CodeInternalError},
		{"completion: unknown reference", live, completion, fault.New(fault.CodeNotFound, "", "complete", nil), "", jsonrpc.CodeInvalidParams},
		{"completion: server error", live, completion, fault.New(fault.CodeServerError, "s", "complete", nil), "", jsonrpc.CodeInternalError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := g.toClient(tt.ctx, failed{kind: tt.kind, name: "x", id: "s:x", server: "s"}, tt.err)
			if tt.isError != "" {
				if err != nil || res == nil || !res.IsError {
					t.Fatalf("got %v, %v; want an isError result", res, err)
				}
				m, _ := res.Meta[ErrorMetaKey].(map[string]any)
				if m["code"] != string(tt.isError) || m["server"] != "s" || m["retryable"] != tt.isError.Retryable() {
					t.Errorf("_meta %v, want code %s of server s", m, tt.isError)
				}
				if cmd, _ := m["command"].(string); (tt.isError == fault.CodeNeedsLogin) != (cmd == "switchboard login s") {
					t.Errorf("_meta command %q", cmd)
				}
				if text := res.Content[0].(*mcp.TextContent).Text; tt.isError == fault.CodeNeedsLogin && !strings.Contains(text, "run: switchboard login s") {
					t.Errorf("text %q names no command", text)
				}
				return
			}
			var rpc *jsonrpc.Error
			if res != nil || !errors.As(err, &rpc) || rpc.Code != tt.rpc {
				t.Fatalf("got %v, %v; want JSON-RPC error %d", res, err, tt.rpc)
			}
		})
	}
}

// TestToClientPrivate: what a failure quotes of a server's own output
// (fault.Private) reaches no client, whatever the request.
func TestToClientPrivate(t *testing.T) {
	t.Parallel()
	g := &Gateway{log: slog.New(slog.DiscardHandler)}
	err := fault.New(fault.CodeUnavailable, "s", "connect", &fault.Private{Err: errors.New("EOF\nstderr:\nsecret stack trace")})
	for _, kind := range []requestKind{toolCall, promptGet, resourceRead, completion} {
		res, rpcErr := g.toClient(context.Background(), failed{kind: kind, name: "x", id: "s:x", server: "s"}, err)
		var got string
		switch {
		case res != nil:
			got = res.Content[0].(*mcp.TextContent).Text
		case rpcErr != nil:
			got = rpcErr.Error()
		}
		if strings.Contains(got, "secret") || !strings.Contains(got, `server "s"`) {
			t.Errorf("kind %d: %q; want the server named, its output left out", kind, got)
		}
	}
}
