package server

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorder is a slog handler that keeps records.
type recorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

// find returns the level and attributes of the last record about tool name.
func (r *recorder) find(name string) (slog.Level, map[string]string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.recs) - 1; i >= 0; i-- {
		attrs := map[string]string{}
		r.recs[i].Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
		if attrs["tool"] == name {
			return r.recs[i].Level, attrs, true
		}
	}
	return 0, nil, false
}

// TestErrorLogging checks that every tool error is logged: an ordinary
// error (a tool execution error) at info, refusals at warn with status,
// type and message, the rest at error with the chain.
func TestErrorLogging(t *testing.T) {
	rec := &recorder{}
	s := testServer(&Options{Logger: slog.New(rec)})
	cs := connect(t, serveHTTP(t, s), "", nil)
	tests := []struct {
		kind   string
		level  slog.Level
		status string
		typ    string
		text   string // in message or error
	}{
		{"unauthorized", slog.LevelWarn, "401", "unauthorized", "log in first"},
		{"forbidden", slog.LevelWarn, "403", "forbidden", "not yours"},
		{"invalid", slog.LevelWarn, "400", "invalid_params", "bad kind"},
		{"internal", slog.LevelError, "500", "internal", "disk on fire"},
		{"", slog.LevelInfo, "", "tool_error", "*fmt.wrapError: wrapped: plain failure <- *errors.errorString: plain failure"},
	}
	for _, tt := range tests {
		cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{"kind": tt.kind}})
		level, attrs, ok := rec.find("fail")
		if !ok {
			t.Fatalf("%q: nothing logged", tt.kind)
		}
		msg := attrs["message"] + attrs["error"]
		if level != tt.level || attrs["status"] != tt.status || attrs["type"] != tt.typ || !strings.Contains(msg, tt.text) {
			t.Errorf("%q: logged %v %v", tt.kind, level, attrs)
		}
	}
	cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "liar"})
	if level, attrs, _ := rec.find("liar"); level != slog.LevelError || !strings.Contains(attrs["error"], "breaks the declared output schema") {
		t.Errorf("broken result logged %v %v", level, attrs)
	}
}
