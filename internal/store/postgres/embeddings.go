package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Embeddings implements store.Store.
func (db *DB) Embeddings(ctx context.Context, model string, hashes []string) ([]store.Embedding, error) {
	if len(hashes) == 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx,
		`SELECT hash, vector, saved_at FROM embeddings WHERE model = $1 AND hash = ANY($2) ORDER BY hash`, text(model), texts(hashes))
	if err != nil {
		return nil, fmt.Errorf("postgres: embeddings of %q: %w", model, err)
	}
	defer rows.Close()
	var out []store.Embedding
	for rows.Next() {
		e := store.Embedding{Model: model}
		var saved int64
		if err := rows.Scan(&e.Hash, &e.Vector, &saved); err != nil {
			return nil, fmt.Errorf("postgres: embeddings of %q: %w", model, err)
		}
		e.SavedAt = fromNanos(saved)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: embeddings of %q: %w", model, err)
	}
	return out, nil
}

// SaveEmbeddings implements store.Store, in one batch.
func (db *DB) SaveEmbeddings(ctx context.Context, es ...store.Embedding) error {
	if len(es) == 0 {
		return nil
	}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var b pgx.Batch
		for _, e := range es {
			b.Queue(`INSERT INTO embeddings (model, hash, vector, saved_at) VALUES ($1, $2, $3, $4)
				ON CONFLICT (model, hash) DO UPDATE SET vector = excluded.vector, saved_at = excluded.saved_at`,
				text(e.Model), text(e.Hash), blob(e.Vector), db.stamp(e.SavedAt))
		}
		return tx.SendBatch(ctx, &b).Close()
	})
	if err != nil {
		return fmt.Errorf("postgres: save %d embeddings: %w", len(es), err)
	}
	return nil
}

// texts is text of each of ss.
func texts(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = text(s)
	}
	return out
}
