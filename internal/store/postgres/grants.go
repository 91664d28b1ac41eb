package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

var _ store.GrantKeeper = (*DB)(nil)

// Grants implements store.GrantKeeper.
func (db *DB) Grants(ctx context.Context, caller, resource string) ([]store.Grant, error) {
	rows, err := db.pool.Query(ctx, `SELECT caller, issuer, resource, client_id, sealed, subject, saved_at
		FROM caller_grants WHERE caller = $1 AND resource = $2 ORDER BY saved_at DESC, issuer, client_id`, text(caller), text(resource))
	if err != nil {
		return nil, fmt.Errorf("postgres: grants: %w", err)
	}
	return scanGrants(rows, true)
}

// GrantHolders implements store.GrantKeeper.
func (db *DB) GrantHolders(ctx context.Context, resource string) ([]store.Grant, error) {
	rows, err := db.pool.Query(ctx, `SELECT caller, issuer, resource, client_id, NULL::bytea, subject, saved_at
		FROM caller_grants WHERE resource = $1 ORDER BY caller, saved_at DESC`, text(resource))
	if err != nil {
		return nil, fmt.Errorf("postgres: grant holders: %w", err)
	}
	return scanGrants(rows, false)
}

func scanGrants(rows pgx.Rows, sealed bool) ([]store.Grant, error) {
	defer rows.Close()
	var out []store.Grant
	for rows.Next() {
		var g store.Grant
		var saved int64
		var blob []byte
		if err := rows.Scan(&g.Caller, &g.Issuer, &g.Resource, &g.ClientID, &blob, &g.Subject, &saved); err != nil {
			return nil, fmt.Errorf("postgres: grants: %w", err)
		}
		if sealed {
			g.Sealed = blob
		}
		g.SavedAt = fromNanos(saved)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: grants: %w", err)
	}
	return out, nil
}

// SaveGrant implements store.GrantKeeper.
func (db *DB) SaveGrant(ctx context.Context, g store.Grant) error {
	if _, err := db.pool.Exec(ctx, `INSERT INTO caller_grants
		(caller, issuer, resource, client_id, sealed, subject, saved_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (caller, issuer, resource, client_id) DO UPDATE SET
			sealed = excluded.sealed, subject = excluded.subject, saved_at = excluded.saved_at,
			lease_holder = '', lease_until = 0`,
		text(g.Caller), text(g.Issuer), text(g.Resource), text(g.ClientID), g.Sealed, text(g.Subject), db.stamp(g.SavedAt)); err != nil {
		return fmt.Errorf("postgres: save grant: %w", err)
	}
	return nil
}

// DeleteGrants implements store.GrantKeeper.
func (db *DB) DeleteGrants(ctx context.Context, caller, resource string) (int, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM caller_grants WHERE resource = $1 AND ($2 = '' OR caller = $2)`, text(resource), text(caller))
	if err != nil {
		return 0, fmt.Errorf("postgres: delete grants: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// LeaseGrant implements store.GrantKeeper. The UPDATE takes the row's
// lock: of two concurrent leases, the second re-reads the row the first
// wrote, and finds it taken.
func (db *DB) LeaseGrant(ctx context.Context, k store.GrantKey, saved time.Time, holder string, now, until time.Time) (bool, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE caller_grants SET lease_holder = $1, lease_until = $2
		WHERE caller = $3 AND issuer = $4 AND resource = $5 AND client_id = $6 AND saved_at = $8
			AND (lease_holder = '' OR lease_holder = $1 OR lease_until <= $7)`,
		text(holder), until.UnixNano(), text(k.Caller), text(k.Issuer), text(k.Resource), text(k.ClientID), now.UnixNano(), saved.UnixNano())
	if err != nil {
		return false, fmt.Errorf("postgres: lease grant: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}
