package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// next returns the next notice on ch, failing t after a few seconds.
func next(t *testing.T, ch <-chan store.Change) store.Change {
	t.Helper()
	select {
	case c, ok := <-ch:
		if !ok {
			t.Fatal("the change feed closed")
		}
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no notice within 5s")
	}
	return store.Change{}
}

// TestNotify: every write of pins or drifts by one process notifies
// TopicPins, with the server as payload, to a listener in another; Notify
// reaches it on its own topic; topics not listened to do not.
func TestNotify(t *testing.T) {
	url := pgtest.URL(t)
	a, b := openTest(t, url, nil), openTest(t, url, nil)
	ch, err := a.Listen(t.Context(), store.TopicPins, store.TopicConfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	writes := []struct {
		name  string
		write func() error
		want  store.Change
	}{
		{"pin", func() error { return b.Pin(ctx, store.Pin{Server: "s1", Tool: "t", Hash: "h"}) }, store.Change{Topic: store.TopicPins, Payload: "s1"}},
		{"save drift", func() error { return b.SaveDrift(ctx, store.Drift{Server: "s2", Tool: "t", Hash: "h2"}) }, store.Change{Topic: store.TopicPins, Payload: "s2"}},
		{"delete drift", func() error { return b.DeleteDrift(ctx, "s3", "t") }, store.Change{Topic: store.TopicPins, Payload: "s3"}},
		{"unpin", func() error { return b.Unpin(ctx, "s4", "t") }, store.Change{Topic: store.TopicPins, Payload: "s4"}},
		{"other topic", func() error { return b.Notify(ctx, "switchboard_other", "x") }, store.Change{}},
		{"config", func() error { return b.Notify(ctx, store.TopicConfig, "replica-b") }, store.Change{Topic: store.TopicConfig, Payload: "replica-b"}},
	}
	for _, w := range writes {
		if err := w.write(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if w.want == (store.Change{}) {
			continue // the next notice must be the next write's
		}
		if diff := cmp.Diff(w.want, next(t, ch)); diff != "" {
			t.Errorf("%s: notice (-want +got):\n%s", w.name, diff)
		}
	}
}

// TestListenReconnects: a listener whose connection the server kills
// connects again, says that it may have missed notices, and hears the
// next ones; cancelling its ctx closes the channel.
func TestListenReconnects(t *testing.T) {
	url := pgtest.URL(t)
	a, b := openTest(t, url, nil), openTest(t, url, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ch, err := a.Listen(ctx, store.TopicConfig)
	if err != nil {
		t.Fatal(err)
	}
	var killed int
	if err := b.pool.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %'`).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d listening backends (%v), want 1", killed, err)
	}
	if c := next(t, ch); !c.Missed {
		t.Fatalf("first notice after the connection was killed: %+v, want Missed", c)
	}
	if err := b.Notify(t.Context(), store.TopicConfig, "after"); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c != (store.Change{Topic: store.TopicConfig, Payload: "after"}) {
		t.Errorf("notice after reconnecting: %+v", c)
	}
	cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Error("a notice after cancel")
		}
	case <-time.After(5 * time.Second):
		t.Error("the channel was not closed within 5s of cancel")
	}
}
