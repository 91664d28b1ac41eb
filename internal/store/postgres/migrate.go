package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrSchemaTooNew is wrapped by Open's error when the database records a
// migration this binary does not have: a newer Switchboard wrote it, and
// this one would misread it.
var ErrSchemaTooNew = errors.New("database schema is newer than this Switchboard")

// migrationFiles holds the schema history. A migration, once released, is
// never edited: a change is a new file with the next number.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the advisory lock key that serialises migrations of one
// database: every Switchboard takes the same one ("switchbd" in ASCII).
const migrationLock int64 = 0x7377_6974_6368_6264

type migration struct {
	version int
	name    string
	sql     string
}

var migrationName = regexp.MustCompile(`^(\d{4})_[a-z0-9_]+\.sql$`)

// loadMigrations returns the embedded migrations in order, checking that
// they are numbered 1, 2, 3... with no gap or duplicate, so that "applied up
// to N" means exactly the first N files.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries { // ReadDir sorts by name, so by number
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration %s: name is not NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		if v != len(ms)+1 {
			return nil, fmt.Errorf("migration %s: want version %d", e.Name(), len(ms)+1)
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	return ms, nil
}

// migrate applies the migrations that the database lacks, and records
// each in schema_migrations, all in one transaction that first takes the
// advisory lock migrationLock: a second process migrating at the same time
// waits for the first to commit, then finds nothing left to do. PostgreSQL's
// DDL is transactional, so a failure leaves the database as it was. It
// refuses a database that has a version it does not know.
func migrate(ctx context.Context, pool *pgxpool.Pool, now func() time.Time) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return fmt.Errorf("take the migration lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER NOT NULL PRIMARY KEY,
			applied_at BIGINT  NOT NULL
		)`); err != nil {
			return err
		}
		var newest int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&newest); err != nil {
			return err
		}
		if newest > len(ms) {
			return fmt.Errorf("%w: it has migration %d, this binary knows up to %d; use a newer Switchboard",
				ErrSchemaTooNew, newest, len(ms))
		}
		for _, m := range ms[newest:] {
			// Without arguments pgx sends the file as one simple query,
			// which may hold several statements.
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migrate to %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`,
				m.version, now().UnixNano()); err != nil {
				return fmt.Errorf("migrate to %s: %w", m.name, err)
			}
		}
		return nil
	})
}
