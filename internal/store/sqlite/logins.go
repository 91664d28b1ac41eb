package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

var _ store.LoginKeeper = (*DB)(nil)

// SavePendingLogin implements store.LoginKeeper.
func (db *DB) SavePendingLogin(ctx context.Context, l store.PendingLogin) error {
	if _, err := db.write.ExecContext(ctx, `INSERT INTO pending_logins (id, server, caller, expires_at, redirect)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET server = excluded.server, caller = excluded.caller,
			expires_at = excluded.expires_at, redirect = excluded.redirect`,
		l.ID, l.Server, l.Caller, l.Expires.UnixNano(), l.Redirect); err != nil {
		return fmt.Errorf("sqlite: save pending login: %w", err)
	}
	return nil
}

// PendingLogin implements store.LoginKeeper.
func (db *DB) PendingLogin(ctx context.Context, id string, now time.Time) (store.PendingLogin, error) {
	l, err := scanLogin(db.read.QueryRowContext(ctx, `SELECT id, server, caller, expires_at, redirect
		FROM pending_logins WHERE id = ? AND expires_at > ?`, id, now.UnixNano()))
	if err != nil {
		return l, fmt.Errorf("sqlite: pending login: %w", err)
	}
	return l, nil
}

func scanLogin(row *sql.Row) (store.PendingLogin, error) {
	var l store.PendingLogin
	var expires int64
	err := row.Scan(&l.ID, &l.Server, &l.Caller, &expires, &l.Redirect)
	if errors.Is(err, sql.ErrNoRows) {
		return l, store.ErrNotFound
	}
	l.Expires = fromNanos(expires)
	return l, err
}

// ArriveLogin implements store.LoginKeeper. It runs on the single writer:
// of two redirects, the second finds the first's.
func (db *DB) ArriveLogin(ctx context.Context, id string, redirect []byte, now time.Time) error {
	res, err := db.write.ExecContext(ctx, `UPDATE pending_logins SET redirect = ?
		WHERE id = ? AND redirect IS NULL AND expires_at > ?`, redirect, id, now.UnixNano())
	if err != nil {
		return fmt.Errorf("sqlite: arrive login: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	var arrived bool
	err = db.write.QueryRowContext(ctx, `SELECT redirect IS NOT NULL FROM pending_logins WHERE id = ? AND expires_at > ?`,
		id, now.UnixNano()).Scan(&arrived)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.ErrNotFound
	case err != nil:
		return fmt.Errorf("sqlite: arrive login: %w", err)
	}
	return store.ErrLoginArrived
}

// TakeLogin implements store.LoginKeeper.
func (db *DB) TakeLogin(ctx context.Context, id string) (store.PendingLogin, error) {
	l, err := scanLogin(db.write.QueryRowContext(ctx, `DELETE FROM pending_logins WHERE id = ? AND redirect IS NOT NULL
		RETURNING id, server, caller, expires_at, redirect`, id))
	if errors.Is(err, store.ErrNotFound) {
		l, err = scanLogin(db.write.QueryRowContext(ctx, `SELECT id, server, caller, expires_at, redirect
			FROM pending_logins WHERE id = ?`, id))
	}
	if err != nil {
		return l, fmt.Errorf("sqlite: take login: %w", err)
	}
	return l, nil
}

// DeletePendingLogin implements store.LoginKeeper.
func (db *DB) DeletePendingLogin(ctx context.Context, id string, now time.Time) error {
	if _, err := db.write.ExecContext(ctx, `DELETE FROM pending_logins WHERE id = ? OR expires_at <= ?`, id, now.UnixNano()); err != nil {
		return fmt.Errorf("sqlite: delete pending login: %w", err)
	}
	return nil
}
