package telemetry_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestGateMetrics: a held call, a person's approval and the approved call
// are counted by server and decision; the decision alone is no call.
func TestGateMetrics(t *testing.T) {
	exe, _ := os.Executable()
	data, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"kit": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer)}},
		"policy":     map[string]any{"approve": map[string]any{"tools": []string{"kit:echo"}}},
	})
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	src := &later{}
	m := telemetry.NewMetrics(src)
	h, err := host.Open(context.Background(), cfg, hostlink.WithStore(&host.Options{OnCall: m.Call, StopTimeout: 500 * time.Millisecond}, st))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	src.h.Store(h)
	ctx := context.Background()
	args := json.RawMessage(`{"text":"hi"}`)
	h.Call(ctx, "kit__echo", args, nil)
	held, err := h.HeldCalls(ctx, store.ApprovalPending)
	if err != nil || len(held) != 1 {
		t.Fatalf("held = %v, %v", held, err)
	}
	if _, err := h.DecideCall(ctx, held[0].ID, true, "ui:operator"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Call(ctx, "kit__echo", args, nil); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, m)
	for decision, want := range map[string]float64{host.GateHeld: 1, host.GateApproved: 1, host.GateUsed: 1} {
		if got := value(fams, "switchboard_call_gates_total", map[string]string{"server": "kit", "decision": decision}); got != want {
			t.Errorf("switchboard_call_gates_total{decision=%q} = %v, want %v", decision, got, want)
		}
	}
	if got := value(fams, "switchboard_calls_total", map[string]string{"server": "kit", "tool": "kit:echo", "outcome": "ok", "code": ""}); got != 1 {
		t.Errorf("calls ok = %v, want 1 (a decision is no call)", got)
	}
}
