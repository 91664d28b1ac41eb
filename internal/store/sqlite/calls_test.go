package sqlite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/storetest"
)

// TestStore holds the SQLite store to the behaviour every store has.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, o storetest.Options) store.Store {
		db, _ := openTest(t, &Options{Now: o.Now, MaxCalls: o.MaxCalls, MaxCallAge: o.MaxCallAge})
		return db
	})
}

// BenchmarkRecordCalls measures audited calls at steady state, one by one
// and in batches as the host's writer makes them: the log is full, so
// every insert also retires the oldest row. ns/op is per call.
func BenchmarkRecordCalls(b *testing.B) {
	for _, n := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) { benchRecordCalls(b, n) })
	}
}

func benchRecordCalls(b *testing.B, n int) {
	db, _ := openTest(b, &Options{MaxCalls: 1000})
	ctx := context.Background()
	batch := make([]*store.Call, n)
	for i := range batch {
		batch[i] = storetest.NewCall("gh", "search", time.Time{})
	}
	record := func() {
		for _, c := range batch {
			c.Time = time.Time{}
		}
		if err := db.RecordCalls(ctx, batch...); err != nil {
			b.Fatal(err)
		}
	}
	for range 1000/n + 1 {
		record()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i += n {
		record()
	}
}
