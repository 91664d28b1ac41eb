package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// RecordCall implements store.Store. Retention runs in the same transaction
// as the insert, so the log never exceeds its bounds, and costs two index
// range deletes: in the steady state each removes at most the row or two
// that the last insert pushed out, so the work per call is O(log n).
func (db *DB) RecordCall(ctx context.Context, c *store.Call) error {
	if c == nil {
		return errors.New("sqlite: record call: nil call")
	}
	now := db.now()
	t := c.Time
	if t.IsZero() {
		t = now
	}
	var id int64
	err := inTx(ctx, db.write, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO calls
			(time, tool, server, caller, arg_shape, outcome, code, latency, bytes_in, bytes_out)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.UnixNano(), c.Tool, c.Server, c.Caller, c.ArgShape, c.Outcome, c.Code,
			int64(c.Latency), c.BytesIn, c.BytesOut)
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		// IDs only grow and are never reused (AUTOINCREMENT), and no
		// other insert can land inside this transaction, so the last
		// MaxCalls calls recorded are exactly those with
		// id > id-MaxCalls. Rows already removed by age leave gaps,
		// which only makes the log shorter.
		if db.maxCalls > 0 && id > int64(db.maxCalls) {
			if _, err := tx.ExecContext(ctx,
				`DELETE FROM calls WHERE id <= ?`, id-int64(db.maxCalls)); err != nil {
				return err
			}
		}
		if db.maxCallAge > 0 {
			if _, err := tx.ExecContext(ctx,
				`DELETE FROM calls WHERE time < ?`, now.Add(-db.maxCallAge).UnixNano()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: record call of %q: %w", c.Tool, err)
	}
	c.ID, c.Time = id, t
	return nil
}

// Calls implements store.Store.
func (db *DB) Calls(ctx context.Context, f store.CallFilter) ([]store.Call, error) {
	var where []string
	var args []any
	if f.Server != "" {
		where, args = append(where, "server = ?"), append(args, f.Server)
	}
	if f.Tool != "" {
		where, args = append(where, "tool = ?"), append(args, f.Tool)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "time >= ?"), append(args, f.Since.UnixNano())
	}
	limit := f.Limit
	if limit <= 0 {
		limit = store.DefaultCallLimit
	}
	q := `SELECT id, time, tool, server, caller, arg_shape, outcome, code, latency, bytes_in, bytes_out FROM calls`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	// id breaks ties between calls recorded in the same nanosecond (or
	// with a coarse clock), keeping the order total and stable.
	q += " ORDER BY time DESC, id DESC LIMIT ?"
	args = append(args, limit)

	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: calls: %w", err)
	}
	defer rows.Close()
	var cs []store.Call
	for rows.Next() {
		var c store.Call
		var t, latency int64
		if err := rows.Scan(&c.ID, &t, &c.Tool, &c.Server, &c.Caller, &c.ArgShape,
			&c.Outcome, &c.Code, &latency, &c.BytesIn, &c.BytesOut); err != nil {
			return nil, fmt.Errorf("sqlite: calls: %w", err)
		}
		c.Time, c.Latency = fromNanos(t), time.Duration(latency)
		cs = append(cs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: calls: %w", err)
	}
	return cs, nil
}
