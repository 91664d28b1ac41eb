package host_test

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/ingest"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestFailedRelistKeepsEveryList: a re-listing that fails keeps all the
// server's lists (tools, prompts, resources, templates), and the server
// stays ready.
func TestFailedRelistKeepsEveryList(t *testing.T) {
	t.Parallel()
	var logs syncBuf
	entry, lists := floodServer(t)
	h := openWith(t, parse(t, map[string]any{"s": entry}, nil),
		&host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	snapshot := func() string {
		var b strings.Builder
		for _, x := range h.Tools() {
			fmt.Fprintln(&b, "tool", x.Name, x.Description)
		}
		for _, x := range h.View(host.Caller{}).Prompts() {
			fmt.Fprintln(&b, "prompt", x.ID)
		}
		for _, x := range h.View(host.Caller{}).Resources() {
			fmt.Fprintln(&b, "resource", x.ID)
		}
		for _, x := range h.View(host.Caller{}).Templates() {
			fmt.Fprintln(&b, "template", x.ID)
		}
		return b.String()
	}
	want := snapshot()
	for _, item := range []string{"tool s__echo", "prompt s:greet", "resource s:test://static", "template s:test://items/{id}"} {
		if !strings.Contains(want, item) {
			t.Fatalf("%q missing before:\n%s", item, want)
		}
	}
	before := lists()
	call(t, h, "s__break", `{}`)
	if !proc.Eventually(time.Minute, func() bool {
		return lists() > before && strings.Contains(logs.String(), "re-listing after list_changed failed")
	}) {
		t.Fatalf("no failed re-listing:\n%s", logs.String())
	}
	if got := snapshot(); got != want {
		t.Errorf("lists after a failed re-listing:\n%s\nwant:\n%s", got, want)
	}
	if st := status(h, "s"); st.State != host.StateReady {
		t.Errorf("state after a failed re-listing = %s (%s)", st.State, st.LastError)
	}
}

// Trust score steps, as documented in host/trust.go.
func afterOK(v float64) float64      { return v + 0.02*(1-v) }
func afterToolErr(v float64) float64 { return v - 0.01*v }
func afterError(v float64) float64   { return v - 0.05*v }

// TestTrustScoreFollowsCalls: real calls move the score, starting from
// neutral: a success raises it, a tool error lowers it a little, a failed
// call more; a name that is not found does not count. The score is saved.
func TestTrustScoreFollowsCalls(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	h := openWith(t, parse(t, map[string]any{"s": child(t, testkit.ModeServer, nil)}, nil), hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	score := func() float64 { return status(h, "s").TrustScore }
	want := 0.5
	if got := score(); got != want {
		t.Fatalf("initial score %v, want %v", got, want)
	}
	steps := []struct {
		tool, args string
		next       func(float64) float64
	}{
		{"s__echo", `{"text":"a"}`, afterOK},
		{"s__echo", `{"text":"b"}`, afterOK},
		{"s__fail", `{}`, afterToolErr},
		{"s__nope", `{}`, func(v float64) float64 { return v }},
		{"s__crash", `{}`, afterError},
		{"s__echo", `{"text":"again"}`, afterOK}, // redials
	}
	for _, step := range steps {
		h.Call(context.Background(), step.tool, []byte(step.args), nil) //nolint:errcheck // the score is what counts
		want = step.next(want)
		// Decay over the test's milliseconds is below 1e-9.
		if got := score(); math.Abs(got-want) > 1e-6 {
			t.Errorf("after %s: score %.6f, want %.6f", step.tool, got, want)
		}
	}
	h.Close()
	saved, err := st.Score(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(saved.Value-want) > 1e-6 || time.Since(saved.UpdatedAt) > time.Minute {
		t.Errorf("saved score %+v, want %.6f now", saved, want)
	}
}

// TestTrustScoreDecays: a saved score above neutral decays towards it
// (half-life 7 days) and the next outcome counts from the decayed value; a
// score below neutral is remembered as it is.
func TestTrustScoreDecays(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	now := time.Now()
	for _, sc := range []store.Score{
		{Server: "good", Value: 0.9, UpdatedAt: now.Add(-7 * 24 * time.Hour)},
		{Server: "older", Value: 0.9, UpdatedAt: now.Add(-21 * 24 * time.Hour)},
		{Server: "bad", Value: 0.2, UpdatedAt: now.Add(-30 * 24 * time.Hour)},
	} {
		if err := st.SaveScore(context.Background(), sc); err != nil {
			t.Fatal(err)
		}
	}
	servers := map[string]any{}
	for _, name := range []string{"good", "older", "bad"} {
		servers[name] = child(t, testkit.ModeServer, nil)
	}
	h := openWith(t, parse(t, servers, nil), hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	for name, want := range map[string]float64{"good": 0.7, "older": 0.55, "bad": 0.2} {
		if got := status(h, name).TrustScore; math.Abs(got-want) > 1e-4 {
			t.Errorf("%s: score %.6f, want %.6f", name, got, want)
		}
	}
	call(t, h, "good__echo", `{"text":"x"}`)
	if got, want := status(h, "good").TrustScore, afterOK(0.7); math.Abs(got-want) > 1e-4 {
		t.Errorf("good after a success: score %.6f, want %.6f (from the decayed value)", got, want)
	}
}

// TestTrustScoreFlaggedMetadata: a server whose metadata matches injection
// patterns loses a step per flagged item, once, not at every rebuild.
func TestTrustScoreFlaggedMetadata(t *testing.T) {
	t.Parallel()
	h := open(t, parse(t, map[string]any{"hostile": hostileServer(t, hostile.ModePoison, nil, nil)}, nil))
	st := status(h, "hostile")
	if st.State != host.StateReady {
		t.Fatalf("state %s: %s", st.State, st.LastError)
	}
	flagged := 0
	for _, f := range st.Findings {
		if f.Kind == ingest.KindFlagged {
			flagged++
		}
	}
	if flagged == 0 {
		t.Fatalf("no flagged findings: %v", st.Findings)
	}
	want := 0.5
	for range flagged {
		want -= 0.1 * want
	}
	if math.Abs(st.TrustScore-want) > 1e-6 {
		t.Errorf("score %.6f with %d flagged items, want %.6f", st.TrustScore, flagged, want)
	}
	// Another rebuild (a reload) flags nothing new.
	if err := h.Reload(context.Background(), parse(t, map[string]any{"hostile": hostileServer(t, hostile.ModePoison, nil, nil)}, nil)); err != nil {
		t.Fatal(err)
	}
	if got := status(h, "hostile").TrustScore; math.Abs(got-want) > 1e-6 {
		t.Errorf("score after a reload %.6f, want %.6f", got, want)
	}
}
