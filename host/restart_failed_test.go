package host_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestRestartFailedServer: restarting a server whose process ended is one
// restart event, not two.
func TestRestartFailedServer(t *testing.T) {
	rec := &recorder{}
	cfg := parse(t, map[string]any{"kit": child(t, testkit.ModeServer, map[string]any{"eager": true})}, nil)
	h := openWith(t, cfg, &host.Options{StopTimeout: 500 * time.Millisecond, OnEvent: rec.event})
	ctx := context.Background()
	h.Call(ctx, "kit__crash", nil, nil)
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(rec.kinds(), host.EventExited) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := h.Restart(ctx, "kit"); err != nil {
		t.Fatal(err)
	}
	call(t, h, "kit__echo", `{"text":"again"}`)
	if diff := cmp.Diff([]host.EventKind{host.EventExited, host.EventRestarted}, rec.kinds()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
