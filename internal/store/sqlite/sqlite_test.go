package sqlite

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/store/storetest"
)

// openTest opens a fresh database in a temp dir, closed at cleanup.
func openTest(t testing.TB, o *Options) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "home", "state.db")
	db, err := Open(path, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db, path
}

func TestOpenCreatesPrivateFiles(t *testing.T) {
	db, path := openTest(t, nil)
	// Force a write so the WAL exists too.
	if err := db.Unpin(t.Context(), "s", "t"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{
		{filepath.Dir(path), 0o700 | os.ModeDir},
		{path, 0o600},
		{path + "-wal", 0o600},
	} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != c.mode {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode(), c.mode)
		}
	}
}

func TestOpenUsesWAL(t *testing.T) {
	db, _ := openTest(t, nil)
	for name, pool := range map[string]*sql.DB{"write": db.write, "read": db.read} {
		var mode string
		if err := pool.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		var fk, busy int
		if err := pool.QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := pool.QueryRow(`PRAGMA busy_timeout`).Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || fk != 1 || busy != int(busyTimeout.Milliseconds()) {
			t.Errorf("%s pool: journal_mode=%s foreign_keys=%d busy_timeout=%d", name, mode, fk, busy)
		}
	}
}

func TestPathNeedingEscape(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a?b%20c#d", "state.db")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveDrift(t.Context(), storetest.NewDrift("s", "t", "h")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at the given path: %v", err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveScore(t.Context(), storetest.NewScore("s", 0.5)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.Score(t.Context(), "s")
	if err != nil || s.Value != 0.5 {
		t.Errorf("after reopen: Score = %+v, %v; want 0.5", s, err)
	}
}

func TestMigrationsIdempotent(t *testing.T) {
	ms, err := loadMigrations()
	if err != nil {
		t.Fatalf("embedded migrations: %v", err)
	}
	path := filepath.Join(t.TempDir(), "state.db")
	// Sequentially, and then two handles on the file at once, as two
	// Switchboard processes sharing a home would.
	for range 2 {
		db, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	a, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	var n, newest int
	if err := a.read.QueryRow(`SELECT count(*), max(version) FROM schema_migrations`).Scan(&n, &newest); err != nil {
		t.Fatal(err)
	}
	if n != len(ms) || newest != len(ms) {
		t.Errorf("schema_migrations has %d rows up to %d, want %d", n, newest, len(ms))
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A newer binary's migration, recorded as it would record it.
	if _, err := db.write.Exec(`INSERT INTO schema_migrations (version, applied_at) VALUES (9999, 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(path, nil)
	if err == nil {
		db.Close()
		t.Fatal("Open of a database from the future succeeded")
	}
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("Open error = %v, want ErrSchemaTooNew", err)
	}
	t.Logf("error reads: %v", err)
}

func TestOpenNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(path, []byte("this is not a SQLite database, just text long enough"), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path, nil)
	if err == nil {
		db.Close()
		t.Fatal("Open of a non-database succeeded")
	}
}
