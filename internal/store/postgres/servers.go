package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Catalog implements store.Store.
func (db *DB) Catalog(ctx context.Context, server string) (*store.Catalog, error) {
	c := &store.Catalog{Server: server}
	var saved int64
	err := db.pool.QueryRow(ctx,
		`SELECT fingerprint, data, saved_at FROM catalogs WHERE server = $1`, server,
	).Scan(&c.Fingerprint, &c.Data, &saved)
	if notFound(err) {
		return nil, fmt.Errorf("postgres: catalog of %q: %w", server, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: catalog of %q: %w", server, err)
	}
	c.SavedAt = fromNanos(saved)
	return c, nil
}

// SaveCatalog implements store.Store.
func (db *DB) SaveCatalog(ctx context.Context, c *store.Catalog) error {
	if c == nil {
		return errors.New("postgres: save catalog: nil catalog")
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO catalogs (server, fingerprint, data, saved_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (server) DO UPDATE SET fingerprint = excluded.fingerprint, data = excluded.data, saved_at = excluded.saved_at`,
		c.Server, c.Fingerprint, blob(c.Data), db.stamp(c.SavedAt))
	if err != nil {
		return fmt.Errorf("postgres: save catalog of %q: %w", c.Server, err)
	}
	return nil
}

// DeleteCatalog implements store.Store.
func (db *DB) DeleteCatalog(ctx context.Context, server string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM catalogs WHERE server = $1`, server); err != nil {
		return fmt.Errorf("postgres: delete catalog of %q: %w", server, err)
	}
	return nil
}

// Pins implements store.Store.
func (db *DB) Pins(ctx context.Context, server string) ([]store.Pin, error) {
	rows, _ := db.pool.Query(ctx,
		`SELECT tool, hash, definition, approved_at FROM pins WHERE server = $1 ORDER BY tool`, server)
	ps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Pin, error) {
		p := store.Pin{Server: server}
		var approved int64
		err := row.Scan(&p.Tool, &p.Hash, &p.Definition, &approved)
		p.ApprovedAt = fromNanos(approved)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: pins of %q: %w", server, err)
	}
	return nilIfEmpty(ps), nil
}

// Pin implements store.Store.
func (db *DB) Pin(ctx context.Context, p store.Pin) error {
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO pins (server, tool, hash, definition, approved_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (server, tool) DO UPDATE SET hash = excluded.hash, definition = excluded.definition, approved_at = excluded.approved_at`,
			p.Server, p.Tool, p.Hash, blob(p.Definition), db.stamp(p.ApprovedAt)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx,
			`DELETE FROM drifts WHERE server = $1 AND tool = $2 AND hash = $3`, p.Server, p.Tool, p.Hash); err != nil {
			return err
		}
		return notifyPins(ctx, tx, p.Server)
	})
	if err != nil {
		return fmt.Errorf("postgres: pin %q tool %q: %w", p.Server, p.Tool, err)
	}
	return nil
}

// Unpin implements store.Store.
func (db *DB) Unpin(ctx context.Context, server, tool string) error {
	if err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM pins WHERE server = $1 AND tool = $2`, server, tool); err != nil {
			return err
		}
		return notifyPins(ctx, tx, server)
	}); err != nil {
		return fmt.Errorf("postgres: unpin %q tool %q: %w", server, tool, err)
	}
	return nil
}

// Drifts implements store.Store.
func (db *DB) Drifts(ctx context.Context, server string) ([]store.Drift, error) {
	q, args := `SELECT server, tool, hash, definition, seen_at FROM drifts ORDER BY server, tool`, []any(nil)
	if server != "" {
		q, args = `SELECT server, tool, hash, definition, seen_at FROM drifts WHERE server = $1 ORDER BY tool`, []any{server}
	}
	rows, _ := db.pool.Query(ctx, q, args...)
	ds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Drift, error) {
		var d store.Drift
		var seen int64
		err := row.Scan(&d.Server, &d.Tool, &d.Hash, &d.Definition, &seen)
		d.SeenAt = fromNanos(seen)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: drifts of %q: %w", server, err)
	}
	return nilIfEmpty(ds), nil
}

// SaveDrift implements store.Store.
func (db *DB) SaveDrift(ctx context.Context, d store.Drift) error {
	if err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO drifts (server, tool, hash, definition, seen_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (server, tool) DO UPDATE SET hash = excluded.hash, definition = excluded.definition, seen_at = excluded.seen_at`,
			d.Server, d.Tool, d.Hash, blob(d.Definition), db.stamp(d.SeenAt)); err != nil {
			return err
		}
		return notifyPins(ctx, tx, d.Server)
	}); err != nil {
		return fmt.Errorf("postgres: save drift %q tool %q: %w", d.Server, d.Tool, err)
	}
	return nil
}

// DeleteDrift implements store.Store.
func (db *DB) DeleteDrift(ctx context.Context, server, tool string) error {
	if err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM drifts WHERE server = $1 AND tool = $2`, server, tool); err != nil {
			return err
		}
		return notifyPins(ctx, tx, server)
	}); err != nil {
		return fmt.Errorf("postgres: delete drift %q tool %q: %w", server, tool, err)
	}
	return nil
}

// Score implements store.Store.
func (db *DB) Score(ctx context.Context, server string) (store.Score, error) {
	s := store.Score{Server: server}
	var updated int64
	err := db.pool.QueryRow(ctx,
		`SELECT value, updated_at FROM scores WHERE server = $1`, server,
	).Scan(&s.Value, &updated)
	if notFound(err) {
		return store.Score{}, fmt.Errorf("postgres: score of %q: %w", server, store.ErrNotFound)
	}
	if err != nil {
		return store.Score{}, fmt.Errorf("postgres: score of %q: %w", server, err)
	}
	s.UpdatedAt = fromNanos(updated)
	return s, nil
}

// SaveScore implements store.Store.
func (db *DB) SaveScore(ctx context.Context, s store.Score) error {
	if _, err := db.pool.Exec(ctx, `INSERT INTO scores (server, value, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (server) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		s.Server, s.Value, db.stamp(s.UpdatedAt)); err != nil {
		return fmt.Errorf("postgres: save score of %q: %w", s.Server, err)
	}
	return nil
}

// nilIfEmpty returns nil for an empty slice: pgx.CollectRows returns an
// empty one, SQLite's store nil, and callers compare results with either.
func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
