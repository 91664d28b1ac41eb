package host

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestRelistPace: the gap after each re-listing, from a fresh pace, for a
// sequence of outcomes: whether the re-listing found a change (c) and
// whether more notifications came while it was pending (f).
func TestRelistPace(t *testing.T) {
	t.Parallel()
	s := time.Second
	type step struct{ changed, flooded bool }
	c, f, cf, none := step{changed: true}, step{flooded: true}, step{true, true}, step{}
	tests := []struct {
		name     string
		outcomes []step
		want     []time.Duration
	}{
		{"flood", []step{f, f, f, f}, []time.Duration{4 * s, 5 * s, 5 * s, 5 * s}},
		{"changes", []step{c, cf}, []time.Duration{0, s}},
		{"a change resets", []step{f, f, cf, f}, []time.Duration{4 * s, 5 * s, s, 4 * s}},
		{"lone notifications finding nothing", []step{none, none, none}, []time.Duration{0, 0, 0}},
		{"a lone notification after a flood resets", []step{f, f, none}, []time.Duration{4 * s, 5 * s, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p relistPace
			at := time.Unix(1000, 0)
			for i, st := range tt.outcomes {
				p.flooded = st.flooded
				changed := st.changed
				p.ran(at, changed)
				if p.gap != tt.want[i] || !p.next.Equal(at.Add(tt.want[i])) {
					t.Errorf("after re-listing %d (changed=%v): gap %v, next %v; want gap %v", i+1, changed, p.gap, p.next.Sub(at), tt.want[i])
				}
				at = p.next
			}
		})
	}
}

// fakeClock is a paceClock that moves only when the test moves it. It
// tells the test each time the relister arms its wake-up (armed), which is
// how the test knows the relister has taken a notification in, and when
// for.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []fakeWait
	armed chan time.Time
}

type fakeWait struct {
	at time.Time
	c  chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), armed: make(chan time.Time, 1024)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if t.After(c.now) {
		c.waits = append(c.waits, fakeWait{t, ch})
	} else {
		ch <- c.now
	}
	select {
	case c.armed <- t:
	default:
		panic("fakeClock: armed is full")
	}
	return ch
}

// advance moves the clock on by d and fires the wake-ups that are due.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	waits := c.waits[:0]
	for _, w := range c.waits {
		if w.at.After(c.now) {
			waits = append(waits, w)
			continue
		}
		w.c <- c.now
	}
	c.waits = waits
}

// TestRelisterPacing drives the relister with a fake clock over a real
// server, notifications given to listChanged directly or sent by the
// server as its tools change, and checks when each re-listing is due: a
// lone notification 200 ms after it, also right after a re-listing that
// found a change; during a flood the gap after a re-listing is 4 s, then
// 5 s, and 1 s after one that found a change; a lone notification after
// the gap is again 200 ms. The relister is seen to take each notification
// in when it arms its wake-up, and each re-listing by its EventRelisted.
func TestRelisterPacing(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	relisted := make(chan struct{}, 64)
	h := openPaced(t, clock, func(ev ServerEvent) {
		if ev.Server == "s" && ev.Kind == EventRelisted {
			relisted <- struct{}{}
		}
	})
	start := clock.Now()
	ms := time.Millisecond
	s := time.Second
	// drain forgets the wake-ups armed so far. The relister arms one
	// each time round its loop while a re-listing is pending (its
	// once-a-second chores included), always for the same time until that
	// re-listing runs.
	drain := func() {
		for {
			select {
			case <-clock.armed:
			default:
				return
			}
		}
	}
	// armedAt waits for the relister to arm its wake-up, and checks it is
	// for at (since the start).
	armedAt := func(step string, at time.Duration) {
		t.Helper()
		select {
		case got := <-clock.armed:
			if got.Sub(start) != at {
				t.Fatalf("%s: the next re-listing is due at %v; want %v", step, got.Sub(start), at)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s: the relister never armed its wake-up (want one for %v)", step, at)
		}
	}
	// relistsAt moves the clock to at, checking that no re-listing came
	// before, and waits for the re-listing due then.
	relistsAt := func(step string, at time.Duration) {
		t.Helper()
		select {
		case <-relisted:
			t.Fatalf("%s: a re-listing before %v", step, at)
		default:
		}
		clock.advance(start.Add(at).Sub(clock.Now()))
		select {
		case <-relisted:
		case <-time.After(time.Minute):
			t.Fatalf("%s: no re-listing at %v", step, at)
		}
	}
	// notify is a list_changed now; the relister takes it in and arms
	// its wake-up for the re-listing due then. (While a re-listing is
	// pending, the wake-up seen may be one armed after a chore; it is for
	// the same time, and the notification is taken in by then at the
	// latest.)
	notify := func(step string, due time.Duration) {
		t.Helper()
		drain()
		h.listChanged("s")
		armedAt(step, due)
	}
	// change makes the server change its tools, which it announces with
	// list_changed, while no re-listing is pending.
	change := func(step, tool, args string, due time.Duration) {
		t.Helper()
		drain()
		res, err := h.Call(t.Context(), tool, json.RawMessage(args), nil)
		if err != nil || res.IsError {
			t.Fatalf("%s: %s: %v %+v", step, tool, err, res)
		}
		armedAt(step, due)
	}
	// listed waits for the tool to be listed.
	listed := func(step, tool string) {
		t.Helper()
		// The rebuild follows the re-listing on the relister.
		if !proc.Eventually(time.Minute, func() bool { _, err := h.tool(tool); return err == nil }) {
			t.Fatalf("%s: %s not listed", step, tool)
		}
	}

	notify("a lone notification", 200*ms)
	relistsAt("a lone notification", 200*ms)
	change("a change", "s__grow", `{}`, 400*ms)
	relistsAt("a change", 400*ms)
	listed("a change", "s__grown")
	notify("a lone notification right after a change", 600*ms)
	relistsAt("a lone notification right after a change", 600*ms)

	// A flood: notifications while one is pending, and within each gap.
	clock.advance(400 * ms) // 1 s
	notify("flood, the first notification", 1200*ms)
	clock.advance(100 * ms)
	notify("flood, while pending", 1200*ms)
	relistsAt("flood", 1200*ms)
	notify("flood, within the 4 s gap", 5200*ms)
	relistsAt("flood, within the 4 s gap", 5200*ms)
	change("flood, a change within the 5 s gap", "s__flood", `{"count":1,"over_ms":1,"change_at":1}`, 10200*ms)
	relistsAt("flood, a change within the 5 s gap", 10200*ms)
	listed("flood, a change within the 5 s gap", "s__flooded")
	notify("flood, within the 1 s gap after a change", 11200*ms)
	relistsAt("flood, within the 1 s gap after a change", 11200*ms)
	clock.advance(3 * s)
	notify("flood, late in the 4 s gap", 15200*ms)
	relistsAt("flood, late in the 4 s gap", 15200*ms)

	// The gap after that is 5 s; a notification after a gap is lone.
	clock.advance(4 * s)
	notify("flood, late in the 5 s gap", 20200*ms)
	relistsAt("flood, late in the 5 s gap", 20200*ms)
	clock.advance(5 * s)
	notify("a lone notification after the flood", 25400*ms)
	relistsAt("a lone notification after the flood", 25400*ms)
	// Wake-ups armed for 25.4 s were armed while that re-listing was
	// pending (a chore's turn of the loop); any other is one armed with
	// nothing pending.
	for {
		select {
		case at := <-clock.armed:
			if at.Sub(start) != 25400*ms {
				t.Errorf("a wake-up armed for %v with nothing pending", at.Sub(start))
			}
			continue
		case <-relisted:
			t.Error("an extra re-listing")
		default:
		}
		break
	}
}

// openPaced opens a Host over a test kit server s (ModeFlood) whose
// relister runs on clock; onEvent receives its events. It closes with the
// test.
func openPaced(t *testing.T, clock paceClock, onEvent func(ServerEvent)) *Host {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"s": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeFlood)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	h, err := Open(ctx, cfg, &Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, OnEvent: onEvent, pace: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}
