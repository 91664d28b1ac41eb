package upstream

import (
	"context"
	"sync/atomic"
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

// recordedStatus returns the HTTP refusal recorded for ctx's operation, or
// 0.
func recordedStatus(ctx context.Context) int {
	if r, ok := ctx.Value(statusKey{}).(*atomic.Int32); ok {
		return int(r.Load())
	}
	return 0
}
