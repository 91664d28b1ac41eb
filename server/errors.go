package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC error codes this package answers with, besides the standard
// ones in package jsonrpc. Unauthorized and forbidden lie outside the
// range JSON-RPC reserves for itself (-32768 to -32000) on purpose: they
// are not protocol failures, and a client must not mistake them for one.
const (
	CodeUnauthorized = -31001
	CodeForbidden    = -31003
)

// Kind classifies a protocol [Error]: it decides the JSON-RPC code, the
// HTTP-like status used in logs, and whether the failure is the client's
// (a refusal, status below 500) or the server's.
type Kind int

const (
	// KindInvalidParams: the request's parameters are wrong (-32602, 400).
	KindInvalidParams Kind = iota + 1
	// KindNotFound: the named tool, resource or prompt does not exist
	// (-32602, 404; not -32601, which would say the method is missing).
	KindNotFound
	// KindUnauthorized: the caller is not authenticated (-31001, 401).
	KindUnauthorized
	// KindForbidden: the caller may not do this (-31003, 403).
	KindForbidden
	// KindInternal: the server failed (-32603, 500).
	KindInternal
)

var kindInfo = map[Kind]struct {
	name   string
	code   int64
	status int
}{
	KindInvalidParams: {"invalid_params", jsonrpc.CodeInvalidParams, http.StatusBadRequest},
	KindNotFound:      {"not_found", jsonrpc.CodeInvalidParams, http.StatusNotFound},
	KindUnauthorized:  {"unauthorized", CodeUnauthorized, http.StatusUnauthorized},
	KindForbidden:     {"forbidden", CodeForbidden, http.StatusForbidden},
	KindInternal:      {"internal", jsonrpc.CodeInternalError, http.StatusInternalServerError},
}

// String returns the kind's name, as logged.
func (k Kind) String() string {
	if i, ok := kindInfo[k]; ok {
		return i.name
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Code returns the JSON-RPC error code of k (-32603 for an unknown kind).
func (k Kind) Code() int64 {
	if i, ok := kindInfo[k]; ok {
		return i.code
	}
	return jsonrpc.CodeInternalError
}

// Status returns the HTTP-like status of k, used in logs (500 for an
// unknown kind).
func (k Kind) Status() int {
	if i, ok := kindInfo[k]; ok {
		return i.status
	}
	return http.StatusInternalServerError
}

// Error is a protocol error: a handler that returns one (possibly wrapped)
// gets a JSON-RPC error response with the kind's code, instead of a tool
// result with isError. Use the constructors [InvalidParams], [NotFound],
// [Unauthorized], [Forbidden] and [Internal].
type Error struct {
	Kind    Kind
	Message string
	// Data, if not nil, is sent as the JSON-RPC error's data.
	Data any
	// Err is the underlying cause, if any; it is logged, never sent.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// InvalidParams returns an invalid-params error (-32602).
func InvalidParams(format string, args ...any) *Error {
	return &Error{Kind: KindInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns a not-found error (-32602) for an unknown tool,
// resource or prompt.
func NotFound(format string, args ...any) *Error {
	return &Error{Kind: KindNotFound, Message: fmt.Sprintf(format, args...)}
}

// Unauthorized returns an unauthorized error (-31001).
func Unauthorized(format string, args ...any) *Error {
	return &Error{Kind: KindUnauthorized, Message: fmt.Sprintf(format, args...)}
}

// Forbidden returns a forbidden error (-31003).
func Forbidden(format string, args ...any) *Error {
	return &Error{Kind: KindForbidden, Message: fmt.Sprintf(format, args...)}
}

// Internal returns an internal error (-32603) wrapping err. Only message
// is sent to the client.
func Internal(err error, format string, args ...any) *Error {
	return &Error{Kind: KindInternal, Message: fmt.Sprintf(format, args...), Err: err}
}

// InputRequired is returned (as an error) by a tool or prompt handler that
// needs input from the client before it can answer: the 2026-07-28
// multi-round-trip flow (SEP-2322). The client fulfils Requests and calls
// again with the responses, available from [InputResponses], and State,
// available from [RequestState]. For legacy clients go-sdk fulfils the
// requests itself over the session and calls the handler again, so one
// handler serves both eras.
//
// State travels through the client: a server that relies on it must sign
// or encrypt it.
type InputRequired struct {
	Requests mcp.InputRequestMap
	State    string
}

func (e *InputRequired) Error() string {
	return fmt.Sprintf("input required (%d requests)", len(e.Requests))
}

// NeedInput returns an [*InputRequired] error.
func NeedInput(requests mcp.InputRequestMap, state string) error {
	return &InputRequired{Requests: requests, State: state}
}

// ClientError is the failure of a request the server sent to the client
// (sampling/createMessage, elicitation/create, roots/list): the client
// answered with a JSON-RPC error, or the request could not reach it.
// Every such failure reaches the server's code as a *ClientError, whether
// a handler asked the client itself or go-sdk did for it (the
// multi-round-trip flow of a legacy session).
//
// A handler returning it, wrapped or not, fails as with any ordinary
// error: a tool execution error (isError) for tools/call, an internal
// error (-32603) elsewhere. The client's code never goes out as the
// server's own answer, where it would say something false (-32601 from the
// client would claim that tools/call does not exist). errors.As still
// finds the client's *jsonrpc.Error in Err.
type ClientError struct {
	// Method is the request sent to the client.
	Method string
	Err    error
}

func (e *ClientError) Error() string {
	return fmt.Sprintf("the client failed %s: %v", e.Method, e.Err)
}

func (e *ClientError) Unwrap() error { return e.Err }

// clientErrors is the server's sending middleware: it marks the failures
// of requests to the client as [*ClientError], so that the error mapping
// can tell the client's JSON-RPC errors from the server's own.
func clientErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var je *jsonrpc.Error
		if err != nil && !strings.HasPrefix(method, "notifications/") && errors.As(err, &je) {
			err = &ClientError{Method: method, Err: err}
		}
		return res, err
	}
}

// decisive returns the error of err's chain that decides how err is
// answered: the outermost [*Error], [*ClientError] or *jsonrpc.Error, in
// the order errors.As would find them, or nil when there is none. The
// outermost wins, so that Internal(clientErr, …) is internal, and a
// *jsonrpc.Error inside a *ClientError is the client's, not the server's.
func decisive(err error) error {
	switch err.(type) {
	case nil:
		return nil
	case *Error, *ClientError, *jsonrpc.Error:
		return err
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return decisive(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if d := decisive(e); d != nil {
				return d
			}
		}
	}
	return nil
}

// rpcError maps err to the JSON-RPC error sent to the client. It is the
// one place where errors become codes (see [decisive]): a *jsonrpc.Error
// of the server's passes as it is, an *Error gets its kind's code, anything
// else (a [*ClientError] included) is an internal error (never code 0).
func rpcError(err error) *jsonrpc.Error {
	switch d := decisive(err).(type) {
	case *jsonrpc.Error:
		return d
	case *Error:
		out := &jsonrpc.Error{Code: d.Kind.Code(), Message: d.Message}
		if d.Data != nil {
			if b, merr := marshalJSON(d.Data); merr == nil {
				out.Data = b
			}
		}
		return out
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// isProtocolError reports whether err must become a JSON-RPC error rather
// than a tool result with isError: whether its decisive error is an
// [*Error] or a server's *jsonrpc.Error.
func isProtocolError(err error) bool {
	switch decisive(err).(type) {
	case *Error, *jsonrpc.Error:
		return true
	}
	return false
}

// errorStatus returns the HTTP-like status and kind name of err, for logs.
func errorStatus(err error) (int, string) {
	switch d := decisive(err).(type) {
	case *Error:
		return d.Kind.Status(), d.Kind.String()
	case *ClientError:
		return http.StatusBadGateway, "client_error"
	case *jsonrpc.Error:
		switch d.Code {
		case jsonrpc.CodeInvalidParams:
			return http.StatusBadRequest, "invalid_params"
		case CodeUnauthorized:
			return http.StatusUnauthorized, "unauthorized"
		case CodeForbidden:
			return http.StatusForbidden, "forbidden"
		case jsonrpc.CodeMethodNotFound:
			return http.StatusNotFound, "method_not_found"
		case mcp.CodeMissingRequiredClientCapabilities, mcp.CodeURLElicitationRequired:
			return http.StatusBadRequest, "client_capability"
		}
		return http.StatusInternalServerError, fmt.Sprintf("jsonrpc_%d", d.Code)
	}
	return http.StatusInternalServerError, "tool_error"
}

// logError logs a handler's error: a tool's ordinary error (a tool
// execution error, which the model reads and may correct) at info with its
// chain; refusals (status below 500) at warn with status, type and
// message; everything else at error with the full chain.
func logError(ctx context.Context, logger *slog.Logger, what, name string, err error) {
	if what == "tool" && !isProtocolError(err) {
		logger.InfoContext(ctx, "mcp: tool returned an error", what, name, "type", "tool_error", "error", errorChain(err))
		return
	}
	status, typ := errorStatus(err)
	if status < 500 {
		logger.WarnContext(ctx, "mcp: "+what+" refused", what, name, "status", status, "type", typ, "message", err.Error())
		return
	}
	logger.ErrorContext(ctx, "mcp: "+what+" failed", what, name, "status", status, "type", typ, "error", errorChain(err))
}

// errorChain renders err and every error it wraps, with their types.
func errorChain(err error) string {
	s := ""
	for e := err; e != nil; e = errors.Unwrap(e) {
		if s != "" {
			s += " <- "
		}
		s += fmt.Sprintf("%T: %s", e, e.Error())
	}
	return s
}
