package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// recorder keeps what a host tells its observer.
type recorder struct {
	mu     sync.Mutex
	calls  []host.CallRecord
	events []host.ServerEvent
}

func (r *recorder) call(c host.CallRecord) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

func (r *recorder) event(e host.ServerEvent) {
	if e.Kind == host.EventSandbox {
		return // each start's sandbox: see sandbox_test.go
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) kinds() []host.EventKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []host.EventKind
	for _, e := range r.events {
		out = append(out, e.Kind)
	}
	return out
}

// TestOnCall: every call, finished or refused (by Call, or by its caller
// through Resolve), reaches OnCall once with
// its outcome and code; a name that matched no tool is not catalogued
// (and has no server), whatever it says; no argument data is in it.
func TestOnCall(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg := parse(t, map[string]any{"kit": child(t, testkit.ModeServer, map[string]any{"eager": true})}, nil)
	h := openWith(t, cfg, &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, OnCall: rec.call, OnEvent: rec.event})
	ctx := context.Background()
	h.Call(ctx, "kit__echo", json.RawMessage(`{"text":"secret"}`), &host.CallOptions{Client: "c1"})
	h.Call(ctx, "kit__fail", nil, nil)
	h.Call(ctx, "kit__invented_by_a_client", nil, nil)
	h.Call(ctx, "kit__echo", json.RawMessage(`[1]`), nil)
	h.Call(ctx, host.ListPrompts, json.RawMessage(`{}`), nil)
	refusal := fault.New(fault.CodeNotFound, "", "", errors.New("not given to the model"))
	// A caller known by its session alone is recorded without it, as
	// the name its client gave itself; a verified one by its identity.
	host.Refused(ctx, h.View(host.Caller{Session: "s2", ClientName: "Claude\u0007 Code"}), "kit__echo", nil, refusal)
	host.Refused(ctx, h.View(host.Caller{Session: "s3", Subject: "sub:ann", ClientName: "cursor"}), "kit__echo", nil, refusal)
	host.Refused(ctx, h.View(host.Caller{}), "kit__invented_too", nil, refusal)
	// Resolve records what it refuses, and nothing of what it finds.
	if _, err := h.View(host.Caller{}).Resolve(ctx, "kit__echo", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.View(host.Caller{Client: "ci"}).Resolve(ctx, "kit__invented_three", json.RawMessage(`{}`)); fault.CodeOf(err) != fault.CodeNotFound {
		t.Fatalf("Resolve of a name nothing has: %v, want not_found", err)
	}
	want := []host.CallRecord{
		{Client: "c1", Server: "kit", Tool: "kit:echo", Catalogued: true, Outcome: host.OutcomeOK, BytesIn: 17},
		{Server: "kit", Tool: "kit:fail", Catalogued: true, Outcome: host.OutcomeToolError},
		{Tool: "kit__invented_by_a_client", Outcome: host.OutcomeError, Code: "not_found"},
		{Server: "kit", Tool: "kit:echo", Catalogued: true, Outcome: host.OutcomeError, Code: "invalid_input", BytesIn: 3},
		{Tool: host.ListPrompts, Catalogued: true, Outcome: host.OutcomeOK, BytesIn: 2},
		{ClientName: "Claude Code", Server: "kit", Tool: "kit:echo", Catalogued: true, Outcome: host.OutcomeError, Code: "not_found"},
		{Client: "sub:ann", ClientName: "cursor", Server: "kit", Tool: "kit:echo", Catalogued: true, Outcome: host.OutcomeError, Code: "not_found"},
		{Tool: "kit__invented_too", Outcome: host.OutcomeError, Code: "not_found"},
		{Client: "ci", Tool: "kit__invented_three", Outcome: host.OutcomeError, Code: "not_found", BytesIn: 2},
	}
	ignore := cmpopts.IgnoreFields(host.CallRecord{}, "Start", "Latency", "BytesOut")
	if diff := cmp.Diff(want, rec.calls, ignore); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	for _, c := range rec.calls {
		if c.Start.IsZero() || c.Latency < 0 {
			t.Errorf("record without a start or with a negative latency: %+v", c)
		}
	}
	if rec.calls[0].BytesOut == 0 {
		t.Errorf("an answered call has no BytesOut: %+v", rec.calls[0])
	}
}

// TestOnEvent: a server whose process ends mid-call is an exit with its
// status; the next call restarts it.
func TestOnEvent(t *testing.T) {
	t.Parallel()
	h, rec := crashed(t)
	call(t, h, "kit__echo", `{"text":"again"}`)
	if diff := cmp.Diff([]host.EventKind{host.EventExited, host.EventRestarted}, rec.kinds()); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if ev := rec.events[0]; ev.Server != "kit" || ev.Status != "exit status 7" || ev.Err == nil {
		t.Errorf("exit event %+v, want server kit, status \"exit status 7\" and an error", ev)
	}
}

// TestOnEventBackoffAndRelist: a server that cannot start is a backoff
// (or, with no attempt left, failed) event; a server that says its tools
// changed is listed again, a relisted event.
func TestOnEventBackoffAndRelist(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	cfg := parse(t, map[string]any{
		"kit":    child(t, testkit.ModeServer, map[string]any{"eager": true}),
		"broken": child(t, testkit.ModeExit, nil),
	}, nil)
	h := openWith(t, cfg, &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, OnEvent: rec.event})
	call(t, h, "kit__grow", `{}`)
	has := func(server string, kinds ...host.EventKind) bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return slices.ContainsFunc(rec.events, func(e host.ServerEvent) bool {
			return e.Server == server && slices.Contains(kinds, e.Kind)
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for !(has("broken", host.EventBackoff, host.EventFailed) && has("kit", host.EventRelisted)) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !has("broken", host.EventBackoff, host.EventFailed) {
		t.Errorf("no backoff event for the server that cannot start: %v", rec.kinds())
	}
	if !has("kit", host.EventRelisted) {
		t.Errorf("no relisted event after list_changed: %v", rec.kinds())
	}
}
