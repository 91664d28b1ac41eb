package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Secret implements store.Store. It runs on the single writer, whose
// BEGIN IMMEDIATE also holds off another process sharing the file, so the
// insert and the read see one outcome.
func (db *DB) Secret(ctx context.Context, name string) ([]byte, error) {
	var value []byte
	err := inTx(ctx, db.write, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO secrets (name, value, created_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO NOTHING`, name, store.NewSecret(), db.stamp(time.Time{})); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT value FROM secrets WHERE name = ?`, name).Scan(&value)
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: secret %q: %w", name, err)
	}
	return value, nil
}
