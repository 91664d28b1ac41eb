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

// listWatch records when a server's tools/list requests arrive, by
// polling the count floodServer keeps, every 5 ms.
type listWatch struct {
	lists func() int
	start time.Time
	seen  int
}

func watchLists(lists func() int) *listWatch {
	return &listWatch{lists: lists, start: time.Now(), seen: lists()}
}

// next waits up to timeout for the next tools/list and returns when it was
// seen, since the watch started; ok is false if none came.
func (w *listWatch) next(timeout time.Duration) (at time.Duration, ok bool) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if n := w.lists(); n > w.seen {
			w.seen++
			return time.Since(w.start), true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0, false
}

// TestLoneListChangedRelistedAfterDelay: a lone list_changed is followed by
// one re-listing 200 ms later, also right after a re-listing that found a
// change (only a flood paces re-listings). Not parallel: the 200 ms are
// read off the wall clock.
func TestLoneListChangedRelistedAfterDelay(t *testing.T) {
	entry, lists := floodServer(t)
	h := open(t, parse(t, map[string]any{"s": entry}, nil))
	w := watchLists(lists)
	for i, tool := range []string{"s__grow", "s__flood"} {
		// The second notification comes right after the re-listing that
		// found the first change.
		args := `{}`
		if tool == "s__flood" {
			args = `{"count":1,"over_ms":1,"change_at":1}`
		}
		start := time.Since(w.start)
		call(t, h, tool, args)
		at, ok := w.next(5 * time.Second)
		if !ok {
			t.Fatalf("notification %d: no re-listing", i+1)
		}
		at -= start
		t.Logf("notification %d: re-listed %v after the call started", i+1, at.Round(time.Millisecond))
		// Under 1 s (a re-listing that found a change used to hold the
		// next one back 1 s), with room for a loaded machine.
		if at < 200*time.Millisecond || at > 950*time.Millisecond {
			t.Errorf("notification %d: re-listed %v after the call started; want 200 ms after the notification", i+1, at.Round(time.Millisecond))
		}
	}
	if extra, ok := w.next(1500 * time.Millisecond); ok {
		t.Errorf("an extra re-listing at %v", extra.Round(time.Millisecond))
	}
	for _, name := range []string{"s__grown", "s__flooded"} {
		if _, err := h.Tool(name); err != nil {
			t.Errorf("the added tool %s is not listed: %v", name, err)
		}
	}
}

// TestListChangedFloodPacing: during a flood of list_changed, the first
// re-listing comes 200 ms after the first notification; after it the gap
// between re-listings is 1 s when the last one found a change, and
// otherwise the previous gap (at least 1 s) times 4, up to 5 s. Not
// parallel: it reads the pacing off the wall clock, which other tests'
// load would stretch (relist_internal_test.go checks the rule itself).
func TestListChangedFloodPacing(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		args string
		gaps []time.Duration // between successive re-listings
	}{
		// Notifications every 60 ms for 6 s: re-listings at about 0.26 s,
		// 4.26 s and (for the notifications after that) 9.26 s.
		{"nothing changes", `{"count":100,"over_ms":6000}`, []time.Duration{4 * s, 5 * s}},
		// The change at 3 s is found at 4.26 s; then 1 s, then 4 s.
		{"a change", `{"count":100,"over_ms":6000,"change_at":50}`, []time.Duration{4 * s, s, 4 * s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			entry, lists := floodServer(t)
			h := open(t, parse(t, map[string]any{"s": entry}, nil))
			w := watchLists(lists)
			done := make(chan error, 1)
			go func() {
				_, err := h.Call(context.Background(), "s__flood", []byte(tt.args), nil)
				done <- err
			}()
			var seen []time.Duration
			for {
				at, ok := w.next(11*time.Second - time.Since(w.start))
				if !ok {
					break
				}
				seen = append(seen, at)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			t.Logf("re-listings at %v", seen)
			if len(seen) != len(tt.gaps)+1 {
				t.Fatalf("%d re-listings at %v; want %d", len(seen), seen, len(tt.gaps)+1)
			}
			if seen[0] < 200*time.Millisecond || seen[0] > 1500*time.Millisecond {
				t.Errorf("first re-listing at %v; want 200 ms after the first notification (at 60 ms)", seen[0])
			}
			for i, want := range tt.gaps {
				// Room for a loaded machine; 1 s, 4 s and 5 s stay apart.
				if gap := seen[i+1] - seen[i]; gap < want-150*time.Millisecond || gap > want+850*time.Millisecond {
					t.Errorf("gap %d = %v, want %v", i+1, gap.Round(time.Millisecond), want)
				}
			}
		})
	}
}

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
	if !proc.Eventually(10*time.Second, func() bool {
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
