package gateway

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// go-sdk's warning about a notification that found no open stream is
// debug; its other warnings stay warnings.
func TestSDKLogQuietsUnconnectedNotices(t *testing.T) {
	t.Parallel()
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		log := sdkLog(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))).With("server", "gw")
		log.Warn("calling notifications/tools/list_changed: stream not connected or already closed")
		log.Warn("calling notifications/tools/list_changed: broken pipe")
		out := buf.String()
		if strings.Contains(out, "level=WARN msg=\"calling notifications/tools/list_changed: stream not connected") {
			t.Errorf("level %v: the unconnected notice is a warning:\n%s", level, out)
		}
		if !strings.Contains(out, "level=WARN msg=\"calling notifications/tools/list_changed: broken pipe\" server=gw") {
			t.Errorf("level %v: another warning was lost:\n%s", level, out)
		}
		if quiet := strings.Contains(out, "level=DEBUG msg=\"calling notifications/tools/list_changed: stream not connected or already closed\" server=gw"); quiet != (level == slog.LevelDebug) {
			t.Errorf("level %v: the notice at debug: %v, want %v:\n%s", level, quiet, level == slog.LevelDebug, out)
		}
	}
}
