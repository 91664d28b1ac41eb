package host_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/ingest"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// findingsOf returns the findings of one kind in st.
func findingsOf(st host.ServerStatus, kind string) []host.Finding {
	var out []host.Finding
	for _, f := range st.Findings {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

// Servers that other MCP clients run despite lines on stdout that are not
// JSON-RPC, a declared list they do not implement, or a list other than
// tools that fails, work here too: the lines are skipped and kept with
// stderr, the list is empty, and each is a finding.
func TestServersThatBendTheStdioRules(t *testing.T) {
	t.Parallel()
	h := open(t, parse(t, map[string]any{
		"chatty": child(t, testkit.ModeChatty, map[string]any{"eager": true}),
		"sparse": child(t, testkit.ModeSparse, map[string]any{"eager": true}),
	}, nil))
	ctx := context.Background()
	for _, name := range []string{"chatty", "sparse"} {
		if err := h.Ready(ctx, name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}

	t.Run("stray stdout lines", func(t *testing.T) {
		if got := call(t, h, "chatty__echo", `{"text":"still here"}`).Text; got != "still here" {
			t.Errorf("echo = %q", got)
		}
		st := status(h, "chatty")
		if st.State != host.StateReady {
			t.Fatalf("state %s (%s)", st.State, st.LastError)
		}
		fs := findingsOf(st, ingest.KindStdoutStray)
		if len(fs) != 1 || fs[0].Severity != host.SeverityInfo {
			t.Fatalf("findings %v, want one info %s", st.Findings, ingest.KindStdoutStray)
		}
		if want := "5 line(s)"; !strings.Contains(fs[0].Detail, want) || !strings.Contains(fs[0].Detail, testkit.Chatter[0]) {
			t.Errorf("finding %q: want %q and the first line", fs[0].Detail, want)
		}
		for _, line := range append(slices.Clone(testkit.Chatter), testkit.ChatterCall) {
			if !strings.Contains(st.Stderr, "[stdout, not JSON-RPC] "+line) {
				t.Errorf("stderr tail lacks the stray line %q:\n%s", line, st.Stderr)
			}
		}
	})

	t.Run("declared lists not implemented", func(t *testing.T) {
		if got := call(t, h, "sparse__echo", `{"text":"tools work"}`).Text; got != "tools work" {
			t.Errorf("echo = %q", got)
		}
		st := status(h, "sparse")
		if st.State != host.StateReady || st.Resources != 0 || st.Prompts != 0 || st.Templates != 0 {
			t.Errorf("state %s, %d resources, %d prompts, %d templates; want ready, 0, 0, 0 (%s)", st.State, st.Resources, st.Prompts, st.Templates, st.LastError)
		}
		failed := findingsOf(st, ingest.KindListFailed)
		if len(failed) != 1 || failed[0].Severity != host.SeverityWarn ||
			!strings.HasPrefix(failed[0].Detail, "resources/templates/list: connect ECONNREFUSED 127.0.0.1:5432") || strings.Contains(failed[0].Detail, "\x1b") {
			t.Errorf("list_failed findings %v, want one warning naming resources/templates/list and the server's error, without its escape", failed)
		}
		var got []string
		for _, f := range findingsOf(st, ingest.KindListMissing) {
			if f.Severity != host.SeverityInfo {
				t.Errorf("finding %v: want info", f)
			}
			got = append(got, strings.Fields(f.Detail)[0])
		}
		slices.Sort(got)
		if want := []string{"prompts/list", "resources/list"}; !slices.Equal(got, want) {
			t.Errorf("list_missing findings for %v, want %v", got, want)
		}
	})
}

// A server that writes only a banner and exits is reported with its exit
// status and the banner, not with a JSON decoding error.
func TestServerThatOnlyPrintsABanner(t *testing.T) {
	t.Parallel()
	h := open(t, parse(t, map[string]any{
		"banner": child(t, testkit.ModeBanner, map[string]any{"startupAttempts": 1}),
	}, nil))
	err := h.Ready(context.Background(), "banner")
	if err == nil {
		t.Fatal("Await: no error")
	}
	st := status(h, "banner")
	for _, want := range []string{"exit status 1", "Usage: weather-server --api-key KEY"} {
		if !strings.Contains(st.LastError, want) {
			t.Errorf("last error lacks %q:\n%s", want, st.LastError)
		}
	}
	if strings.Contains(st.LastError, "invalid character") {
		t.Errorf("last error is a JSON decoding error:\n%s", st.LastError)
	}
}

// recordLog keeps the messages of the log records at or above a level.
type recordLog struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recordLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (r *recordLog) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	line := rec.Message
	rec.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
	r.msgs = append(r.msgs, line)
	return nil
}
func (r *recordLog) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recordLog) WithGroup(string) slog.Handler      { return r }

func (r *recordLog) matching(prefix string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range r.msgs {
		if strings.HasPrefix(m, prefix) {
			out = append(out, m)
		}
	}
	return out
}

// Info findings are logged as one line per server that counts them by
// kind, not a line each: a server whose tools all lose their hints does
// not fill the log.
func TestInfoFindingsLoggedAsACount(t *testing.T) {
	t.Parallel()
	rec := &recordLog{}
	h := openWith(t, parse(t, map[string]any{"a": child(t, testkit.ModeAnnotated, map[string]any{"eager": true})}, nil),
		&host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, Logger: slog.New(rec)})
	if err := h.Ready(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if n := len(findingsOf(status(h, "a"), ingest.KindAnnotations)); n != 3 {
		t.Fatalf("%d annotations_dropped findings, want 3", n)
	}
	if each := rec.matching("server metadata: " + ingest.KindAnnotations); len(each) != 0 {
		t.Errorf("info findings logged one by one: %q", each)
	}
	counted := rec.matching("server metadata: info findings")
	if len(counted) != 1 || !strings.Contains(counted[0], "server=a") || !strings.Contains(counted[0], "annotations_dropped=3") {
		t.Errorf("the count's log lines: %q, want one for server a with annotations_dropped=3", counted)
	}
}
