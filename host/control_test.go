package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestRestart: Restart stops a ready server's process and starts another,
// reports it as restarted (not exited), and works on a server that was
// never started; an unknown or disabled server is refused.
func TestRestart(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var events []host.EventKind
	opts := *fastOpts
	opts.OnEvent = func(ev host.ServerEvent) {
		mu.Lock()
		if ev.Kind != host.EventSandbox {
			events = append(events, ev.Kind)
		}
		mu.Unlock()
	}
	cfg := parse(t, map[string]any{
		"a":   child(t, testkit.ModeServer, nil),
		"off": child(t, testkit.ModeServer, map[string]any{"enabled": false}),
	}, nil)
	h := openWith(t, cfg, &opts)
	pidOf := func() (int, host.State, time.Time) {
		for _, s := range h.Servers() {
			if s.Name == "a" {
				return s.PID, s.State, s.Since
			}
		}
		t.Fatal("no server a")
		return 0, "", time.Time{}
	}
	before, state, since := pidOf()
	if before == 0 || state != host.StateReady || since.IsZero() {
		t.Fatalf("before: pid %d, state %s, since %v", before, state, since)
	}
	if err := h.Restart(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	after, state, since2 := pidOf()
	if after == 0 || after == before || state != host.StateReady || !since2.After(since) {
		t.Fatalf("after: pid %d (was %d), state %s, since %v (was %v)", after, before, state, since2, since)
	}
	mu.Lock()
	got := append([]host.EventKind(nil), events...)
	mu.Unlock()
	if len(got) != 1 || got[0] != host.EventRestarted {
		t.Errorf("events %v, want [restarted]", got)
	}
	if _, err := h.Call(context.Background(), "a:echo", json.RawMessage(`{"text":"hi"}`), nil); err != nil {
		t.Fatalf("call after restart: %v", err)
	}
	for _, tc := range []struct {
		name string
		code fault.Code
	}{{"nope", fault.CodeNotFound}, {"off", fault.CodeUnavailable}} {
		if err := h.Restart(context.Background(), tc.name); fault.CodeOf(err) != tc.code {
			t.Errorf("Restart(%s) = %v, want %s", tc.name, err, tc.code)
		}
	}
}

// TestLiveCalls: a call in flight is listed, with its progress, until it
// ends.
func TestLiveCalls(t *testing.T) {
	t.Parallel()
	h := open(t, parse(t, map[string]any{"a": child(t, testkit.ModeServer, nil)}, nil))
	progressed := make(chan struct{}, 1)
	done := make(chan error, 1)
	// A call of a minute at least, ended by the test once it is seen.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		_, err := h.Call(ctx, "a:slow", json.RawMessage(`{"steps":200,"delay_ms":300}`), &host.CallOptions{
			Client: "c1", Progress: func(host.Progress) {
				select {
				case progressed <- struct{}{}:
				default:
				}
			},
		})
		done <- err
	}()
	select {
	case <-progressed:
	case err := <-done:
		t.Fatalf("the call ended before any progress: %v", err)
	}
	live := h.LiveCalls()
	if len(live) != 1 || live[0].Tool != "a:slow" || live[0].Server != "a" || live[0].Client != "c1" || live[0].Total != 200 || live[0].Progress < 1 {
		t.Fatalf("in flight: %+v", live)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled call: %v", err)
	}
	if live := h.LiveCalls(); len(live) != 0 {
		t.Fatalf("after: %+v", live)
	}
}

// TestDisabledToolNotHeld: a tool whose definition changed while the
// configuration turns it off (disabledTools, as a rejection writes it) is
// not held: it is never offered.
func TestDisabledToolNotHeld(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	entry := sleeper(t)
	entry["eager"] = true
	opts := hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st)
	h, err := host.Open(context.Background(), parse(t, map[string]any{"sleeper": entry}, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	for _, tc := range []struct {
		name     string
		disabled []string
		held     bool
	}{{"off", []string{"echo"}, false}, {"on again", []string{}, true}} {
		entry["disabledTools"] = tc.disabled
		h, err := host.Open(context.Background(), parse(t, map[string]any{"sleeper": entry}, nil), opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Refresh(context.Background()); err != nil { // discovered now, drift checked
			t.Fatal(err)
		}
		var held []string
		for _, s := range h.Servers() {
			held = append(held, s.Held...)
		}
		h.Close()
		if got := slices.Contains(held, "echo"); got != tc.held {
			t.Errorf("%s: held %v, want echo held %v", tc.name, held, tc.held)
		}
	}
}
