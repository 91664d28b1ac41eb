package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// newApproval returns a pending approval id under key, made at When.
func newApproval(id, key string) *store.Approval {
	return &store.Approval{ID: id, Key: key, Tool: "gh:create_pull_request", Server: "gh", Caller: "claude", Flow: "session:abc",
		ClientName: "Claude", Profile: "dev", ArgsHash: "h", Args: []byte(`{"title":"x"}`), Reason: "tool", Detail: "why",
		State: store.ApprovalPending, CreatedAt: When, ExpiresAt: When.Add(10 * time.Minute)}
}

// testApprovals: an approval round-trips, is found by key and state,
// newest first, and moves between states only from the state expected,
// recording who decided and when.
func testApprovals(t *testing.T, open Opener) {
	db := open(t, Options{Now: func() time.Time { return When }})
	ctx := t.Context()
	a := newApproval("a1", "k1")
	if err := db.SaveApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := db.Approval(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("Approval round trip (-want +got):\n%s", diff)
	}
	if _, err := db.Approval(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Approval(nope) = %v, want ErrNotFound", err)
	}
	if err := db.SaveApproval(ctx, newApproval("dup", "k1")); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second pending approval of one key = %v, want ErrConflict", err)
	}
	b := newApproval("b2", "k1")
	b.CreatedAt = When.Add(time.Second)
	b.State = store.ApprovalDenied
	c := newApproval("c3", "k2")
	for _, x := range []*store.Approval{b, c} {
		if err := db.SaveApproval(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	list, err := db.Approvals(ctx, store.ApprovalFilter{Key: "k1"})
	if err != nil || len(list) != 2 || list[0].ID != "b2" || list[1].ID != "a1" {
		t.Fatalf("Approvals(k1) = %v, %v; want b2, a1", ids(list), err)
	}

	at := When.Add(time.Minute)
	moved, err := db.MoveApproval(ctx, "a1", store.ApprovalPending, store.ApprovalApproved, "ui:operator", at)
	if err != nil {
		t.Fatal(err)
	}
	if moved.State != store.ApprovalApproved || moved.DecidedBy != "ui:operator" || !moved.DecidedAt.Equal(at) || !moved.ExpiresAt.Equal(at.Add(10*time.Minute)) {
		t.Errorf("moved = %s by %q at %v, expiring %v", moved.State, moved.DecidedBy, moved.DecidedAt, moved.ExpiresAt)
	}
	if _, err := db.MoveApproval(ctx, "a1", store.ApprovalPending, store.ApprovalDenied, "cli:bob", at); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second decision = %v, want ErrConflict", err)
	}
	if _, err := db.MoveApproval(ctx, "nope", store.ApprovalPending, store.ApprovalDenied, "cli:bob", at); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("moving what is not there = %v, want ErrNotFound", err)
	}
	used, err := db.MoveApproval(ctx, "a1", store.ApprovalApproved, store.ApprovalUsed, "", at.Add(time.Second))
	if err != nil || used.State != store.ApprovalUsed || !used.UsedAt.Equal(at.Add(time.Second)) || used.DecidedBy != "ui:operator" {
		t.Fatalf("used = %+v, %v", used, err)
	}
	got, err = db.Approval(ctx, "a1")
	if err != nil || got.State != store.ApprovalUsed || got.DecidedBy != "ui:operator" || !got.DecidedAt.Equal(at) || !got.UsedAt.Equal(at.Add(time.Second)) ||
		!got.ExpiresAt.Equal(at.Add(10*time.Minute)) {
		t.Errorf("after use: %+v, %v", got, err)
	}
	pending, err := db.Approvals(ctx, store.ApprovalFilter{State: store.ApprovalPending})
	if err != nil || len(pending) != 1 || pending[0].ID != "c3" {
		t.Errorf("pending = %v, %v; want c3", ids(pending), err)
	}
	// a1 is no longer pending: its key may be held again.
	if err := db.SaveApproval(ctx, newApproval("again", "k1")); err != nil {
		t.Errorf("a new hold of a key whose hold was used: %v", err)
	}
}

// testApprovalOnce: of concurrent moves of one approval, exactly one
// succeeds: an approval is used once.
func testApprovalOnce(t *testing.T, open Opener) {
	db := open(t, Options{Now: func() time.Time { return When }})
	ctx := t.Context()
	a := newApproval("once", "k")
	a.State = store.ApprovalApproved
	if err := db.SaveApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = db.MoveApproval(ctx, "once", store.ApprovalApproved, store.ApprovalUsed, "", When)
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("MoveApproval: %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d concurrent uses succeeded, want 1", won, n)
	}
}

// testApprovalRetention: an approval long past its expiry is swept by the
// next save.
func testApprovalRetention(t *testing.T, open Opener) {
	clock := NewClock()
	db := open(t, Options{Now: clock.Now})
	ctx := t.Context()
	old := newApproval("old", "k")
	old.CreatedAt, old.ExpiresAt = clock.Now(), clock.Now().Add(time.Minute)
	if err := db.SaveApproval(ctx, old); err != nil {
		t.Fatal(err)
	}
	clock.Advance(store.ApprovalRetention + 2*time.Minute)
	fresh := newApproval("new", "k")
	fresh.CreatedAt, fresh.ExpiresAt = time.Time{}, clock.Now().Add(time.Minute)
	if err := db.SaveApproval(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Approval(ctx, "old"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an approval past its retention = %v, want ErrNotFound", err)
	}
	if got, err := db.Approval(ctx, "new"); err != nil || !got.CreatedAt.Equal(clock.Now()) {
		t.Errorf("a zero CreatedAt = %v, %v; want the store's now", got, err)
	}
}

// testFlowMarks: marks are kept per flow, once per label and tool, from
// the first time, oldest first.
func testFlowMarks(t *testing.T, open Opener) {
	clock := NewClock()
	db := open(t, Options{Now: clock.Now})
	ctx := t.Context()
	t0 := clock.Now()
	if err := db.MarkFlow(ctx, store.FlowMark{Flow: "f", Label: "private", Tool: "gh:get_file"},
		store.FlowMark{Flow: "g", Label: "untrusted", Tool: "web:fetch"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := db.MarkFlow(ctx, store.FlowMark{Flow: "f", Label: "untrusted", Tool: "gh:get_issue"},
		store.FlowMark{Flow: "f", Label: "private", Tool: "gh:get_file"}); err != nil {
		t.Fatal(err)
	}
	got, err := db.FlowMarks(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.FlowMark{{Flow: "f", Label: "private", Tool: "gh:get_file", Time: t0}, {Flow: "f", Label: "untrusted", Tool: "gh:get_issue", Time: t0.Add(time.Second)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FlowMarks (-want +got):\n%s", diff)
	}
	if none, err := db.FlowMarks(ctx, "nobody"); err != nil || len(none) != 0 {
		t.Errorf("FlowMarks of an unknown flow = %v, %v", none, err)
	}
	clock.Advance(store.FlowRetention + time.Hour)
	if err := db.MarkFlow(ctx, store.FlowMark{Flow: "h", Label: "private", Tool: "x:y"}); err != nil {
		t.Fatal(err)
	}
	if old, err := db.FlowMarks(ctx, "f"); err != nil || len(old) != 0 {
		t.Errorf("marks past their retention = %v, %v; want none", old, err)
	}
}

func ids(as []store.Approval) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.ID)
	}
	return out
}
