package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestChangedToolFirstCallIsHeld: a server advertised from its saved
// catalogue is started by a call of the very tool whose definition it has
// changed; the call is refused with definition_changed (and audited)
// instead of running on the definition nobody approved.
func TestChangedToolFirstCallIsHeld(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	cfg := parse(t, map[string]any{"sleeper": sleeper(t)}, nil)
	opts := hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st)
	firstStart(t, cfg, opts)

	h, err := host.Open(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	res, err := h.Call(context.Background(), "sleeper__echo", json.RawMessage(`{"text":"unapproved"}`), nil)
	if !errors.Is(err, fault.DefinitionChanged) {
		ran := ""
		if res != nil {
			ran = res.Text
		}
		t.Fatalf("first call after the change: %v, result %q; want definition_changed", err, ran)
	}
	if !proc.Eventually(5*time.Second, func() bool {
		calls, err := st.Calls(context.Background(), store.CallFilter{Tool: "sleeper:echo"})
		return err == nil && slices.ContainsFunc(calls, func(c store.Call) bool {
			return c.Outcome == "error" && c.Code == "definition_changed"
		})
	}) {
		t.Error("no audit row for the refused call")
	}
}
