package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestDefaultStoreHoldsAndApproves: a program that names no store gets
// the embedded one in its state directory, so manual approval takes
// effect: the tool is held and refused, Held shows it with its
// definition, Approve makes it callable at once, and Audit reads both
// calls back.
func TestDefaultStoreHoldsAndApproves(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := parse(t, map[string]any{"s": child(t, testkit.ModeServer, map[string]any{"approval": "manual"})}, nil)
	h := openWith(t, cfg, &host.Options{StopTimeout: 500 * time.Millisecond, StateDir: dir})
	if _, err := os.Stat(filepath.Join(dir, "state.db")); err != nil {
		t.Fatalf("no store in the state directory: %v", err)
	}
	ctx := context.Background()
	if _, err := h.Call(ctx, "s__echo", json.RawMessage(`{"text":"unapproved"}`), nil); !errors.Is(err, fault.DefinitionChanged) {
		t.Fatalf("call of a tool never approved: %v; want definition_changed", err)
	}
	// The held definition is written to the store just after the
	// refusal is decided.
	var held []host.Held
	var err error
	if !proc.Eventually(5*time.Second, func() bool {
		held, err = h.Held(ctx, "s:echo")
		return err == nil && len(held) == 1
	}) {
		t.Fatalf("Held(s:echo) = %+v, %v; want one", held, err)
	}
	if held[0].Target != "s:echo" || !strings.Contains(held[0].Diff, "Echo the text.") {
		t.Errorf("held = %+v; want target s:echo and its definition in the diff", held[0])
	}
	approved, err := h.Approve(ctx, "s:echo")
	if err != nil || len(approved) != 1 {
		t.Fatalf("Approve = %v, %v", approved, err)
	}
	if got := call(t, h, "s__echo", `{"text":"approved"}`).Text; got != "approved" {
		t.Fatalf("echo after approval = %q", got)
	}
	if held, _ := h.Held(ctx, "s:echo"); len(held) != 0 {
		t.Errorf("still held after approval: %+v", held)
	}
	if _, err := h.Approve(ctx, "s:echo"); fault.CodeOf(err) != fault.CodeNotFound {
		t.Errorf("Approve of nothing held: %v; want not_found", err)
	}
	var rows []host.AuditEntry
	if !proc.Eventually(5*time.Second, func() bool {
		rows, err = h.Audit(ctx, host.AuditQuery{Tool: "s:echo"})
		return err == nil && len(rows) == 2
	}) {
		t.Fatalf("Audit = %+v, %v; want two rows", rows, err)
	}
	if rows[0].Outcome != "ok" || rows[1].Code != fault.CodeDefinitionChanged {
		t.Errorf("audit rows, newest first: %+v; want ok, then definition_changed", rows)
	}
}

// TestDefaultStateDir: without StateDir the store is kept in
// Switchboard's home, as the switchboard command keeps it.
func TestDefaultStateDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SWITCHBOARD_HOME", home)
	openWith(t, parse(t, map[string]any{"s": child(t, testkit.ModeServer, nil)}, nil), &host.Options{StopTimeout: 500 * time.Millisecond})
	if _, err := os.Stat(filepath.Join(home, "state.db")); err != nil {
		t.Fatalf("no store in $SWITCHBOARD_HOME: %v", err)
	}
}

// TestEphemeralRefusesManualApproval: a host that keeps no state could
// never approve a definition, so manual approval is refused at Open and
// at Reload instead of being ignored.
func TestEphemeralRefusesManualApproval(t *testing.T) {
	t.Parallel()
	manual := parse(t, map[string]any{"s": child(t, testkit.ModeServer, map[string]any{"approval": "manual"})}, nil)
	_, err := host.Open(context.Background(), manual, &host.Options{Ephemeral: true})
	if fault.CodeOf(err) != fault.CodeInvalidInput || !strings.Contains(err.Error(), "manual") {
		t.Fatalf("Open: %v; want invalid_input naming manual approval", err)
	}
	h := open(t, parse(t, map[string]any{"s": child(t, testkit.ModeServer, nil)}, nil))
	if err := h.Reload(context.Background(), manual); fault.CodeOf(err) != fault.CodeInvalidInput {
		t.Fatalf("Reload: %v; want invalid_input", err)
	}
	if held, err := h.Held(context.Background(), ""); err != nil || len(held) != 0 {
		t.Errorf("Held on an ephemeral host = %v, %v", held, err)
	}
	if _, err := h.Approve(context.Background(), "s:echo"); fault.CodeOf(err) != fault.CodeNotFound {
		t.Errorf("Approve on an ephemeral host: %v; want not_found", err)
	}
}
