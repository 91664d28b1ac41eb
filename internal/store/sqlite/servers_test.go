package sqlite

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// when is a fixed time with nanoseconds, to show they survive storage.
var when = time.Date(2026, 3, 4, 5, 6, 7, 890123456, time.UTC)

func testPin(server, tool, hash string) store.Pin {
	return store.Pin{Server: server, Tool: tool, Hash: hash,
		Definition: []byte(`{"name":"` + tool + `","hash":"` + hash + `"}`), ApprovedAt: when}
}

func testDrift(server, tool, hash string) store.Drift {
	return store.Drift{Server: server, Tool: tool, Hash: hash,
		Definition: []byte(`{"name":"` + tool + `","hash":"` + hash + `"}`), SeenAt: when}
}

func testScore(server string, v float64) store.Score {
	return store.Score{Server: server, Value: v, UpdatedAt: when}
}

func TestCatalog(t *testing.T) {
	db, _ := openTest(t, nil)
	ctx := t.Context()

	if _, err := db.Catalog(ctx, "gh"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Catalog of unsaved = %v, want ErrNotFound", err)
	}
	c1 := &store.Catalog{Server: "gh", Fingerprint: "fp1", Data: []byte(`{"tools":[]}`), SavedAt: when}
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
	c2 := &store.Catalog{Server: "gh", Fingerprint: "fp2", Data: []byte(`{"tools":[{"name":"x"}]}`), SavedAt: when.Add(time.Hour)}
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

func TestZeroTimeUsesClock(t *testing.T) {
	clock := newFakeClock()
	db, _ := openTest(t, &Options{Now: clock.Now})
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

func TestPins(t *testing.T) {
	db, _ := openTest(t, nil)
	ctx := t.Context()

	if ps, err := db.Pins(ctx, "gh"); err != nil || len(ps) != 0 {
		t.Fatalf("Pins of empty = %v, %v", ps, err)
	}
	// Inserted out of order, and with another server's pin beside them.
	for _, p := range []store.Pin{
		testPin("gh", "search", "h1"),
		testPin("gh", "", "hi"), // the instructions
		testPin("gh", "create", "h2"),
		testPin("other", "search", "h3"),
	} {
		if err := db.Pin(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	want := []store.Pin{testPin("gh", "", "hi"), testPin("gh", "create", "h2"), testPin("gh", "search", "h1")}
	got, err := db.Pins(ctx, "gh")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pins (-want +got):\n%s", diff)
	}

	// Pinning again replaces.
	if err := db.Pin(ctx, testPin("gh", "search", "h4")); err != nil {
		t.Fatal(err)
	}
	if err := db.Unpin(ctx, "gh", "create"); err != nil {
		t.Fatal(err)
	}
	if err := db.Unpin(ctx, "gh", "never-pinned"); err != nil {
		t.Errorf("Unpin of unpinned = %v, want nil", err)
	}
	want = []store.Pin{testPin("gh", "", "hi"), testPin("gh", "search", "h4")}
	if got, err = db.Pins(ctx, "gh"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pins after replace and unpin (-want +got):\n%s", diff)
	}
}

func TestDrifts(t *testing.T) {
	db, _ := openTest(t, nil)
	ctx := t.Context()

	for _, d := range []store.Drift{
		testDrift("zz", "b", "h1"),
		testDrift("gh", "search", "h2"),
		testDrift("gh", "create", "h3"),
		testDrift("zz", "a", "h4"),
	} {
		if err := db.SaveDrift(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	// A second sighting replaces the first.
	if err := db.SaveDrift(ctx, testDrift("gh", "search", "h5")); err != nil {
		t.Fatal(err)
	}

	got, err := db.Drifts(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Drift{
		testDrift("gh", "create", "h3"),
		testDrift("gh", "search", "h5"),
		testDrift("zz", "a", "h4"),
		testDrift("zz", "b", "h1"),
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

func TestPinRemovesMatchingDrift(t *testing.T) {
	db, _ := openTest(t, nil)
	ctx := t.Context()

	for _, d := range []store.Drift{
		testDrift("gh", "search", "new"),
		testDrift("gh", "create", "newer"),
		testDrift("other", "search", "new"),
	} {
		if err := db.SaveDrift(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	// Approving gh:search's drift clears it. Pinning gh:create with a hash
	// other than its drift's leaves the drift: what was approved is not
	// what is pending. Other servers' drifts are untouched.
	if err := db.Pin(ctx, testPin("gh", "search", "new")); err != nil {
		t.Fatal(err)
	}
	if err := db.Pin(ctx, testPin("gh", "create", "older")); err != nil {
		t.Fatal(err)
	}
	got, err := db.Drifts(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Drift{testDrift("gh", "create", "newer"), testDrift("other", "search", "new")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Drifts after Pin (-want +got):\n%s", diff)
	}
}

func TestScore(t *testing.T) {
	db, _ := openTest(t, nil)
	ctx := t.Context()

	if _, err := db.Score(ctx, "gh"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Score of unsaved = %v, want ErrNotFound", err)
	}
	for _, v := range []float64{0.25, -1.5} { // the second replaces the first
		want := testScore("gh", v)
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

func TestClosed(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveScore(t.Context(), testScore("s", 1)); err == nil {
		t.Error("SaveScore after Close succeeded")
	}
}

func TestSchedule(t *testing.T) {
	db, path := openTest(t, nil)
	ctx := t.Context()

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
	// It outlives the process: a reopened file has it.
	again, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := again.Schedule(ctx, "slow")
	again.Close()
	if err != nil || !got.Next.Equal(second.Next) {
		t.Fatalf("Schedule after reopening = %+v, %v; want next %v", got, err, second.Next)
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
