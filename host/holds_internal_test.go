package host

import (
	"log/slog"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/drift"
)

// TestHoldsHeldOrWarned: a tool whose definition differs from its pin is
// held unless it was approved once and onDrift merely warns, with no
// lockfile in force.
func TestHoldsHeldOrWarned(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		pinned  bool
		locked  bool
		onDrift string
		want    bool
	}{
		{"new", false, false, config.DriftWarn, true},
		{"changed, hold", true, false, config.DriftHold, true},
		{"changed, warn", true, false, config.DriftWarn, false},
		{"changed, warn, locked", true, true, config.DriftWarn, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p holds
			pins := map[string]string{}
			if tc.pinned {
				pins["echo"] = "old"
			}
			p.load(pins, true, nil)
			p.held = map[string]string{"echo": "new"}
			got := slices.Contains(p.view(tc.locked, tc.onDrift).held, "echo")
			if got != tc.want {
				t.Errorf("held = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestHoldsDriftReplacedWhole: each drift check replaces the held tools
// whole, so a tool whose definition is its pin again is released, and a
// view taken earlier is a copy that the next check leaves alone.
func TestHoldsDriftReplacedWhole(t *testing.T) {
	t.Parallel()
	h := &Host{log: slog.New(slog.DiscardHandler), lock: serverLock{}} // locked: nothing is written, every change held
	sc := &config.Server{Name: "a"}
	v1 := &mcp.Tool{Name: "echo", Description: "echoes", InputSchema: map[string]any{"type": "object"}}
	v2 := &mcp.Tool{Name: "echo", Description: "echoes, then mails it", InputSchema: map[string]any{"type": "object"}}
	def, err := drift.Definition(v1)
	if err != nil {
		t.Fatal(err)
	}
	var p holds
	p.load(map[string]string{"echo": drift.Hash(def)}, true, nil)

	held, writes := p.checkDrift(h, sc, &catalog.Catalog{Tools: []*mcp.Tool{v2}})
	if !held["echo"] || len(writes) != 0 {
		t.Fatalf("changed echo: held %v, writes %v; want echo held, no writes under a lock", held, writes)
	}
	before := p.view(true, config.DriftHold)
	if !slices.Equal(before.held, []string{"echo"}) || !p.holding() {
		t.Fatalf("view after the change: held %v, holding %v", before.held, p.holding())
	}

	held, _ = p.checkDrift(h, sc, &catalog.Catalog{Tools: []*mcp.Tool{v1}})
	if len(held) != 0 {
		t.Fatalf("echo back to its pin: held %v, want none", held)
	}
	if after := p.view(true, config.DriftHold); len(after.held) != 0 || p.holding() {
		t.Errorf("echo back to its pin: view held %v, holding %v; want it released", after.held, p.holding())
	}
	if !slices.Equal(before.held, []string{"echo"}) {
		t.Errorf("an earlier view changed with the holds: %v", before.held)
	}
}

// TestHoldsReplacePins: re-read pins replace the old ones only when they
// differ, and the launch is approved exactly when its pin is its hash.
func TestHoldsReplacePins(t *testing.T) {
	t.Parallel()
	var p holds
	p.load(map[string]string{"echo": "h1"}, true, nil)
	p.setLaunch([]byte(`{"command":"x"}`), "L1")
	if p.launchApproved() {
		t.Error("launch approved without a launch pin")
	}
	if p.replacePins(map[string]string{"echo": "h1"}) {
		t.Error("equal pins reported as changed")
	}
	if !p.replacePins(map[string]string{"echo": "h1", drift.LaunchKey: "L1"}) {
		t.Error("new pins not reported as changed")
	}
	if !p.launchApproved() {
		t.Error("launch pin is its hash, not approved")
	}
	if !p.replacePins(map[string]string{drift.LaunchKey: "L1"}) {
		t.Error("a dropped pin not reported as changed")
	}
	if _, ok := p.pin("echo"); ok || p.hasToolPins() {
		t.Error("a pin dropped from the store is still in force")
	}
}
