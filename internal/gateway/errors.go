package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
)

// errCancelled answers a request the client cancelled.
var errCancelled = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client cancelled the call"}

// failed names a request that failed, for toClient.
type failed struct {
	kind   requestKind
	name   string // as the client named it: the tool's or prompt's name, the URI
	id     string // the canonical ID, for the log
	server string
}

type requestKind int

const (
	toolCall requestKind = iota
	promptGet
	resourceRead
	completion
)

// toClient is the gateway's one mapping from a failed request to what its
// client gets, keeping MCP's two error channels apart. It reads fault codes
// (host and upstream classified the failure); it never looks at the cause.
//
//   - The client cancelled (or, 2026-07-28, went away: then nothing is
//     sent): errCancelled, so that where go-sdk still answers, the answer
//     says what happened rather than code 0.
//   - An upstream's JSON-RPC error addressed to the client (a capability it
//     did not declare, a URL elicitation it must complete) passes as it is.
//   - not_found: -32002 for a resource URI, -32602 for a name (a tool, a
//     prompt, a completion's reference); invalid_input: -32602.
//   - A tool held for review (held_injection, definition_changed) is
//     refused saying so, never how to release it.
//   - Any other failure of a tool call is a result with isError: the text
//     names the code, and _meta[ErrorMetaKey] carries the code, the server
//     and whether a retry may help (and, for needs_login, the command
//     that logs in). Of any other request: -32603.
//   - A failure that quotes a server's own output (fault.Private: the
//     stderr of a server that failed to start) is sent as a neutral
//     message naming the server; the whole of it goes to the log, and the
//     host's status keeps it (`switchboard servers -v`).
func (g *Gateway) toClient(ctx context.Context, r failed, err error) (*mcp.CallToolResult, error) {
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil, errCancelled
	}
	if rpc := clientFacing(err); rpc != nil {
		return nil, rpc
	}
	code := fault.CodeOf(err)
	switch code {
	case fault.CodeNotFound:
		if r.kind == resourceRead {
			return nil, mcp.ResourceNotFoundError(r.name)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	case fault.CodeInvalidInput:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	case "":
		code = fault.CodeServerError
	}
	msg := err.Error()
	if code == fault.CodeLaunchChanged {
		// The same rule for a server held as a whole.
		msg = fmt.Sprintf("server %q is held for review until a person approves it", serverOf(r, err))
	} else if code == fault.CodeHeldInjection || code == fault.CodeDefinitionChanged {
		// Releasing a held tool is a person's decision (at a terminal, or
		// through the status page's login): the model, which a poisoned
		// description may be steering, is not told how.
		msg = fmt.Sprintf("server %q: tool %q is held for review until a person approves it", serverOf(r, err), r.name)
	}
	if fault.IsPrivate(err) {
		// The server's own output (its stderr) is the operator's: it is in
		// the log and in `switchboard servers -v`, never sent to a client.
		msg = fmt.Sprintf("server %q failed; the reason is in the gateway's log and in `switchboard servers -v`", serverOf(r, err))
	}
	if r.kind != toolCall {
		if fault.IsPrivate(err) {
			g.log.Warn("upstream request failed", "request", r.id, "code", code, "err", err)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
	}
	g.log.Warn("upstream call failed", "tool", r.id, "code", code, "err", err)
	meta := map[string]any{"code": string(code), "server": r.server, "retryable": code.Retryable()}
	switch {
	case code == fault.CodeNeedsLogin && errors.Is(err, host.ErrOwnLogin):
		// The caller logs in as itself (login.go offers it the URL).
		meta["login"], meta["server"] = "caller", serverOf(r, err)
	case code == fault.CodeNeedsLogin:
		// What a person runs where the gateway's configuration lives.
		meta["command"] = "switchboard login " + serverOf(r, err)
	}
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Switchboard could not complete %s (%s): %s", r.name, code, msg)}},
		Meta:    mcp.Meta{ErrorMetaKey: meta},
	}, nil
}

// serverOf names the server a failed request went to: the request's, or
// the failure's when the request did not say.
func serverOf(r failed, err error) string {
	var fe *fault.Error
	if r.server == "" && errors.As(err, &fe) {
		return fe.Server
	}
	return r.server
}

// protocolError maps the failure of a request that has no result-level
// error channel (resources, prompts, completions) through toClient.
func (g *Gateway) protocolError(ctx context.Context, r failed, err error) error {
	_, rpc := g.toClient(ctx, r, err)
	return rpc
}

// clientFacing returns an upstream's JSON-RPC error that is about the
// client's request rather than the upstream (a capability the client did
// not declare, a URL elicitation it must complete), to pass on as is.
func clientFacing(err error) *jsonrpc.Error {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) && (rpc.Code == mcp.CodeMissingRequiredClientCapabilities || rpc.Code == mcp.CodeURLElicitationRequired) {
		return rpc
	}
	return nil
}
