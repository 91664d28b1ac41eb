package host_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// floodServer returns a ModeFlood server entry and the file in which it
// counts the tools/list requests it gets.
func floodServer(t *testing.T) (entry map[string]any, lists func() int) {
	t.Helper()
	mark := filepath.Join(t.TempDir(), "lists")
	env := testkit.ChildEnv(testkit.ModeFlood)
	env[testkit.MarkVar] = mark
	return map[string]any{"command": self(t), "env": env}, func() int {
		data, _ := os.ReadFile(mark)
		return strings.Count(string(data), "list\n")
	}
}

// TestListChangedFloodIsDamped: a server that announces list_changed 100
// times in 6 s without changing anything is re-listed a few times, not
// after each notification; the notifications that arrive during a wait
// are still followed by a re-listing. relist_internal_test.go checks the
// schedule itself on a fake clock; here the bound on the count follows
// from the rule and how long the flood took, so that a loaded machine
// that stretches the flood allows the re-listings that stretch brings.
func TestListChangedFloodIsDamped(t *testing.T) {
	t.Parallel()
	entry, lists := floodServer(t)
	h := open(t, parse(t, map[string]any{"s": entry}, nil))
	before := lists()
	if before == 0 {
		t.Fatal("the server was never listed")
	}
	start := time.Now()
	call(t, h, "s__flood", `{"count":100,"over_ms":6000}`)
	flood := time.Since(start)
	// The flood's first notification and the ones during the wait after
	// the re-listing it brought each need one.
	if !proc.Eventually(time.Minute, func() bool { return lists()-before >= 2 }) {
		t.Fatalf("%d re-listings for a flood of 100 list_changed; want at least 2", lists()-before)
	}
	// Room for any re-listing still due (the longest wait is 5 s).
	time.Sleep(time.Until(start.Add(flood + 6*time.Second)))
	got := lists() - before
	want := floodRelistings(flood + time.Second) // and 1 s for the last notifications to reach the relister
	t.Logf("%d re-listings for 100 notifications over %v; at most %d allowed", got, flood.Round(time.Millisecond), want)
	if got > want {
		t.Errorf("%d re-listings for a flood of 100 list_changed over %v that changed nothing; want at most %d", got, flood.Round(time.Millisecond), want)
	}
}

// floodRelistings is the most re-listings the pacing allows for a flood
// of list_changed spread over span that changes nothing: the first
// re-listing 200 ms after the first notification, then gaps of 4 s and
// 5 s, 5 s, ...; each re-listing after the first answers a notification
// that came after the one before it started.
func floodRelistings(span time.Duration) int {
	n := 1
	for at, gap := 200*time.Millisecond, 4*time.Second; at < span; at, gap = at+gap, 5*time.Second {
		n++
	}
	return n
}

// TestListChangedFloodCarriesAChange: a real change during a flood, or in
// its last notification, is listed. (relist_internal_test.go checks when,
// on a fake clock.)
func TestListChangedFloodCarriesAChange(t *testing.T) {
	t.Parallel()
	for _, at := range []int{40, 100} {
		t.Run(fmt.Sprint("change_at=", at), func(t *testing.T) {
			t.Parallel()
			entry, _ := floodServer(t)
			h := open(t, parse(t, map[string]any{"s": entry}, nil))
			done := make(chan *host.Result, 1)
			go func() {
				res, _ := h.Call(t.Context(), "s__flood", []byte(fmt.Sprintf(`{"count":100,"over_ms":6000,"change_at":%d}`, at)), nil)
				done <- res
			}()
			if !proc.Eventually(time.Minute, func() bool { _, err := h.Tool("s__flooded"); return err == nil }) {
				t.Fatal("the tool added during the flood never showed up")
			}
			<-done
		})
	}
}

// TestListChangedNotLostWhileAnotherServerRelists: while one server's
// re-listing is slow and it floods list_changed, another server's single
// list_changed is still followed by a re-listing.
func TestListChangedNotLostWhileAnotherServerRelists(t *testing.T) {
	t.Parallel()
	slow, slowLists := floodServer(t)
	quiet, _ := floodServer(t)
	h := open(t, parse(t, map[string]any{"a": slow, "b": quiet}, nil))
	before := slowLists()
	call(t, h, "a__stall", `{"delay_ms":4000}`)
	if !proc.Eventually(time.Minute, func() bool { return slowLists() > before }) {
		t.Fatal("the stalling server was not re-listed")
	}
	// a's re-listing is under way and takes 4 s: flood meanwhile (each
	// notification 20 ms apart, beyond the server's own 10 ms merging), then
	// change b.
	call(t, h, "a__flood", `{"count":100,"over_ms":2000}`)
	call(t, h, "b__flood", `{"count":1,"over_ms":1,"change_at":1}`)
	if !proc.Eventually(time.Minute, func() bool { _, err := h.Tool("b__flooded"); return err == nil }) {
		t.Fatal("b's change was never listed: its list_changed was lost")
	}
}

// TestFailedRelistKeepsTheLists: a re-listing that fails leaves the
// server's tools as they were, and they still work.
func TestFailedRelistKeepsTheLists(t *testing.T) {
	t.Parallel()
	var logs syncBuf
	entry, lists := floodServer(t)
	h := openWith(t, parse(t, map[string]any{"s": entry}, nil),
		&host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	names := func() []string {
		var out []string
		for _, tool := range h.Tools() {
			out = append(out, tool.Name)
		}
		slices.Sort(out)
		return out
	}
	want := names()
	if !slices.Contains(want, "s__echo") {
		t.Fatalf("tools before: %v", want)
	}
	before := lists()
	call(t, h, "s__break", `{}`)
	if !proc.Eventually(time.Minute, func() bool {
		return lists() > before && strings.Contains(logs.String(), "re-listing after list_changed failed")
	}) {
		t.Fatalf("no failed re-listing:\n%s", logs.String())
	}
	if got := names(); !slices.Equal(got, want) {
		t.Errorf("tools after a failed re-listing = %v; want %v", got, want)
	}
	if got := call(t, h, "s__echo", `{"text":"still"}`).Text; got != "still" {
		t.Errorf("echo after a failed re-listing = %q", got)
	}
}
