package gateway

import (
	"context"
	"log/slog"
	"strings"
)

// sdkLog is the logger go-sdk's server gets: the gateway's, except that
// the warning go-sdk logs when a list-changed notification finds a legacy
// session without an open event stream is debug. A legacy client over
// HTTP that never opened its GET stream is normal, and it reads the list
// again when it next asks: the warning said so on every reload.
func sdkLog(log *slog.Logger) *slog.Logger {
	return slog.New(quietHandler{log.Handler()})
}

type quietHandler struct{ slog.Handler }

func (q quietHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn && unconnectedNotice(r.Message) {
		if !q.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		quiet := slog.NewRecord(r.Time, slog.LevelDebug, r.Message, r.PC)
		r.Attrs(func(a slog.Attr) bool { quiet.AddAttrs(a); return true })
		r = quiet
	}
	return q.Handler.Handle(ctx, r)
}

func (q quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{q.Handler.WithAttrs(as)}
}

func (q quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{q.Handler.WithGroup(name)}
}

// unconnectedNotice reports go-sdk's message for a notification that
// found no stream to go on ("calling notifications/tools/list_changed:
// stream not connected or already closed").
func unconnectedNotice(msg string) bool {
	return strings.HasPrefix(msg, "calling notifications/") && strings.HasSuffix(msg, "stream not connected or already closed")
}
