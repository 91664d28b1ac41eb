package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

var _ store.GrantKeeper = (*DB)(nil)

// Grants implements store.GrantKeeper.
func (db *DB) Grants(ctx context.Context, caller, resource string) ([]store.Grant, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT caller, issuer, resource, client_id, sealed, subject, saved_at
		FROM caller_grants WHERE caller = ? AND resource = ? ORDER BY saved_at DESC, issuer, client_id`, caller, resource)
	if err != nil {
		return nil, fmt.Errorf("sqlite: grants: %w", err)
	}
	return scanGrants(rows, true)
}

// GrantHolders implements store.GrantKeeper.
func (db *DB) GrantHolders(ctx context.Context, resource string) ([]store.Grant, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT caller, issuer, resource, client_id, NULL, subject, saved_at
		FROM caller_grants WHERE resource = ? ORDER BY caller, saved_at DESC`, resource)
	if err != nil {
		return nil, fmt.Errorf("sqlite: grant holders: %w", err)
	}
	return scanGrants(rows, false)
}

func scanGrants(rows *sql.Rows, sealed bool) ([]store.Grant, error) {
	defer rows.Close()
	var out []store.Grant
	for rows.Next() {
		var g store.Grant
		var saved int64
		var blob []byte
		if err := rows.Scan(&g.Caller, &g.Issuer, &g.Resource, &g.ClientID, &blob, &g.Subject, &saved); err != nil {
			return nil, fmt.Errorf("sqlite: grants: %w", err)
		}
		if sealed {
			g.Sealed = blob
		}
		g.SavedAt = time.Unix(0, saved)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: grants: %w", err)
	}
	return out, nil
}

// SaveGrant implements store.GrantKeeper.
func (db *DB) SaveGrant(ctx context.Context, g store.Grant) error {
	if _, err := db.write.ExecContext(ctx, `INSERT INTO caller_grants
		(caller, issuer, resource, client_id, sealed, subject, saved_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (caller, issuer, resource, client_id) DO UPDATE SET
			sealed = excluded.sealed, subject = excluded.subject, saved_at = excluded.saved_at,
			lease_holder = '', lease_until = 0`,
		g.Caller, g.Issuer, g.Resource, g.ClientID, g.Sealed, g.Subject, db.stamp(g.SavedAt)); err != nil {
		return fmt.Errorf("sqlite: save grant: %w", err)
	}
	return nil
}

// DeleteGrants implements store.GrantKeeper.
func (db *DB) DeleteGrants(ctx context.Context, caller, resource string) (int, error) {
	res, err := db.write.ExecContext(ctx, `DELETE FROM caller_grants WHERE resource = ? AND (? = '' OR caller = ?)`, resource, caller, caller)
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete grants: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// LeaseGrant implements store.GrantKeeper. It runs on the single writer,
// so two leases cannot both see the grant free.
func (db *DB) LeaseGrant(ctx context.Context, k store.GrantKey, saved time.Time, holder string, now, until time.Time) (bool, error) {
	res, err := db.write.ExecContext(ctx, `UPDATE caller_grants SET lease_holder = ?, lease_until = ?
		WHERE caller = ? AND issuer = ? AND resource = ? AND client_id = ? AND saved_at = ?
			AND (lease_holder = '' OR lease_holder = ? OR lease_until <= ?)`,
		holder, until.UnixNano(), k.Caller, k.Issuer, k.Resource, k.ClientID, saved.UnixNano(), holder, now.UnixNano())
	if err != nil {
		return false, fmt.Errorf("sqlite: lease grant: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
