package ui_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestCallsOutcomeFilter: the recent calls' outcome filter finds a failed
// call behind more than a page of successful ones.
func TestCallsOutcomeFilter(t *testing.T) {
	p := newPage(t)
	p.login(t)
	ctx := context.Background()
	p.host.Call(ctx, "demo__add", json.RawMessage(`{"a":"one","b":2}`), nil) // fails: a is not a number
	for range 60 {
		if _, err := p.host.Call(ctx, "demo__echo", json.RawMessage(`{"text":"hi"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	want := `<td class="tool">demo:add</td>`
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := p.get(t, "/ui?calls_outcome=tool_error")
		if strings.Contains(body, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the failed call is not among the recent calls filtered by outcome:\n%s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
