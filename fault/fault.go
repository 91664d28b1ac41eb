// Package fault defines the typed failures that Switchboard reports for
// transport and protocol problems with upstream MCP servers.
//
// Switchboard keeps two error channels apart (see go-sdk design/design.md,
// §Errors): a tool that ran and failed is a *result* with isError set and is
// never a Go error; a server that could not be reached, timed out, or broke
// the protocol is a Go error of type *Error carrying a stable Code. Callers
// test the kind with errors.Is against the sentinel values of this package
// (errors.Is(err, fault.Timeout)) or read the details with errors.As.
//
// The codes are stable strings: they appear in the CLI's --json output and,
// later, in the gateway's error data. This package imports nothing from
// Switchboard and must stay a leaf.
package fault

import (
	"errors"
	"fmt"
	"strings"
)

// Code is a stable, machine-readable failure reason.
type Code string

// The failure codes. Each is documented with what the caller may do about
// it; Retryable says whether an identical request may be sent again.
const (
	// CodeTimeout: the server did not answer within the configured deadline.
	// The operation may or may not have taken effect upstream.
	CodeTimeout Code = "timeout"
	// CodeUnavailable: the server is not connected (failed to start, crashed,
	// disabled, or its connection was lost before the request was sent).
	CodeUnavailable Code = "unavailable"
	// CodeTransient: the server (or a proxy in front of it) refused the
	// request for now without running it (HTTP 502, 503).
	CodeTransient Code = "transient"
	// CodeRateLimited: the server asked for fewer requests (HTTP 429), or a
	// Switchboard call quota is spent.
	CodeRateLimited Code = "rate_limited"
	// CodeServerError: the server failed or broke the MCP protocol (a
	// malformed message, a JSON-RPC error other than the ones below, HTTP
	// 500 or 504).
	CodeServerError Code = "server_error"
	// CodeAuthFailure: the server refused Switchboard's credentials (HTTP
	// 401, 403). Retrying with the same credentials cannot help.
	CodeAuthFailure Code = "auth_failure"
	// CodeNeedsLogin: the server asks for an OAuth login that Switchboard
	// holds no valid grant for; the message names the command to run
	// (`switchboard login NAME`). Nothing is retried until then.
	CodeNeedsLogin Code = "needs_login"
	// CodeNotFound: no tool, resource, prompt or server has that name.
	CodeNotFound Code = "not_found"
	// CodeInvalidInput: the server or Switchboard rejected the arguments.
	CodeInvalidInput Code = "invalid_input"
	// CodePolicyBlocked: Switchboard's policy refused the request (an
	// authorization rule, a withheld tool, a refused confirmation, a
	// capability the server's trust level does not allow). It was never
	// sent.
	CodePolicyBlocked Code = "policy_blocked"
	// CodeTooLarge: a message exceeded a configured size limit (a frame,
	// a response body, a list).
	CodeTooLarge Code = "too_large"
	// CodeUnknownOutcome: the connection was lost while the request was in
	// flight; the tool may or may not have run. Never retried automatically.
	CodeUnknownOutcome Code = "unknown_outcome"
	// CodeDefinitionChanged: the tool's definition changed since a person
	// approved it; it is held back until `switchboard approve`.
	CodeDefinitionChanged Code = "definition_changed"
	// CodeHeldInjection: the tool's metadata matches an injection pattern
	// and its server is not trusted; it is held back until `switchboard
	// approve` approves that definition.
	CodeHeldInjection Code = "held_injection"
	// CodeLaunchChanged: the server's launch (command, arguments,
	// environment, URL) differs from the one a person approved, or was
	// never approved; the server is held, not started, until `switchboard
	// approve SERVER`.
	CodeLaunchChanged Code = "launch_changed"
	// CodeRuntimeMissing: a runtime the server needs (node for npx, uv for
	// uvx, docker, ...) is not installed. The message says how to get it;
	// nothing is retried until the configuration or the machine changes.
	CodeRuntimeMissing Code = "runtime_missing"
	// CodeRuntimeTooOld: a runtime the server needs does not meet the
	// server's "runtime" requirement ({"node": ">=20"}), or its version
	// could not be read.
	CodeRuntimeTooOld Code = "runtime_too_old"
	// CodeApprovalRequired: the call is held for a person's approval
	// (policy.approve, or the data-flow rule under "approve"); it was not
	// sent. Once a person approves it, the same call (same tool and
	// arguments, same caller and flow) made again goes through, once.
	CodeApprovalRequired Code = "approval_required"
	// CodeApprovalDenied: a person denied this call; it was not sent.
	CodeApprovalDenied Code = "approval_denied"
	// CodeApprovalExpired: no person decided on the held call in time, or
	// an approval given was not used in time; it was not sent. Made
	// again, the call is held afresh.
	CodeApprovalExpired Code = "approval_expired"
	// CodeFlowBlocked: the data-flow rule refused the call: its flow has
	// read private data and taken in untrusted content, and the tool talks
	// to the outside. The message names the calls that caused it.
	CodeFlowBlocked Code = "flow_blocked"
)

// Codes lists every code, for documentation and tests.
var Codes = []Code{
	CodeTransient, CodeRateLimited, CodeInvalidInput, CodeAuthFailure, CodeServerError, CodeNotFound,
	CodePolicyBlocked, CodeUnknownOutcome, CodeTooLarge, CodeTimeout, CodeUnavailable, CodeDefinitionChanged,
	CodeHeldInjection, CodeRuntimeMissing, CodeRuntimeTooOld, CodeNeedsLogin, CodeLaunchChanged,
	CodeApprovalRequired, CodeApprovalDenied, CodeApprovalExpired, CodeFlowBlocked,
}

// Retryable reports whether an identical request may reasonably be sent
// again (after a pause): the server did not run it and may accept it
// later. Timeouts and unknown outcomes are not retryable: the operation may
// already have happened.
func (c Code) Retryable() bool {
	switch c {
	case CodeUnavailable, CodeTransient, CodeRateLimited, CodeApprovalRequired:
		return true
	}
	return false
}

// Sentinels for errors.Is. An *Error matches the sentinel of its Code.
var (
	Timeout           = &Error{Code: CodeTimeout}
	Unavailable       = &Error{Code: CodeUnavailable}
	Transient         = &Error{Code: CodeTransient}
	RateLimited       = &Error{Code: CodeRateLimited}
	ServerError       = &Error{Code: CodeServerError}
	AuthFailure       = &Error{Code: CodeAuthFailure}
	NotFound          = &Error{Code: CodeNotFound}
	InvalidInput      = &Error{Code: CodeInvalidInput}
	PolicyBlocked     = &Error{Code: CodePolicyBlocked}
	TooLarge          = &Error{Code: CodeTooLarge}
	UnknownOutcome    = &Error{Code: CodeUnknownOutcome}
	DefinitionChanged = &Error{Code: CodeDefinitionChanged}
	HeldInjection     = &Error{Code: CodeHeldInjection}
	LaunchChanged     = &Error{Code: CodeLaunchChanged}
	RuntimeMissing    = &Error{Code: CodeRuntimeMissing}
	RuntimeTooOld     = &Error{Code: CodeRuntimeTooOld}
	NeedsLogin        = &Error{Code: CodeNeedsLogin}
	ApprovalRequired  = &Error{Code: CodeApprovalRequired}
	ApprovalDenied    = &Error{Code: CodeApprovalDenied}
	ApprovalExpired   = &Error{Code: CodeApprovalExpired}
	FlowBlocked       = &Error{Code: CodeFlowBlocked}
)

// Error is a failure talking to, or finding something on, an upstream server.
type Error struct {
	Code   Code   // the stable reason
	Server string // the configured server name, "" when no server is involved
	Op     string // what was attempted, e.g. "call tool \"echo\"", "connect"
	Err    error  // the underlying cause, may be nil
}

// Error reads `server "gh": call tool "x": timeout: <cause>`. When the
// cause already names the server (launcher errors do), it is not repeated.
func (e *Error) Error() string {
	msg := string(e.Code)
	if e.Op != "" {
		msg = e.Op + ": " + msg
	}
	cause := ""
	if e.Err != nil {
		cause = e.Err.Error()
	}
	if tag := fmt.Sprintf("server %q", e.Server); e.Server != "" {
		if after, ok := strings.CutPrefix(cause, tag+": "); ok {
			cause = after
		}
		msg = tag + ": " + msg
	}
	if cause != "" {
		msg += ": " + cause
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel for e's Code, so that
// errors.Is(err, fault.Timeout) works for any *Error with CodeTimeout.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Server == "" && t.Op == "" && t.Err == nil && t.Code == e.Code
}

// Private marks an error whose text carries what only the operator may
// see: a server's own output (its stderr), which may hold local paths,
// stack traces or whatever a hostile server chose to write. Its text is
// its cause's, so logs and status show it whole; an edge that answers a
// client (the gateway) sends a neutral message in its place.
type Private struct{ Err error }

func (p *Private) Error() string { return p.Err.Error() }

func (p *Private) Unwrap() error { return p.Err }

// IsPrivate reports whether err's chain holds a *Private.
func IsPrivate(err error) bool {
	var p *Private
	return errors.As(err, &p)
}

// New returns an *Error.
func New(code Code, server, op string, err error) *Error {
	return &Error{Code: code, Server: server, Op: op, Err: err}
}

// CodeOf returns the Code of the first *Error in err's chain, or "" when
// there is none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
