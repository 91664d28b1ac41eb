package upstream

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/switchboard-mcp/switchboard/fault"
)

// go-sdk reports an HTTP refusal as text ("Too Many Requests"), so the
// round tripper records the status of each request's refusal in the
// request's context, where classify finds it again: an operation's context
// reaches the HTTP request go-sdk makes for it.

type statusKey struct{}

// withStatus returns ctx carrying a recorder for HTTP refusals.
func withStatus(ctx context.Context) context.Context {
	return context.WithValue(ctx, statusKey{}, new(atomic.Int32))
}

// recordStatus notes an HTTP error status for the request's operation.
func recordStatus(ctx context.Context, status int) {
	if r, ok := ctx.Value(statusKey{}).(*atomic.Int32); ok && status >= 400 {
		r.Store(int32(status))
	}
}

// statusCode maps the HTTP refusal recorded for ctx's operation, if any, to
// a code.
func statusCode(ctx context.Context) (fault.Code, int) {
	r, ok := ctx.Value(statusKey{}).(*atomic.Int32)
	if !ok {
		return "", 0
	}
	switch st := int(r.Load()); st {
	case 0:
		return "", 0
	case http.StatusUnauthorized, http.StatusForbidden:
		return fault.CodeAuthFailure, st
	case http.StatusTooManyRequests:
		return fault.CodeRateLimited, st
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		// Refused before the server ran anything.
		return fault.CodeTransient, st
	case http.StatusRequestEntityTooLarge:
		return fault.CodeTooLarge, st
	default:
		// 500 and 504 among them: the server may have started the work.
		return fault.CodeServerError, st
	}
}

// statusRecorded reports whether ctx's operation got an HTTP refusal.
func statusRecorded(ctx context.Context) bool {
	code, _ := statusCode(ctx)
	return code != ""
}
