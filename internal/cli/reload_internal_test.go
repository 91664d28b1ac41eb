package cli

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// feedStore is a store with a change feed that behaves as
// store.Notifier says: its channel is closed when the listener's ctx ends.
type feedStore struct {
	store.Store
}

func (feedStore) Notify(context.Context, string, string) error { return nil }

func (feedStore) Listen(ctx context.Context, _ ...string) (<-chan store.Change, error) {
	ch := make(chan store.Change)
	if ctx.Err() != nil {
		close(ch) // already: the watcher sees the feed closed and ctx done at once
		return ch, nil
	}
	context.AfterFunc(ctx, func() { close(ch) })
	return ch, nil
}

// TestWatchReloadEndsWithTheFeed: when serve ends, the reload watcher
// returns, whichever of its context and the feed's closing it sees first
// (a select picks either at random, hence the repetitions).
func TestWatchReloadEndsWithTheFeed(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for i := range 50 {
		r := &server{run: &run{store: feedStore{}}, reloadAsk: make(chan chan struct{})}
		ctx, cancel := context.WithCancel(t.Context())
		if i%2 == 1 {
			cancel() // before it starts: both ready at its first select
		}
		done := make(chan struct{})
		loop := r.watchReload(ctx, log)
		go func() {
			defer close(done)
			loop()
		}()
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("repetition %d: watchReload still running 5s after its context ended", i)
		}
	}
}
