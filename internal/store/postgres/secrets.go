package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Secret implements store.Store. Of concurrent first calls, in any
// process, one insert is kept: the others' wait for it and do nothing, and
// the read that follows (a statement of its own, so a snapshot taken after
// the insert) returns it to all.
func (db *DB) Secret(ctx context.Context, name string) ([]byte, error) {
	if _, err := db.pool.Exec(ctx, `INSERT INTO secrets (name, value, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO NOTHING`, text(name), store.NewSecret(), db.stamp(time.Time{})); err != nil {
		return nil, fmt.Errorf("postgres: secret %q: %w", name, err)
	}
	var value []byte
	if err := db.pool.QueryRow(ctx, `SELECT value FROM secrets WHERE name = $1`, text(name)).Scan(&value); err != nil {
		return nil, fmt.Errorf("postgres: secret %q: %w", name, err)
	}
	return value, nil
}
