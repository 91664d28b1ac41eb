package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/netguard"
)

// TestClassify covers the one mapping from an upstream failure to a code,
// over the error values go-sdk, the launcher and the transports return.
func TestClassify(t *testing.T) {
	rejected := func(cause error) error {
		// As go-sdk's HTTP client wraps a failed POST.
		return fmt.Errorf("calling %q: %w: %w", "tools/call", &jsonrpc.Error{Code: codeRejected, Message: "rejected by transport"}, cause)
	}
	dialErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	resetErr := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	tooBig := fmt.Errorf("server %q: frame exceeds cap: %w", "s", launcher.ErrFrameTooLarge)
	own := fault.New(fault.CodeDefinitionChanged, "s", "call tool", nil)
	refused := &netguard.Error{Addr: "10.0.0.1", Reason: netguard.ReasonPrivate}
	tests := []struct {
		name string
		f    failure
		want fault.Code // "" means: returned as it is, no fault
	}{
		// JSON-RPC errors from the server.
		{"invalid params", failure{err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Unknown argument 'x'"}}, fault.CodeInvalidInput},
		{"unknown tool as invalid params", failure{call: true, err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `unknown tool "nope"`}}, fault.CodeNotFound},
		{"unknown tool in the TypeScript SDK's words", failure{call: true, err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Tool nope not found"}}, fault.CodeNotFound},
		{"resource not found", failure{err: &jsonrpc.Error{Code: codeResourceNotFound, Message: "no such resource"}}, fault.CodeNotFound},
		{"internal error", failure{call: true, err: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "boom"}}, fault.CodeServerError},
		{"method not found", failure{err: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "nope"}}, fault.CodeServerError},
		{"missing client capabilities", failure{call: true, err: &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "needs sampling"}}, fault.CodeServerError},
		{"rpc error after Close", failure{call: true, closed: true, err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}}, fault.CodeInvalidInput},

		// Time and cancellation.
		{"deadline", failure{call: true, err: context.DeadlineExceeded, ctxErr: context.DeadlineExceeded}, fault.CodeTimeout},
		{"deadline seen as EOF", failure{call: true, err: io.EOF, ctxErr: context.DeadlineExceeded}, fault.CodeTimeout},
		{"caller cancelled", failure{call: true, err: context.Canceled, ctxErr: context.Canceled}, ""},

		// The connection.
		{"call on a closed connection: never sent", failure{call: true, err: mcp.ErrConnectionClosed}, fault.CodeUnavailable},
		{"EOF mid-call: may have run", failure{call: true, err: io.EOF}, fault.CodeUnknownOutcome},
		{"unexpected EOF mid-call", failure{call: true, err: io.ErrUnexpectedEOF}, fault.CodeUnknownOutcome},
		{"session gone mid-call", failure{call: true, err: mcp.ErrSessionMissing}, fault.CodeUnknownOutcome},
		{"connection ended mid-call", failure{call: true, ended: true, err: errors.New("read: broken pipe")}, fault.CodeUnknownOutcome},
		{"oversized frame mid-call", failure{call: true, ended: true, cause: tooBig, err: io.EOF}, fault.CodeTooLarge},
		{"oversized frame in the error", failure{err: tooBig}, fault.CodeTooLarge},
		{"EOF on a read", failure{err: io.EOF}, fault.CodeUnavailable},
		{"closed connection on a read", failure{err: mcp.ErrConnectionClosed}, fault.CodeUnavailable},
		{"Close during a call", failure{call: true, closed: true, err: io.EOF}, fault.CodeUnavailable},
		{"program not found", failure{op: "connect", err: fmt.Errorf("start: %w", launcher.ErrProgramNotFound)}, fault.CodeUnavailable},
		{"runtime missing", failure{op: "connect", err: &launcher.StartError{Err: &launcher.RuntimeError{Runtime: "node", Err: launcher.ErrRuntimeMissing}}}, fault.CodeRuntimeMissing},
		{"runtime too old", failure{op: "connect", err: &launcher.StartError{Err: &launcher.RuntimeError{Runtime: "node", Err: launcher.ErrRuntimeTooOld}}}, fault.CodeRuntimeTooOld},

		// HTTP.
		{"HTTP 401", failure{call: true, status: 401, err: errors.New("Unauthorized")}, fault.CodeAuthFailure},
		{"HTTP 403", failure{call: true, status: 403, err: errors.New("Forbidden")}, fault.CodeAuthFailure},
		{"HTTP 404", failure{call: true, status: 404, err: mcp.ErrSessionMissing}, fault.CodeServerError},
		{"HTTP 413", failure{call: true, status: 413, err: errors.New("Request Entity Too Large")}, fault.CodeTooLarge},
		{"HTTP 429", failure{call: true, status: 429, err: rejected(errors.New("Too Many Requests"))}, fault.CodeRateLimited},
		{"HTTP 500", failure{call: true, status: 500, err: io.EOF}, fault.CodeServerError},
		{"HTTP 502", failure{call: true, status: 502, err: errors.New("Bad Gateway")}, fault.CodeTransient},
		{"HTTP 503", failure{call: true, status: 503, err: errors.New("Service Unavailable")}, fault.CodeTransient},
		{"HTTP 504", failure{call: true, status: 504, err: errors.New("Gateway Timeout")}, fault.CodeServerError},
		{"failed dial: never sent", failure{call: true, err: rejected(dialErr)}, fault.CodeUnavailable},
		{"reset mid-request: may have run", failure{call: true, err: rejected(resetErr)}, fault.CodeUnknownOutcome},
		{"response body over the cap", failure{call: true, err: fmt.Errorf("body: %w", ErrResponseTooLarge)}, fault.CodeTooLarge},
		{"list too long", failure{err: fmt.Errorf("more than 10 items: %w", errTooMany)}, fault.CodeTooLarge},
		{"address refused by policy", failure{op: "connect", err: fmt.Errorf("dial: %w", refused)}, fault.CodePolicyBlocked},

		// Malformed answers and Switchboard's own faults.
		{"malformed result", failure{call: true, err: &protocolError{errors.New("isError is not a boolean")}}, fault.CodeServerError},
		{"already a fault", failure{call: true, err: own}, fault.CodeDefinitionChanged},
		{"anything else", failure{err: errors.New("strange")}, fault.CodeServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.f.op == "" {
				tt.f.op = "op"
			}
			err := classify("s", tt.f)
			if err == nil {
				t.Fatal("classify returned nil")
			}
			if got := fault.CodeOf(err); got != tt.want {
				t.Fatalf("code %q, want %q (%v)", got, tt.want, err)
			}
			if tt.want == "" {
				if err != tt.f.err {
					t.Errorf("err = %v, want the original %v", err, tt.f.err)
				}
				return
			}
			var fe *fault.Error
			errors.As(err, &fe)
			if fe.Server != "s" {
				t.Errorf("server %q, want s", fe.Server)
			}
		})
	}
}

// TestUnknownTool: the answers that say a server does not know the tool
// called, as go-sdk, the TypeScript SDK and the Python SDK give them, and
// the look-alikes that say something else (a tool ran and failed).
func TestUnknownTool(t *testing.T) {
	result := func(text string) *ToolResult {
		return &ToolResult{IsError: true, Raw: json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":%q}],"isError":true}`, text))}
	}
	rpc := func(code int64, msg string) error {
		return fault.New(fault.CodeNotFound, "s", `call tool "x"`, &jsonrpc.Error{Code: code, Message: msg})
	}
	tests := []struct {
		name string
		res  *ToolResult
		err  error
		want bool
	}{
		{"go-sdk", nil, rpc(jsonrpc.CodeInvalidParams, `unknown tool "x"`), true},
		{"TypeScript SDK error", nil, rpc(jsonrpc.CodeInvalidParams, "Tool x not found"), true},
		{"tool not found", nil, rpc(jsonrpc.CodeInvalidParams, "tool not found: x"), true},
		{"TypeScript SDK result", result("MCP error -32602: Tool x not found"), nil, true},
		{"Python SDK result", result("Unknown tool: x"), nil, true},
		{"bad argument", nil, rpc(jsonrpc.CodeInvalidParams, "Unknown argument 'y'"), false},
		{"unknown prompt", nil, rpc(jsonrpc.CodeInvalidParams, `unknown prompt "x"`), false},
		{"another code", nil, rpc(jsonrpc.CodeInternalError, `unknown tool "x"`), false},
		{"no JSON-RPC error", nil, fault.New(fault.CodeNotFound, "s", "", errors.New(`unknown tool "x"`)), false},
		{"another tool's name", result("Unknown tool: y"), nil, false},
		{"more text", result("Unknown tool: x. Try z."), nil, false},
		{"not an error result", &ToolResult{Raw: json.RawMessage(`{"content":[{"type":"text","text":"Unknown tool: x"}]}`)}, nil, false},
		{"two blocks", &ToolResult{IsError: true, Raw: json.RawMessage(`{"content":[{"type":"text","text":"Unknown tool: x"},{"type":"text","text":"more"}],"isError":true}`)}, nil, false},
		{"nothing", nil, nil, false},
	}
	for _, tt := range tests {
		if got := UnknownTool("x", tt.res, tt.err); got != tt.want {
			t.Errorf("%s: UnknownTool = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestPermanent(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{fault.New(fault.CodeAuthFailure, "s", "connect", errors.New("HTTP 401")), true},
		{fault.New(fault.CodePolicyBlocked, "s", "connect", nil), true},
		{fault.New(fault.CodeUnavailable, "s", "connect", fmt.Errorf("start: %w", launcher.ErrProgramNotFound)), true},
		{fault.New(fault.CodeRuntimeMissing, "s", "connect", nil), true},
		{fault.New(fault.CodeRuntimeTooOld, "s", "connect", nil), true},
		{fault.New(fault.CodeUnavailable, "s", "connect", io.EOF), false},
		{fault.New(fault.CodeTimeout, "s", "connect", context.DeadlineExceeded), false},
		{fault.New(fault.CodeTransient, "s", "connect", nil), false},
	}
	for _, tt := range tests {
		if got := Permanent(tt.err); got != tt.want {
			t.Errorf("Permanent(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestRuntimeNamesAgree checks that config accepts exactly the runtimes the
// launcher can check.
func TestRuntimeNamesAgree(t *testing.T) {
	if diff := cmp.Diff(config.Runtimes, launcher.RuntimeNames()); diff != "" {
		t.Errorf("config.Runtimes and launcher.RuntimeNames differ (-config +launcher):\n%s", diff)
	}
}

// TestClassifyCleansServerText: the text of a classified failure, and the
// JSON-RPC error read out of it (which the gateway may pass on as it is),
// hold none of the escapes, controls and tag characters a server wrote;
// codes and error identities are kept.
func TestClassifyCleansServerText(t *testing.T) {
	msg := "need a login\x1b]52;c;ZXZpbA==\x07 \u009b31m\U000E0041\U000E0042 now"
	wrapped := fmt.Errorf("calling %q: %w", "tools/call", &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: msg})
	err := classify("s", failure{op: "call tool", call: true, err: wrapped})
	if fault.CodeOf(err) != fault.CodeServerError {
		t.Errorf("code %q, want server_error", fault.CodeOf(err))
	}
	want := `server "s": call tool: server_error: calling "tools/call": need a login]52;c;ZXZpbA== 31m now`
	if err.Error() != want {
		t.Errorf("text %+q, want %+q", err.Error(), want)
	}
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeURLElicitationRequired || rpc.Message != "need a login]52;c;ZXZpbA== 31m now" {
		t.Errorf("the JSON-RPC error read from it: %+v", rpc)
	}
	// Text that needs nothing is the server's error itself.
	plain := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Unknown argument 'x'"}
	if err := classify("s", failure{op: "call tool", err: plain}); !errors.Is(err, fault.InvalidInput) || errors.Unwrap(err) != plain {
		t.Errorf("plain: %#v", err)
	}
	// A failure already classified keeps its code with its cause cleaned.
	own := fault.New(fault.CodeAuthFailure, "s", "connect", errors.New("refused: \x1b[2Jcleared"))
	if err := classify("s", failure{op: "connect", err: own}); !errors.Is(err, fault.AuthFailure) || err.Error() != `server "s": connect: auth_failure: refused: [2Jcleared` {
		t.Errorf("classified: %+q", err)
	}
}
