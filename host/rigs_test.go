package host_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// sleeper is the configuration entry of a sleeper server
// (testkit.ModeSleeper): it changes its echo tool's description from its
// second start on, its starts counted in a file of the test's.
func sleeper(t testing.TB) map[string]any {
	t.Helper()
	env := testkit.ChildEnv(testkit.ModeSleeper)
	env[testkit.MarkVar] = filepath.Join(t.TempDir(), "starts")
	return map[string]any{"command": self(t), "env": env}
}

// firstStart opens a host on cfg with opts, calls sleeper__echo (the
// sleeper's first start, whose definitions the store approves) and
// closes the host.
func firstStart(t testing.TB, cfg *config.Config, opts *host.Options) {
	t.Helper()
	h, err := host.Open(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := call(t, h, "sleeper__echo", `{"text":"first"}`).Text; got != "first" {
		t.Fatalf("first start: echo = %q", got)
	}
	h.Close()
}

// crashed opens a host whose eager server kit (testkit.ModeServer) has
// ended mid-call, its events recorded in rec: it waits up to 10 seconds
// for the exit event.
func crashed(t testing.TB) (*host.Host, *recorder) {
	t.Helper()
	rec := &recorder{}
	cfg := parse(t, map[string]any{"kit": child(t, testkit.ModeServer, map[string]any{"eager": true})}, nil)
	h := openWith(t, cfg, &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, OnEvent: rec.event})
	h.Call(context.Background(), "kit__crash", nil, nil)
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(rec.kinds(), host.EventExited) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return h, rec
}
