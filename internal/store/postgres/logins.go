package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

var _ store.LoginKeeper = (*DB)(nil)

// SavePendingLogin implements store.LoginKeeper.
func (db *DB) SavePendingLogin(ctx context.Context, l store.PendingLogin) error {
	if _, err := db.pool.Exec(ctx, `INSERT INTO pending_logins (id, server, caller, expires_at, redirect)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET server = excluded.server, caller = excluded.caller,
			expires_at = excluded.expires_at, redirect = excluded.redirect`,
		text(l.ID), text(l.Server), text(l.Caller), l.Expires.UnixNano(), l.Redirect); err != nil {
		return fmt.Errorf("postgres: save pending login: %w", err)
	}
	return nil
}

// PendingLogin implements store.LoginKeeper.
func (db *DB) PendingLogin(ctx context.Context, id string, now time.Time) (store.PendingLogin, error) {
	l, err := scanLogin(db.pool.QueryRow(ctx, `SELECT id, server, caller, expires_at, redirect
		FROM pending_logins WHERE id = $1 AND expires_at > $2`, text(id), now.UnixNano()))
	if err != nil {
		return l, fmt.Errorf("postgres: pending login: %w", err)
	}
	return l, nil
}

func scanLogin(row pgx.Row) (store.PendingLogin, error) {
	var l store.PendingLogin
	var expires int64
	err := row.Scan(&l.ID, &l.Server, &l.Caller, &expires, &l.Redirect)
	if errors.Is(err, pgx.ErrNoRows) {
		return l, store.ErrNotFound
	}
	l.Expires = fromNanos(expires)
	return l, err
}

// ArriveLogin implements store.LoginKeeper. The UPDATE takes the row's
// lock: of two redirects, the second re-reads the row the first wrote.
func (db *DB) ArriveLogin(ctx context.Context, id string, redirect []byte, now time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE pending_logins SET redirect = $1
		WHERE id = $2 AND redirect IS NULL AND expires_at > $3`, redirect, text(id), now.UnixNano())
	if err != nil {
		return fmt.Errorf("postgres: arrive login: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var arrived bool
	err = db.pool.QueryRow(ctx, `SELECT redirect IS NOT NULL FROM pending_logins WHERE id = $1 AND expires_at > $2`,
		text(id), now.UnixNano()).Scan(&arrived)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.ErrNotFound
	case err != nil:
		return fmt.Errorf("postgres: arrive login: %w", err)
	}
	return store.ErrLoginArrived
}

// TakeLogin implements store.LoginKeeper.
func (db *DB) TakeLogin(ctx context.Context, id string) (store.PendingLogin, error) {
	l, err := scanLogin(db.pool.QueryRow(ctx, `DELETE FROM pending_logins WHERE id = $1 AND redirect IS NOT NULL
		RETURNING id, server, caller, expires_at, redirect`, text(id)))
	if errors.Is(err, store.ErrNotFound) {
		l, err = scanLogin(db.pool.QueryRow(ctx, `SELECT id, server, caller, expires_at, redirect
			FROM pending_logins WHERE id = $1`, text(id)))
	}
	if err != nil {
		return l, fmt.Errorf("postgres: take login: %w", err)
	}
	return l, nil
}

// DeletePendingLogin implements store.LoginKeeper.
func (db *DB) DeletePendingLogin(ctx context.Context, id string, now time.Time) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM pending_logins WHERE id = $1 OR expires_at <= $2`, text(id), now.UnixNano()); err != nil {
		return fmt.Errorf("postgres: delete pending login: %w", err)
	}
	return nil
}
