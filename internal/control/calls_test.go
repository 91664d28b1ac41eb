package control_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// TestCallsByOutcome: the control API's outcome filter is the store's, so
// a failed call older than the newest LIMIT calls is still found.
func TestCallsByOutcome(t *testing.T) {
	srv, h := api(t)
	ctx := context.Background()
	h.Call(ctx, "demo__add", json.RawMessage(`{"a":"one","b":2}`), nil) // fails: a is not a number
	for range 3 {
		if _, err := h.Call(ctx, "demo__echo", json.RawMessage(`{"text":"hi"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	c := control.NewClient(srv.URL, "")
	deadline := time.Now().Add(10 * time.Second)
	var failed store.Call
	for {
		all, err := c.Calls(ctx, store.CallFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) == 4 {
			failed = all[3] // newest first
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls recorded, want 4: %+v", len(all), all)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if failed.Outcome == "ok" || failed.Tool != "demo:add" {
		t.Fatalf("the oldest call %+v, want the failed one", failed)
	}
	got, err := c.Calls(ctx, store.CallFilter{Outcome: failed.Outcome, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != failed.ID {
		t.Errorf("Calls(outcome %s, limit 1) = %+v, want the failed call", failed.Outcome, got)
	}
}
