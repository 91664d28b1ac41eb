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

// RecordCalls implements store.Store. The rows go in one transaction, and
// retention runs in it too, after the inserts, so the log never exceeds
// its bounds. Retention costs two index range deletes per batch: in the
// steady state each removes about as many rows as the batch added, so the
// work per call is O(log n), and the transaction's fixed cost (most of
// the cost of one row alone) is shared by the whole batch.
func (db *DB) RecordCalls(ctx context.Context, cs ...*store.Call) error {
	if len(cs) == 0 {
		return nil
	}
	for _, c := range cs {
		if c == nil {
			return errors.New("sqlite: record calls: nil call")
		}
	}
	now := db.now()
	ids := make([]int64, len(cs))
	err := inTx(ctx, db.write, func(tx *sql.Tx) error {
		ins, err := tx.PrepareContext(ctx, `INSERT INTO calls
			(time, tool, server, caller, client_name, profile, arg_shape, outcome, code, latency, bytes_in, bytes_out, secrets, approval, run, upstream_as, caller_grant)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for i, c := range cs {
			res, err := ins.ExecContext(ctx, callTime(c, now).UnixNano(), c.Tool, c.Server, c.Caller, c.ClientName, c.Profile, c.ArgShape,
				c.Outcome, c.Code, int64(c.Latency), c.BytesIn, c.BytesOut, c.Secrets, c.Approval, c.Run, c.As, c.Grant)
			if err != nil {
				return err
			}
			if ids[i], err = res.LastInsertId(); err != nil {
				return err
			}
		}
		// IDs only grow and are never reused (AUTOINCREMENT), and no
		// other insert can land inside this transaction, so the last
		// MaxCalls calls recorded are exactly those with
		// id > last-MaxCalls. Rows already removed by age leave gaps,
		// which only makes the log shorter.
		last := ids[len(ids)-1]
		if db.maxCalls > 0 && last > int64(db.maxCalls) {
			if _, err := tx.ExecContext(ctx,
				`DELETE FROM calls WHERE id <= ?`, last-int64(db.maxCalls)); err != nil {
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
		return fmt.Errorf("sqlite: record %d calls (first %q): %w", len(cs), cs[0].Tool, err)
	}
	for i, c := range cs {
		c.ID, c.Time = ids[i], callTime(c, now)
	}
	return nil
}

// callTime is the time a call is recorded at: its own, or now.
func callTime(c *store.Call, now time.Time) time.Time {
	if c.Time.IsZero() {
		return now
	}
	return c.Time
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
	if f.Caller != "" {
		where, args = append(where, "caller = ?"), append(args, f.Caller)
	}
	if f.Outcome != "" {
		where, args = append(where, "outcome = ?"), append(args, f.Outcome)
	}
	if f.Run != "" {
		where, args = append(where, "run = ?"), append(args, f.Run)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "time >= ?"), append(args, f.Since.UnixNano())
	}
	limit := f.Limit
	if limit <= 0 {
		limit = store.DefaultCallLimit
	}
	q := `SELECT id, time, tool, server, caller, client_name, profile, arg_shape, outcome, code, latency, bytes_in, bytes_out, secrets, approval, run, upstream_as, caller_grant FROM calls`
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
		if err := rows.Scan(&c.ID, &t, &c.Tool, &c.Server, &c.Caller, &c.ClientName, &c.Profile, &c.ArgShape,
			&c.Outcome, &c.Code, &latency, &c.BytesIn, &c.BytesOut, &c.Secrets, &c.Approval, &c.Run, &c.As, &c.Grant); err != nil {
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
