package pgtest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestURL: each call gives a database of its own, reachable and empty.
func TestURL(t *testing.T) {
	a, b := URL(t), URL(t)
	if a == b {
		t.Fatalf("two calls gave the same database %s", a)
	}
	ctx := t.Context()
	for _, u := range []string{a, b} {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		var db string
		var tables int
		if err := conn.QueryRow(ctx, `SELECT current_database(),
			(SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public')`).Scan(&db, &tables); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
		if tables != 0 {
			t.Errorf("%s has %d tables, want a fresh database", db, tables)
		}
	}
	// A table made in one is not in the other.
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE only_in_a (x int)`); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	var n int
	if err := other.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name = 'only_in_a'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("only_in_a seen from the other database: %d, %v", n, err)
	}
}

// recorder is a testing.TB that records how a test ended instead of ending.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

// TestUnavailable: without PostgreSQL a test is skipped with the reason,
// or failed when PostgreSQL is required.
func TestUnavailable(t *testing.T) {
	for _, tt := range []struct {
		require              string
		wantSkip, wantFailed bool
	}{{"", true, false}, {"0", true, false}, {"1", false, true}} {
		t.Run("require="+tt.require, func(t *testing.T) {
			t.Setenv(RequireVar, tt.require)
			r := &recorder{TB: t}
			unavailable(r, "initdb not found")
			if (r.skipped != "") != tt.wantSkip || (r.failed != "") != tt.wantFailed {
				t.Fatalf("skipped %q, failed %q; want skip %v, fail %v", r.skipped, r.failed, tt.wantSkip, tt.wantFailed)
			}
			if msg := r.skipped + r.failed; !strings.Contains(msg, "initdb not found") {
				t.Errorf("message %q does not say why", msg)
			}
		})
	}
}
