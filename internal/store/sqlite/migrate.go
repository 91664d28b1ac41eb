package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"time"

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

// loadMigrations returns the embedded migrations in order.
func loadMigrations() ([]store.Migration, error) {
	return store.LoadMigrations(migrationFiles, "migrations")
}

// migrate applies the migrations that db lacks, each in its own
// transaction together with its schema_migrations row, so a failure leaves
// the database at the last complete version. It refuses a database that has
// a version it does not know.
func migrate(ctx context.Context, db *sql.DB, file string, now func() time.Time) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", file, err)
	}

	var newest int
	if err := db.QueryRowContext(ctx,
		`SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&newest); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", file, err)
	}
	if newest > len(ms) {
		return fmt.Errorf("sqlite: open %s: %w: it has migration %d, this binary knows up to %d; use a newer Switchboard or move the file aside",
			file, ErrSchemaTooNew, newest, len(ms))
	}

	for _, m := range ms {
		// Checked inside the transaction too: BEGIN IMMEDIATE takes the
		// write lock, so another process migrating the same file at the
		// same time either finished this version already or waits.
		err := inTx(ctx, db, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx,
				`SELECT count(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx,
				`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
				m.Version, now().UnixNano())
			return err
		})
		if err != nil {
			return fmt.Errorf("sqlite: migrate %s to %s: %w", file, m.Name, err)
		}
	}
	return nil
}
