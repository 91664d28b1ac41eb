package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// embeddingChunk is how many hashes one query asks for: well below
// SQLite's bound on the parameters of a statement.
const embeddingChunk = 500

// Embeddings implements store.Store.
func (db *DB) Embeddings(ctx context.Context, model string, hashes []string) ([]store.Embedding, error) {
	var out []store.Embedding
	for chunk := range slices.Chunk(hashes, embeddingChunk) {
		args := make([]any, 0, len(chunk)+1)
		args = append(args, model)
		for _, h := range chunk {
			args = append(args, h)
		}
		q := `SELECT hash, vector, saved_at FROM embeddings WHERE model = ? AND hash IN (?` + strings.Repeat(", ?", len(chunk)-1) + `)`
		rows, err := db.read.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("sqlite: embeddings of %q: %w", model, err)
		}
		for rows.Next() {
			e := store.Embedding{Model: model}
			var saved int64
			if err := rows.Scan(&e.Hash, &e.Vector, &saved); err != nil {
				rows.Close()
				return nil, fmt.Errorf("sqlite: embeddings of %q: %w", model, err)
			}
			e.SavedAt = fromNanos(saved)
			out = append(out, e)
		}
		if err := rows.Close(); err != nil {
			return nil, fmt.Errorf("sqlite: embeddings of %q: %w", model, err)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("sqlite: embeddings of %q: %w", model, err)
		}
	}
	slices.SortFunc(out, func(a, b store.Embedding) int { return strings.Compare(a.Hash, b.Hash) })
	out = slices.CompactFunc(out, func(a, b store.Embedding) bool { return a.Hash == b.Hash }) // a hash asked for twice
	return out, nil
}

// SaveEmbeddings implements store.Store.
func (db *DB) SaveEmbeddings(ctx context.Context, es ...store.Embedding) error {
	if len(es) == 0 {
		return nil
	}
	err := inTx(ctx, db.write, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO embeddings (model, hash, vector, saved_at) VALUES (?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, e := range es {
			if _, err := st.ExecContext(ctx, e.Model, e.Hash, blob(e.Vector), db.stamp(e.SavedAt)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: save %d embeddings: %w", len(es), err)
	}
	return nil
}
