package host_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/host"
)

// TestRestartFailedServer: restarting a server whose process ended is one
// restart event, not two.
func TestRestartFailedServer(t *testing.T) {
	t.Parallel()
	h, rec := crashed(t)
	ctx := context.Background()
	if err := h.Restart(ctx, "kit"); err != nil {
		t.Fatal(err)
	}
	call(t, h, "kit__echo", `{"text":"again"}`)
	if diff := cmp.Diff([]host.EventKind{host.EventExited, host.EventRestarted}, rec.kinds()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
