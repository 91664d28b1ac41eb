package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Catalog implements store.Store.
func (db *DB) Catalog(ctx context.Context, server string) (*store.Catalog, error) {
	c := &store.Catalog{Server: server}
	var saved int64
	err := db.read.QueryRowContext(ctx,
		`SELECT fingerprint, data, saved_at FROM catalogs WHERE server = ?`, server,
	).Scan(&c.Fingerprint, &c.Data, &saved)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: catalog of %q: %w", server, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: catalog of %q: %w", server, err)
	}
	c.SavedAt = fromNanos(saved)
	return c, nil
}

// SaveCatalog implements store.Store.
func (db *DB) SaveCatalog(ctx context.Context, c *store.Catalog) error {
	if c == nil {
		return errors.New("sqlite: save catalog: nil catalog")
	}
	_, err := db.write.ExecContext(ctx,
		`INSERT OR REPLACE INTO catalogs (server, fingerprint, data, saved_at) VALUES (?, ?, ?, ?)`,
		c.Server, c.Fingerprint, blob(c.Data), db.stamp(c.SavedAt))
	if err != nil {
		return fmt.Errorf("sqlite: save catalog of %q: %w", c.Server, err)
	}
	return nil
}

// DeleteCatalog implements store.Store.
func (db *DB) DeleteCatalog(ctx context.Context, server string) error {
	if _, err := db.write.ExecContext(ctx, `DELETE FROM catalogs WHERE server = ?`, server); err != nil {
		return fmt.Errorf("sqlite: delete catalog of %q: %w", server, err)
	}
	return nil
}

// Pins implements store.Store.
func (db *DB) Pins(ctx context.Context, server string) ([]store.Pin, error) {
	rows, err := db.read.QueryContext(ctx,
		`SELECT tool, hash, definition, approved_at FROM pins WHERE server = ? ORDER BY tool`, server)
	if err != nil {
		return nil, fmt.Errorf("sqlite: pins of %q: %w", server, err)
	}
	defer rows.Close()
	var ps []store.Pin
	for rows.Next() {
		p := store.Pin{Server: server}
		var approved int64
		if err := rows.Scan(&p.Tool, &p.Hash, &p.Definition, &approved); err != nil {
			return nil, fmt.Errorf("sqlite: pins of %q: %w", server, err)
		}
		p.ApprovedAt = fromNanos(approved)
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: pins of %q: %w", server, err)
	}
	return ps, nil
}

// Pin implements store.Store.
func (db *DB) Pin(ctx context.Context, p store.Pin) error {
	err := inTx(ctx, db.write, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx,
			`INSERT OR REPLACE INTO pins (server, tool, hash, definition, approved_at) VALUES (?, ?, ?, ?, ?)`,
			p.Server, p.Tool, p.Hash, blob(p.Definition), db.stamp(p.ApprovedAt)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx,
			`DELETE FROM drifts WHERE server = ? AND tool = ? AND hash = ?`, p.Server, p.Tool, p.Hash)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: pin %q tool %q: %w", p.Server, p.Tool, err)
	}
	return nil
}

// Unpin implements store.Store.
func (db *DB) Unpin(ctx context.Context, server, tool string) error {
	if _, err := db.write.ExecContext(ctx,
		`DELETE FROM pins WHERE server = ? AND tool = ?`, server, tool); err != nil {
		return fmt.Errorf("sqlite: unpin %q tool %q: %w", server, tool, err)
	}
	return nil
}

// Drifts implements store.Store.
func (db *DB) Drifts(ctx context.Context, server string) ([]store.Drift, error) {
	q, args := `SELECT server, tool, hash, definition, seen_at FROM drifts ORDER BY server, tool`, []any(nil)
	if server != "" {
		q, args = `SELECT server, tool, hash, definition, seen_at FROM drifts WHERE server = ? ORDER BY tool`, []any{server}
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: drifts of %q: %w", server, err)
	}
	defer rows.Close()
	var ds []store.Drift
	for rows.Next() {
		var d store.Drift
		var seen int64
		if err := rows.Scan(&d.Server, &d.Tool, &d.Hash, &d.Definition, &seen); err != nil {
			return nil, fmt.Errorf("sqlite: drifts of %q: %w", server, err)
		}
		d.SeenAt = fromNanos(seen)
		ds = append(ds, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: drifts of %q: %w", server, err)
	}
	return ds, nil
}

// SaveDrift implements store.Store.
func (db *DB) SaveDrift(ctx context.Context, d store.Drift) error {
	if _, err := db.write.ExecContext(ctx,
		`INSERT OR REPLACE INTO drifts (server, tool, hash, definition, seen_at) VALUES (?, ?, ?, ?, ?)`,
		d.Server, d.Tool, d.Hash, blob(d.Definition), db.stamp(d.SeenAt)); err != nil {
		return fmt.Errorf("sqlite: save drift %q tool %q: %w", d.Server, d.Tool, err)
	}
	return nil
}

// DeleteDrift implements store.Store.
func (db *DB) DeleteDrift(ctx context.Context, server, tool string) error {
	if _, err := db.write.ExecContext(ctx,
		`DELETE FROM drifts WHERE server = ? AND tool = ?`, server, tool); err != nil {
		return fmt.Errorf("sqlite: delete drift %q tool %q: %w", server, tool, err)
	}
	return nil
}

// Score implements store.Store.
func (db *DB) Score(ctx context.Context, server string) (store.Score, error) {
	s := store.Score{Server: server}
	var updated int64
	err := db.read.QueryRowContext(ctx,
		`SELECT value, updated_at FROM scores WHERE server = ?`, server,
	).Scan(&s.Value, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Score{}, fmt.Errorf("sqlite: score of %q: %w", server, store.ErrNotFound)
	}
	if err != nil {
		return store.Score{}, fmt.Errorf("sqlite: score of %q: %w", server, err)
	}
	s.UpdatedAt = fromNanos(updated)
	return s, nil
}

// SaveScore implements store.Store.
func (db *DB) SaveScore(ctx context.Context, s store.Score) error {
	if _, err := db.write.ExecContext(ctx,
		`INSERT OR REPLACE INTO scores (server, value, updated_at) VALUES (?, ?, ?)`,
		s.Server, s.Value, db.stamp(s.UpdatedAt)); err != nil {
		return fmt.Errorf("sqlite: save score of %q: %w", s.Server, err)
	}
	return nil
}
