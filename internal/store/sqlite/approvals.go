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

const approvalColumns = `id, key, tool, server, caller, flow, client_name, profile, args_hash, args, reason, detail, state,
	created_at, expires_at, decided_by, decided_at, used_at`

// SaveApproval implements store.Store. Approvals past their retention are
// swept in the same transaction.
func (db *DB) SaveApproval(ctx context.Context, a *store.Approval) error {
	now := db.now()
	err := inTx(ctx, db.write, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM approvals WHERE expires_at < ?`, now.Add(-store.ApprovalRetention).UnixNano()); err != nil {
			return err
		}
		if a.State == store.ApprovalPending {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM approvals WHERE key = ? AND state = ?`, a.Key, store.ApprovalPending).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return fmt.Errorf("%w: a call with this key is held already", store.ErrConflict)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO approvals (`+approvalColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			a.ID, a.Key, a.Tool, a.Server, a.Caller, a.Flow, a.ClientName, a.Profile, a.ArgsHash, blob(a.Args), a.Reason, a.Detail, a.State,
			db.stamp(a.CreatedAt), a.ExpiresAt.UnixNano(), a.DecidedBy, nanos(a.DecidedAt), nanos(a.UsedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: save approval %q: %w", a.ID, err)
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = now
	}
	return nil
}

// nanos is t in Unix nanoseconds, 0 for the zero time.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanosOrZero is the inverse of nanos.
func fromNanosOrZero(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return fromNanos(n)
}

type scanner interface{ Scan(...any) error }

func scanApproval(r scanner) (*store.Approval, error) {
	var a store.Approval
	var created, expires, decided, used int64
	if err := r.Scan(&a.ID, &a.Key, &a.Tool, &a.Server, &a.Caller, &a.Flow, &a.ClientName, &a.Profile, &a.ArgsHash, &a.Args,
		&a.Reason, &a.Detail, &a.State, &created, &expires, &a.DecidedBy, &decided, &used); err != nil {
		return nil, err
	}
	a.CreatedAt, a.ExpiresAt = fromNanos(created), fromNanos(expires)
	a.DecidedAt, a.UsedAt = fromNanosOrZero(decided), fromNanosOrZero(used)
	return &a, nil
}

// Approval implements store.Store.
func (db *DB) Approval(ctx context.Context, id string) (*store.Approval, error) {
	a, err := scanApproval(db.read.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: approval %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: approval %q: %w", id, err)
	}
	return a, nil
}

// Approvals implements store.Store.
func (db *DB) Approvals(ctx context.Context, f store.ApprovalFilter) ([]store.Approval, error) {
	var where []string
	var args []any
	if f.Key != "" {
		where, args = append(where, "key = ?"), append(args, f.Key)
	}
	if f.State != "" {
		where, args = append(where, "state = ?"), append(args, f.State)
	}
	q := `SELECT ` + approvalColumns + ` FROM approvals`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = store.DefaultCallLimit
	}
	q += " ORDER BY created_at DESC, id DESC LIMIT ?"
	rows, err := db.read.QueryContext(ctx, q, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: approvals: %w", err)
	}
	defer rows.Close()
	var out []store.Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: approvals: %w", err)
		}
		out = append(out, *a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: approvals: %w", err)
	}
	return out, nil
}

// MoveApproval implements store.Store, on the single writer, so that the
// state it checks cannot change before it writes.
func (db *DB) MoveApproval(ctx context.Context, id, from, to, by string, at time.Time) (*store.Approval, error) {
	var a *store.Approval
	err := inTx(ctx, db.write, func(tx *sql.Tx) error {
		var err error
		a, err = scanApproval(tx.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if a.State != from {
			return fmt.Errorf("%w: it is %s", store.ErrConflict, a.State)
		}
		stamp := db.stamp(at)
		switch to {
		case store.ApprovalApproved, store.ApprovalDenied:
			expires := stamp + a.ExpiresAt.UnixNano() - a.CreatedAt.UnixNano()
			_, err = tx.ExecContext(ctx, `UPDATE approvals SET state = ?, decided_by = ?, decided_at = ?, expires_at = ? WHERE id = ?`, to, by, stamp, expires, id)
			a.DecidedBy, a.DecidedAt, a.ExpiresAt = by, fromNanos(stamp), fromNanos(expires)
		case store.ApprovalUsed:
			_, err = tx.ExecContext(ctx, `UPDATE approvals SET state = ?, used_at = ? WHERE id = ?`, to, stamp, id)
			a.UsedAt = fromNanos(stamp)
		default:
			_, err = tx.ExecContext(ctx, `UPDATE approvals SET state = ? WHERE id = ?`, to, id)
		}
		a.State = to
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: approval %q %s to %s: %w", id, from, to, err)
	}
	return a, nil
}

// MarkFlow implements store.Store. Marks past their retention are swept
// in the same transaction.
func (db *DB) MarkFlow(ctx context.Context, ms ...store.FlowMark) error {
	if len(ms) == 0 {
		return nil
	}
	now := db.now()
	err := inTx(ctx, db.write, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM flow_marks WHERE time < ?`, now.Add(-store.FlowRetention).UnixNano()); err != nil {
			return err
		}
		for _, m := range ms {
			if _, err := tx.ExecContext(ctx, `INSERT INTO flow_marks (flow, label, tool, time) VALUES (?, ?, ?, ?)
				ON CONFLICT (flow, label, tool) DO NOTHING`, m.Flow, m.Label, m.Tool, db.stamp(m.Time)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: mark flow %q: %w", ms[0].Flow, err)
	}
	return nil
}

// FlowMarks implements store.Store.
func (db *DB) FlowMarks(ctx context.Context, flow string) ([]store.FlowMark, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT flow, label, tool, time FROM flow_marks WHERE flow = ? ORDER BY time, label, tool`, flow)
	if err != nil {
		return nil, fmt.Errorf("sqlite: flow marks %q: %w", flow, err)
	}
	defer rows.Close()
	var out []store.FlowMark
	for rows.Next() {
		var m store.FlowMark
		var t int64
		if err := rows.Scan(&m.Flow, &m.Label, &m.Tool, &t); err != nil {
			return nil, fmt.Errorf("sqlite: flow marks %q: %w", flow, err)
		}
		m.Time = fromNanos(t)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: flow marks %q: %w", flow, err)
	}
	return out, nil
}
