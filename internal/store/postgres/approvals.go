package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

const approvalColumns = `id, key, tool, server, caller, flow, client_name, profile, args_hash, args, reason, detail, state,
	created_at, expires_at, decided_by, decided_at, used_at`

// SaveApproval implements store.Store. Approvals past their retention are
// swept in the same transaction.
func (db *DB) SaveApproval(ctx context.Context, a *store.Approval) error {
	now := db.now()
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM approvals WHERE expires_at < $1`, now.Add(-store.ApprovalRetention).UnixNano()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO approvals (`+approvalColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
			text(a.ID), text(a.Key), text(a.Tool), text(a.Server), text(a.Caller), text(a.Flow), text(a.ClientName), text(a.Profile),
			text(a.ArgsHash), blob(a.Args), text(a.Reason), text(a.Detail), text(a.State),
			db.stamp(a.CreatedAt), a.ExpiresAt.UnixNano(), text(a.DecidedBy), nanos(a.DecidedAt), nanos(a.UsedAt))
		return err
	})
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok && pe.Code == "23505" && pe.ConstraintName == "approvals_pending" {
		return fmt.Errorf("postgres: save approval %q: %w: a call with this key is held already", a.ID, store.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("postgres: save approval %q: %w", a.ID, err)
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

func fromNanosOrZero(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return fromNanos(n)
}

func scanApproval(r pgx.Row) (*store.Approval, error) {
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
	a, err := scanApproval(db.pool.QueryRow(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = $1`, text(id)))
	if notFound(err) {
		return nil, fmt.Errorf("postgres: approval %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: approval %q: %w", id, err)
	}
	return a, nil
}

// Approvals implements store.Store.
func (db *DB) Approvals(ctx context.Context, f store.ApprovalFilter) ([]store.Approval, error) {
	var where []string
	var args []any
	if f.Key != "" {
		args = append(args, text(f.Key))
		where = append(where, "key = $"+strconv.Itoa(len(args)))
	}
	if f.State != "" {
		args = append(args, text(f.State))
		where = append(where, "state = $"+strconv.Itoa(len(args)))
	}
	q := `SELECT ` + approvalColumns + ` FROM approvals`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = store.DefaultCallLimit
	}
	args = append(args, limit)
	q += " ORDER BY created_at DESC, id DESC LIMIT $" + strconv.Itoa(len(args))
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: approvals: %w", err)
	}
	defer rows.Close()
	var out []store.Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: approvals: %w", err)
		}
		out = append(out, *a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: approvals: %w", err)
	}
	return out, nil
}

// MoveApproval implements store.Store: the row is locked (SELECT ... FOR
// UPDATE) while its state is checked and changed, so that of two
// processes moving it at once, the second sees the first's state.
func (db *DB) MoveApproval(ctx context.Context, id, from, to, by string, at time.Time) (*store.Approval, error) {
	var a *store.Approval
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		a, err = scanApproval(tx.QueryRow(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = $1 FOR UPDATE`, text(id)))
		if notFound(err) {
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
			_, err = tx.Exec(ctx, `UPDATE approvals SET state = $1, decided_by = $2, decided_at = $3, expires_at = $4 WHERE id = $5`,
				text(to), text(by), stamp, expires, text(id))
			a.DecidedBy, a.DecidedAt, a.ExpiresAt = by, fromNanos(stamp), fromNanos(expires)
		case store.ApprovalUsed:
			_, err = tx.Exec(ctx, `UPDATE approvals SET state = $1, used_at = $2 WHERE id = $3`, text(to), stamp, text(id))
			a.UsedAt = fromNanos(stamp)
		default:
			_, err = tx.Exec(ctx, `UPDATE approvals SET state = $1 WHERE id = $2`, text(to), text(id))
		}
		a.State = to
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: approval %q %s to %s: %w", id, from, to, err)
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
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM flow_marks WHERE time < $1`, now.Add(-store.FlowRetention).UnixNano())
		for _, m := range ms {
			b.Queue(`INSERT INTO flow_marks (flow, label, tool, time) VALUES ($1, $2, $3, $4)
				ON CONFLICT (flow, label, tool) DO NOTHING`, text(m.Flow), text(m.Label), text(m.Tool), db.stamp(m.Time))
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("postgres: mark flow %q: %w", ms[0].Flow, err)
	}
	return nil
}

// FlowMarks implements store.Store.
func (db *DB) FlowMarks(ctx context.Context, flow string) ([]store.FlowMark, error) {
	rows, err := db.pool.Query(ctx, `SELECT flow, label, tool, time FROM flow_marks WHERE flow = $1 ORDER BY time, label, tool`, text(flow))
	if err != nil {
		return nil, fmt.Errorf("postgres: flow marks %q: %w", flow, err)
	}
	defer rows.Close()
	var out []store.FlowMark
	for rows.Next() {
		var m store.FlowMark
		var t int64
		if err := rows.Scan(&m.Flow, &m.Label, &m.Tool, &t); err != nil {
			return nil, fmt.Errorf("postgres: flow marks %q: %w", flow, err)
		}
		m.Time = fromNanos(t)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: flow marks %q: %w", flow, err)
	}
	return out, nil
}
