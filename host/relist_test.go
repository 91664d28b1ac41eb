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
// times in 6 s without changing anything is re-listed at most 3 times
// (a re-listing that finds nothing new makes the next one wait longer, up
// to 5 s), and the notifications that arrive during a wait are still
// followed by one re-listing.
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
	// The longest wait between two re-listings, and some slack: the
	// notifications of the last wait have been followed by a re-listing.
	time.Sleep(6 * time.Second)
	got := lists() - before
	t.Logf("%d re-listings for 100 notifications over %v", got, flood.Round(time.Millisecond))
	if got > 3 {
		t.Errorf("%d re-listings for a flood of 100 list_changed that changed nothing; want at most 3", got)
	}
	if got < 2 {
		t.Errorf("%d re-listings: the flood's first notification and the ones during the wait each need one", got)
	}
}

// TestListChangedFloodCarriesAChange: a real change during a flood, or in
// its last notification, is listed within 6 s of it. Not parallel: the
// 6 s are read off the wall clock.
func TestListChangedFloodCarriesAChange(t *testing.T) {
	for _, at := range []int{40, 100} {
		t.Run(fmt.Sprint("change_at=", at), func(t *testing.T) {
			entry, _ := floodServer(t)
			h := open(t, parse(t, map[string]any{"s": entry}, nil))
			start := time.Now()
			done := make(chan *host.Result, 1)
			go func() {
				res, _ := h.Call(t.Context(), "s__flood", []byte(fmt.Sprintf(`{"count":100,"over_ms":6000,"change_at":%d}`, at)), nil)
				done <- res
			}()
			changed := start.Add(time.Duration(at) * 60 * time.Millisecond)
			if !proc.Eventually(20*time.Second, func() bool { _, err := h.Tool("s__flooded"); return err == nil }) {
				t.Fatal("the tool added during the flood never showed up")
			}
			late := time.Since(changed)
			t.Logf("listed %v after the change", late.Round(time.Millisecond))
			if late > 6*time.Second {
				t.Errorf("the tool added during the flood showed up %v after it; want within 6s", late)
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
	if !proc.Eventually(5*time.Second, func() bool { return slowLists() > before }) {
		t.Fatal("the stalling server was not re-listed")
	}
	// a's re-listing is under way and takes 4 s: flood meanwhile (each
	// notification 20 ms apart, beyond the server's own 10 ms merging), then
	// change b.
	call(t, h, "a__flood", `{"count":100,"over_ms":2000}`)
	call(t, h, "b__flood", `{"count":1,"over_ms":1,"change_at":1}`)
	if !proc.Eventually(10*time.Second, func() bool { _, err := h.Tool("b__flooded"); return err == nil }) {
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
	if !proc.Eventually(10*time.Second, func() bool {
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
