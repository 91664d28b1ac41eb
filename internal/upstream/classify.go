package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/sandbox"
	"github.com/switchboard-mcp/switchboard/internal/sanitize"
)

// This file is the one place where an upstream failure gets its fault code.
// host and the gateway read the codes; they never look into the errors.

// failure is what is known of a failed operation when it is classified.
type failure struct {
	op     string
	call   bool  // a tools/call, which the server may have acted on
	err    error // as go-sdk, the launcher or the transport returned it
	status int   // the HTTP refusal recorded for the operation; 0: none
	closed bool  // Switchboard closed the connection (Conn.Close)
	ended  bool  // the connection had ended, or the process broke the framing
	cause  error // why the connection ended, when the launcher knows (an oversized frame)
	ctxErr error // the operation's ctx.Err(): its deadline is Switchboard's timeout
}

// classify maps a failed operation on server's connection to a
// *fault.Error. A context.Canceled that is not a timeout is returned as it
// is: the caller gave up, which is nobody's fault. The rule for calls: a
// connection found gone before the request was written (go-sdk's
// ErrConnectionClosed) is unavailable, and the host redials once; a
// connection lost after the request may have been written is
// unknown_outcome, never retried, since the tool may have run. A read
// (lists, resources, prompts) has no effect to repeat: a lost connection is
// unavailable.
func classify(server string, f failure) error {
	op := f.op
	var fe *fault.Error
	if errors.As(f.err, &fe) {
		return clean(f.err)
	}
	err := clean(f.err)
	if sf := ssrfFault(server, op, err); sf != nil {
		return sf
	}
	var pe *protocolError
	if errors.As(err, &pe) {
		return fault.New(fault.CodeServerError, server, op, pe.err)
	}
	var rpc *jsonrpc.Error
	isRPC := errors.As(err, &rpc)
	cause := err
	if f.cause != nil {
		cause = clean(f.cause)
	}
	lost := f.ended || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)

	if f.call && !isRPC && !f.closed && f.ctxErr == nil && f.status == 0 {
		switch {
		case errors.Is(err, mcp.ErrConnectionClosed):
			// go-sdk refused to send: the connection was already gone.
			return fault.New(fault.CodeUnavailable, server, op, cause)
		case lost:
			if errors.Is(cause, launcher.ErrFrameTooLarge) {
				// The server answered, too much: it broke the protocol.
				return fault.New(fault.CodeTooLarge, server, op, cause)
			}
			// The request may have reached the server: never claim it did not.
			return fault.New(fault.CodeUnknownOutcome, server, op, cause)
		}
	}

	switch {
	case f.closed && !isRPC:
		return fault.New(fault.CodeUnavailable, server, op, errors.New("the connection was closed"))
	case errors.Is(err, launcher.ErrRuntimeMissing):
		return fault.New(fault.CodeRuntimeMissing, server, op, err)
	case errors.Is(err, launcher.ErrRuntimeTooOld):
		return fault.New(fault.CodeRuntimeTooOld, server, op, err)
	case errors.Is(err, launcher.ErrProgramNotFound):
		return fault.New(fault.CodeUnavailable, server, op, err)
	case errors.Is(err, launcher.ErrFrameTooLarge), errors.Is(err, ErrResponseTooLarge), errors.Is(err, errTooMany):
		return fault.New(fault.CodeTooLarge, server, op, err)
	case isRPC && rpc.Code == jsonrpc.CodeInvalidParams:
		if isNotFound(rpc.Message) {
			return fault.New(fault.CodeNotFound, server, op, err)
		}
		return fault.New(fault.CodeInvalidInput, server, op, err)
	case isRPC && rpc.Code == codeResourceNotFound:
		return fault.New(fault.CodeNotFound, server, op, err)
	}
	if f.status != 0 {
		// An HTTP refusal: go-sdk words it as text, whatever the status.
		return fault.New(statusFault(f.status), server, op, fmt.Errorf("HTTP %d: %w", f.status, err))
	}
	if isRPC && rpc.Code == codeRejected {
		// go-sdk's HTTP transport could not deliver the request. A
		// failed dial certainly never reached the server; anything else
		// (a reset mid-request) may have.
		var ne *net.OpError
		if errors.As(err, &ne) && ne.Op == "dial" {
			return fault.New(fault.CodeUnavailable, server, op, err)
		}
		return fault.New(fault.CodeUnknownOutcome, server, op, err)
	}
	switch {
	case isRPC:
		return fault.New(fault.CodeServerError, server, op, err)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(f.ctxErr, context.DeadlineExceeded):
		// Switchboard's timeout or a shorter one of the caller's: either
		// way the server did not answer in time.
		return fault.New(fault.CodeTimeout, server, op, err)
	case errors.Is(err, context.Canceled):
		return err // the caller gave up; not the server's fault
	case lost:
		return fault.New(fault.CodeUnavailable, server, op, cause)
	}
	return fault.New(fault.CodeServerError, server, op, err)
}

// cleaned is an upstream failure whose text a server may have written (a
// JSON-RPC error's message, an HTTP body go-sdk quotes), shown cleaned as
// metadata is: ESC and the other C0 and C1 controls, format characters
// (Unicode tags included) and variation selectors stripped, capped at
// sanitize.DescriptionMax. The error it wraps is kept for errors.Is and
// errors.As; a *jsonrpc.Error asked for through it comes cleaned too, since
// the gateway passes some of those to its client as they are.
type cleaned struct {
	err  error
	text string
}

// clean wraps err in a cleaned when its text needs it.
func clean(err error) error {
	if err == nil {
		return nil
	}
	text, changed := sanitize.Text(err.Error(), sanitize.DescriptionMax)
	if !changed {
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || !needsCleaning(rpc.Message) {
			return err
		}
	}
	return &cleaned{err: err, text: text}
}

func needsCleaning(s string) bool {
	_, changed := sanitize.Text(s, sanitize.DescriptionMax)
	return changed
}

func (e *cleaned) Error() string { return e.text }
func (e *cleaned) Unwrap() error { return e.err }

// As gives a cleaned copy of the wrapped *jsonrpc.Error.
func (e *cleaned) As(target any) bool {
	p, ok := target.(**jsonrpc.Error)
	if !ok {
		return false
	}
	var rpc *jsonrpc.Error
	if !errors.As(e.err, &rpc) {
		return false
	}
	c := *rpc
	c.Message, _ = sanitize.Text(rpc.Message, sanitize.DescriptionMax)
	*p = &c
	return true
}

// statusFault maps an HTTP refusal status to a code.
func statusFault(status int) fault.Code {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fault.CodeAuthFailure
	case http.StatusTooManyRequests:
		return fault.CodeRateLimited
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		// Refused before the server ran anything.
		return fault.CodeTransient
	case http.StatusRequestEntityTooLarge:
		return fault.CodeTooLarge
	}
	// 500 and 504 among them: the server may have started the work.
	return fault.CodeServerError
}

// classify classifies err, the failure of op on c (see the function
// classify); ctx is the operation's context.
func (c *Conn) classify(ctx context.Context, op string, call bool, err error) error {
	f := failure{op: op, call: call, err: err, status: recordedStatus(ctx), closed: c.life.Err() != nil, ctxErr: ctx.Err()}
	select {
	case <-c.done:
		f.ended = true
	default:
	}
	if c.proc != nil {
		if pf := c.proc.Fault(); pf != nil {
			f.ended, f.cause = true, pf
		}
	}
	return classify(c.server.Name, f)
}

// protocolError marks a server's answer that breaks the protocol (a
// malformed result), which classify reports as server_error.
type protocolError struct{ err error }

func (e *protocolError) Error() string { return e.err.Error() }
func (e *protocolError) Unwrap() error { return e.err }

// Permanent reports whether a failed dial would fail the same way again
// until the configuration changes: the server refused Switchboard's
// credentials or needs a login, a policy refused its address, its program
// does not exist, or a runtime it needs is missing or too old. The host stops retrying the
// start-up of such a server.
func Permanent(err error) bool {
	switch fault.CodeOf(err) {
	case fault.CodeAuthFailure, fault.CodePolicyBlocked, fault.CodeRuntimeMissing, fault.CodeRuntimeTooOld, fault.CodeNeedsLogin:
		return true
	}
	return cannotLaunch(err)
}

// cannotLaunch reports whether err is the launcher's refusal to start a
// program that is not there or whose runtime does not fit, or whose
// sandbox is required and cannot hold here or would open Switchboard's
// home: starting it again cannot help.
func cannotLaunch(err error) bool {
	return errors.Is(err, launcher.ErrProgramNotFound) || errors.Is(err, launcher.ErrRuntimeTooOld) ||
		errors.Is(err, sandbox.ErrRequired) || errors.Is(err, sandbox.ErrSwitchboardHome)
}

const (
	// codeRejected is go-sdk's "rejected by transport" (jsonrpc2.ErrRejected),
	// which wraps an HTTP transport failure.
	codeRejected = -32005
	// codeResourceNotFound is the 2025 spec's "resource not found".
	codeResourceNotFound = -32002
)

// isNotFound recognises the -32602 messages servers use for an unknown
// tool, prompt or resource ("unknown tool", "Resource not found", the
// TypeScript SDK's "Tool x not found", ...), as opposed to a bad argument
// ("Unknown argument 'x'").
func isNotFound(msg string) bool {
	for _, kind := range []string{"tool", "prompt", "resource"} {
		if isKindNotFound(msg, kind) {
			return true
		}
	}
	return false
}

// isKindNotFound reports whether msg says that a kind ("tool", "prompt",
// "resource") is unknown.
func isKindNotFound(msg, kind string) bool {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "unknown "+kind), strings.Contains(m, kind+" not found"),
		strings.Contains(m, kind+" \"") && strings.Contains(m, "not found"):
		return true
	}
	// The TypeScript SDK: "Tool x not found", "MCP error -32602: Tool x not found".
	m = strings.TrimPrefix(m, "mcp error -32602: ")
	return strings.HasPrefix(m, kind+" ") && strings.HasSuffix(m, " not found")
}

// UnknownTool reports whether a tools/call of tool came back saying that
// the server does not know the tool, so that it never ran: a JSON-RPC
// invalid-params error that says so (go-sdk's `unknown tool "x"`), or a
// result with isError whose only content is the text the TypeScript SDK
// ("MCP error -32602: Tool x not found") or the Python SDK ("Unknown tool:
// x") makes of that error. The host then discovers the server again and
// makes the call once more. res and err are what Conn.CallTool returned.
func UnknownTool(tool string, res *ToolResult, err error) bool {
	if err != nil {
		var rpc *jsonrpc.Error
		return errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeInvalidParams && isKindNotFound(rpc.Message, "tool")
	}
	if res == nil || !res.IsError {
		return false
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(res.Raw, &r) != nil || len(r.Content) != 1 || r.Content[0].Type != "text" {
		return false
	}
	switch r.Content[0].Text {
	case "MCP error -32602: Tool " + tool + " not found", "Unknown tool: " + tool:
		return true
	}
	return false
}
