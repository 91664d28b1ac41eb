package telemetry

import (
	"context"
	"log/slog"

	"github.com/switchboard-mcp/switchboard/host"
)

// maxLoggedName caps a tool name that matched no tool: it is whatever a
// client sent.
const maxLoggedName = 200

// LogCall writes the line of one call at info level: client (as it
// authenticated), the name the client gave itself, tool, outcome, code and
// latency; never arguments or results.
func LogCall(log *slog.Logger, rec host.CallRecord) {
	tool := rec.Tool
	if !rec.Catalogued && len(tool) > maxLoggedName {
		tool = tool[:maxLoggedName] + "..."
	}
	attrs := []slog.Attr{slog.String("client", rec.Client)}
	if rec.ClientName != "" {
		attrs = append(attrs, slog.String("client_name", rec.ClientName))
	}
	attrs = append(attrs, slog.String("tool", tool), slog.String("outcome", rec.Outcome))
	if rec.Code != "" {
		attrs = append(attrs, slog.String("code", rec.Code))
	}
	attrs = append(attrs, slog.Duration("latency", rec.Latency))
	log.LogAttrs(context.Background(), slog.LevelInfo, "call", attrs...)
}
