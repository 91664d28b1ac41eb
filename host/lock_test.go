package host_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
)

// TestLock: a host opened with a Lock serves what it pins; a tool whose
// hash differs is held (definition_changed) and no approval releases it,
// a prompt or template that differs is left out, and a server the lock
// does not name, or whose launch differs, is held and not started.
func TestLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	servers := map[string]any{"kit": launchKit(t, nil), "other": launchKit(t, map[string]string{"X": "1"})}
	h := open(t, parse(t, servers, nil))
	lock := map[string]hostlink.ServerPins{}
	for _, p := range h.ServerPins() {
		if !p.Known || len(p.Tools) == 0 || len(p.Prompts) == 0 || len(p.Templates) == 0 {
			t.Fatalf("pins of %s: %+v; want its lists", p.Server, p)
		}
		lock[p.Server] = p
	}
	h.Close()

	kit := lock["kit"]
	kit.Tools = maps.Clone(kit.Tools)
	kit.Tools["echo"] = "sha256:0"
	kit.Prompts = map[string]string{}
	lock["kit"] = kit
	other := lock["other"]
	other.Launch = "sha256:0"
	lock["other"] = other
	servers["unlocked"] = launchKit(t, map[string]string{"Y": "1"})
	opts := &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond}
	hostlink.WithLock(opts, lock)
	h = openWith(t, parse(t, servers, nil), opts)
	defer h.Close()

	if _, err := h.Call(ctx, "kit__echo", []byte(`{"text":"x"}`), nil); !errors.Is(err, fault.DefinitionChanged) {
		t.Errorf("kit__echo, its hash changed in the lock: %v, want definition_changed", err)
	}
	call(t, h, "kit__slow", `{}`)
	if ps := h.View(host.Caller{}).Prompts(); len(ps) != 0 {
		t.Errorf("prompts the lock does not pin are listed: %v", ps)
	}
	for name, want := range map[string]string{"other": "lockfile", "unlocked": "unlocked"} {
		if s := status(h, name); s.State != host.StateHeld || s.LaunchHeld != want || s.PID != 0 {
			t.Errorf("%s: state %s, launchHeld %q, pid %d; want held (%s), not started", name, s.State, s.LaunchHeld, s.PID, want)
		}
	}
	if _, err := h.Call(ctx, "unlocked__echo", []byte(`{}`), nil); !errors.Is(err, fault.LaunchChanged) {
		t.Errorf("unlocked__echo: %v, want launch_changed", err)
	}
}
