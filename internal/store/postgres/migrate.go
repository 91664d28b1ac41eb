package postgres

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// ErrSchemaTooNew is wrapped by Open's error when the database records a
// migration this binary does not have (store.ErrSchemaTooNew).
var ErrSchemaTooNew = store.ErrSchemaTooNew

// migrationFiles holds the schema history. A migration, once released, is
// never edited: a change is a new file with the next number.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the advisory lock key that serialises migrations of one
// database: every Switchboard takes the same one ("switchbd" in ASCII).
const migrationLock int64 = 0x7377_6974_6368_6264

// loadMigrations returns the embedded migrations in order.
func loadMigrations() ([]store.Migration, error) {
	return store.LoadMigrations(migrationFiles, "migrations")
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
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migrate to %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`,
				m.Version, now().UnixNano()); err != nil {
				return fmt.Errorf("migrate to %s: %w", m.Name, err)
			}
		}
		return nil
	})
}
