package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// RecordCalls implements store.Store. The rows go in one transaction and
// one round trip (a pipelined batch), and retention runs in it too, after
// the inserts: two index range deletes, by ID for the count and by time
// for the age. IDs come from one sequence shared by every process, so
// "older than the last MaxCalls inserted" is id <= last-MaxCalls whoever
// inserted them.
func (db *DB) RecordCalls(ctx context.Context, cs ...*store.Call) error {
	if len(cs) == 0 {
		return nil
	}
	for _, c := range cs {
		if c == nil {
			return errors.New("postgres: record calls: nil call")
		}
	}
	now := db.now()
	ids := make([]int64, len(cs))
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, c := range cs {
			b.Queue(`INSERT INTO calls
				(time, tool, server, caller, client_name, profile, arg_shape, outcome, code, latency, bytes_in, bytes_out, secrets, approval, run, upstream_as, caller_grant)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING id`,
				callTime(c, now).UnixNano(), text(c.Tool), text(c.Server), text(c.Caller), text(c.ClientName), text(c.Profile), text(c.ArgShape),
				text(c.Outcome), text(c.Code), int64(c.Latency), c.BytesIn, c.BytesOut, text(c.Secrets), text(c.Approval), text(c.Run), text(c.As), text(c.Grant))
		}
		if db.maxCallAge > 0 {
			b.Queue(`DELETE FROM calls WHERE time < $1`, now.Add(-db.maxCallAge).UnixNano())
		}
		br := tx.SendBatch(ctx, b)
		for i := range cs {
			if err := br.QueryRow().Scan(&ids[i]); err != nil {
				br.Close()
				return err
			}
		}
		if err := br.Close(); err != nil {
			return err
		}
		last := ids[len(ids)-1]
		if db.maxCalls > 0 && last > int64(db.maxCalls) {
			if _, err := tx.Exec(ctx, `DELETE FROM calls WHERE id <= $1`, last-int64(db.maxCalls)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: record %d calls (first %q): %w", len(cs), cs[0].Tool, err)
	}
	for i, c := range cs {
		c.ID, c.Time = ids[i], callTime(c, now)
	}
	return nil
}

// text makes s storable in a TEXT column, which refuses NUL and invalid
// UTF-8, so that one odd caller or tool name cannot lose a whole batch of
// audit rows: each such byte becomes U+FFFD.
func text(s string) string {
	if utf8.ValidString(s) && !strings.Contains(s, "\x00") {
		return s
	}
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD")
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
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.Server != "" {
		where = append(where, "server = "+arg(f.Server))
	}
	if f.Tool != "" {
		where = append(where, "tool = "+arg(f.Tool))
	}
	if f.Caller != "" {
		where = append(where, "caller = "+arg(f.Caller))
	}
	if f.Outcome != "" {
		where = append(where, "outcome = "+arg(f.Outcome))
	}
	if f.Run != "" {
		where = append(where, "run = "+arg(f.Run))
	}
	if !f.Since.IsZero() {
		where = append(where, "time >= "+arg(f.Since.UnixNano()))
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
	q += " ORDER BY time DESC, id DESC LIMIT " + arg(limit)

	rows, _ := db.pool.Query(ctx, q, args...)
	cs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Call, error) {
		var c store.Call
		var t, latency int64
		err := row.Scan(&c.ID, &t, &c.Tool, &c.Server, &c.Caller, &c.ClientName, &c.Profile, &c.ArgShape,
			&c.Outcome, &c.Code, &latency, &c.BytesIn, &c.BytesOut, &c.Secrets, &c.Approval, &c.Run, &c.As, &c.Grant)
		c.Time, c.Latency = fromNanos(t), time.Duration(latency)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: calls: %w", err)
	}
	return nilIfEmpty(cs), nil
}
