package host

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
)

// TestAuditLog: rows queued before close are all written; a row recorded
// after close (a call that ends while the Host closes) is dropped, without
// a panic; close may be called twice.
func TestAuditLog(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := newAuditLog(st, slog.New(slog.DiscardHandler))
	start := time.Now()
	const rows = 100
	for i := range rows {
		a.record(&store.Call{Time: start, Tool: fmt.Sprintf("s:t%d", i), Server: "s", Outcome: outcomeOK})
	}
	a.close()
	a.record(&store.Call{Time: start, Tool: "s:late", Server: "s", Outcome: outcomeOK})
	a.close()
	got, err := st.Calls(context.Background(), store.CallFilter{Server: "s", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != rows {
		t.Errorf("%d rows written, want %d", len(got), rows)
	}
	for _, c := range got {
		if c.Tool == "s:late" {
			t.Error("a row recorded after close was written")
		}
	}
	var none *auditLog // a Host without a store
	none.record(&store.Call{})
	none.close()
}
