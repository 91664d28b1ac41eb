package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

func testCatalog(t *testing.T, open Opener) {
	db := open(t, Options{})
	ctx := t.Context()

	if _, err := db.Catalog(ctx, "gh"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Catalog of unsaved = %v, want ErrNotFound", err)
	}
	c1 := &store.Catalog{Server: "gh", Fingerprint: "fp1", Data: []byte(`{"tools":[]}`), SavedAt: When}
	if err := db.SaveCatalog(ctx, c1); err != nil {
		t.Fatal(err)
	}
	got, err := db.Catalog(ctx, "gh")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c1, got); diff != "" {
		t.Errorf("Catalog (-want +got):\n%s", diff)
	}

	// Saving again replaces.
	c2 := &store.Catalog{Server: "gh", Fingerprint: "fp2", Data: []byte(`{"tools":[{"name":"x"}]}`), SavedAt: When.Add(time.Hour)}
	if err := db.SaveCatalog(ctx, c2); err != nil {
		t.Fatal(err)
	}
	if got, err = db.Catalog(ctx, "gh"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c2, got); diff != "" {
		t.Errorf("Catalog after replace (-want +got):\n%s", diff)
	}

	if err := db.DeleteCatalog(ctx, "gh"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Catalog(ctx, "gh"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Catalog after delete = %v, want ErrNotFound", err)
	}
	if err := db.DeleteCatalog(ctx, "gh"); err != nil {
		t.Errorf("second DeleteCatalog = %v, want nil", err)
	}
}

func testZeroTimeUsesClock(t *testing.T, open Opener) {
	clock := NewClock()
	db := open(t, Options{Now: clock.Now})
	ctx := t.Context()

	if err := db.SaveCatalog(ctx, &store.Catalog{Server: "s"}); err != nil {
		t.Fatal(err)
	}
	c, err := db.Catalog(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if !c.SavedAt.Equal(clock.Now()) {
		t.Errorf("SavedAt = %v, want the clock's %v", c.SavedAt, clock.Now())
	}
	if len(c.Data) != 0 {
		t.Errorf("nil Data came back as %q", c.Data)
	}

	if err := db.SaveScore(ctx, store.Score{Server: "s", Value: 1}); err != nil {
		t.Fatal(err)
	}
	s, err := db.Score(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if !s.UpdatedAt.Equal(clock.Now()) {
		t.Errorf("UpdatedAt = %v, want the clock's %v", s.UpdatedAt, clock.Now())
	}
}

func testPins(t *testing.T, open Opener) {
	db := open(t, Options{})
	ctx := t.Context()

	if ps, err := db.Pins(ctx, "gh"); err != nil || len(ps) != 0 {
		t.Fatalf("Pins of empty = %v, %v", ps, err)
	}
	// Inserted out of order, and with another server's pin beside them.
	for _, p := range []store.Pin{
		NewPin("gh", "search", "h1"),
		NewPin("gh", "", "hi"), // the instructions
		NewPin("gh", "create", "h2"),
		NewPin("other", "search", "h3"),
	} {
		if err := db.Pin(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	want := []store.Pin{NewPin("gh", "", "hi"), NewPin("gh", "create", "h2"), NewPin("gh", "search", "h1")}
	got, err := db.Pins(ctx, "gh")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pins (-want +got):\n%s", diff)
	}

	// Pinning again replaces.
	if err := db.Pin(ctx, NewPin("gh", "search", "h4")); err != nil {
		t.Fatal(err)
	}
	if err := db.Unpin(ctx, "gh", "create"); err != nil {
		t.Fatal(err)
	}
	if err := db.Unpin(ctx, "gh", "never-pinned"); err != nil {
		t.Errorf("Unpin of unpinned = %v, want nil", err)
	}
	want = []store.Pin{NewPin("gh", "", "hi"), NewPin("gh", "search", "h4")}
	if got, err = db.Pins(ctx, "gh"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pins after replace and unpin (-want +got):\n%s", diff)
	}

	// Keys with control characters, and a pin of no server (the host's
	// launch pins and the mark of a store that pins launches).
	odd := []store.Pin{NewPin("", "\x1elaunch-begun", "-"), NewPin("gh", "\x1elaunch", "h5")}
	for _, p := range odd {
		if err := db.Pin(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if got, err = db.Pins(ctx, ""); err != nil || len(got) != 1 || got[0].Tool != odd[0].Tool {
		t.Errorf("Pins of no server = %v, %v; want the one pin", got, err)
	}
	if got, err = db.Pins(ctx, "gh"); err != nil || len(got) != 3 || got[1].Tool != odd[1].Tool {
		t.Errorf("Pins after a launch pin = %v, %v; want it after the instructions", got, err)
	}
}

func testDrifts(t *testing.T, open Opener) {
	db := open(t, Options{})
	ctx := t.Context()

	for _, d := range []store.Drift{
		NewDrift("zz", "b", "h1"),
		NewDrift("gh", "search", "h2"),
		NewDrift("gh", "create", "h3"),
		NewDrift("zz", "a", "h4"),
	} {
		if err := db.SaveDrift(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	// A second sighting replaces the first.
	if err := db.SaveDrift(ctx, NewDrift("gh", "search", "h5")); err != nil {
		t.Fatal(err)
	}

	got, err := db.Drifts(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Drift{
		NewDrift("gh", "create", "h3"),
		NewDrift("gh", "search", "h5"),
		NewDrift("zz", "a", "h4"),
		NewDrift("zz", "b", "h1"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Drifts(\"\") (-want +got):\n%s", diff)
	}
	if got, err = db.Drifts(ctx, "zz"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[2:], got); diff != "" {
		t.Errorf("Drifts(zz) (-want +got):\n%s", diff)
	}

	if err := db.DeleteDrift(ctx, "zz", "a"); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteDrift(ctx, "zz", "a"); err != nil {
		t.Errorf("second DeleteDrift = %v, want nil", err)
	}
	if got, err = db.Drifts(ctx, "zz"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[3:], got); diff != "" {
		t.Errorf("Drifts(zz) after delete (-want +got):\n%s", diff)
	}
}

func testPinRemovesMatchingDrift(t *testing.T, open Opener) {
	db := open(t, Options{})
	ctx := t.Context()

	for _, d := range []store.Drift{
		NewDrift("gh", "search", "new"),
		NewDrift("gh", "create", "newer"),
		NewDrift("other", "search", "new"),
	} {
		if err := db.SaveDrift(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	// Approving gh:search's drift clears it. Pinning gh:create with a hash
	// other than its drift's leaves the drift: what was approved is not
	// what is pending. Other servers' drifts are untouched.
	if err := db.Pin(ctx, NewPin("gh", "search", "new")); err != nil {
		t.Fatal(err)
	}
	if err := db.Pin(ctx, NewPin("gh", "create", "older")); err != nil {
		t.Fatal(err)
	}
	got, err := db.Drifts(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Drift{NewDrift("gh", "create", "newer"), NewDrift("other", "search", "new")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Drifts after Pin (-want +got):\n%s", diff)
	}
}

func testScore(t *testing.T, open Opener) {
	db := open(t, Options{})
	ctx := t.Context()

	if _, err := db.Score(ctx, "gh"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Score of unsaved = %v, want ErrNotFound", err)
	}
	for _, v := range []float64{0.25, -1.5} { // the second replaces the first
		want := NewScore("gh", v)
		if err := db.SaveScore(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err := db.Score(ctx, "gh")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Score (-want +got):\n%s", diff)
		}
	}
}

// testClosed: a closed store refuses writes.
func testClosed(t *testing.T, open Opener) {
	db := open(t, Options{})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveScore(t.Context(), NewScore("s", 1)); err == nil {
		t.Error("SaveScore after Close succeeded")
	}
}

// testSchedule: a start-up schedule is saved whole, replaced by the next
// save, and deleted idempotently.
func testSchedule(t *testing.T, open Opener) {
	db := open(t, Options{})
	ctx := t.Context()
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	if _, err := db.Schedule(ctx, "slow"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Schedule of unsaved = %v, want ErrNotFound", err)
	}
	first := &store.Schedule{Server: "slow", Fingerprint: "fp1", State: "backoff", Reason: "attempt 1 of 3 failed: EOF",
		Attempts: 1, Next: when.Add(time.Second), LastError: "EOF", SavedAt: when}
	second := &store.Schedule{Server: "slow", Fingerprint: "fp1", State: "failed", Reason: "gave up after 3 attempts: EOF",
		Attempts: 3, Probes: 1, Next: when.Add(30 * time.Second), LastError: "EOF", SavedAt: when}
	for _, want := range []*store.Schedule{first, second} { // the second replaces the first
		if err := db.SaveSchedule(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err := db.Schedule(ctx, "slow")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(time.Time.Equal)); diff != "" {
			t.Errorf("Schedule (-want +got):\n%s", diff)
		}
	}
	if err := db.DeleteSchedule(ctx, "slow"); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteSchedule(ctx, "slow"); err != nil {
		t.Errorf("DeleteSchedule of deleted: %v, want nil (idempotent)", err)
	}
	if _, err := db.Schedule(ctx, "slow"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Schedule after delete = %v, want ErrNotFound", err)
	}
}
