package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// takeQuota admits a call: it opens the key's window if there is none or
// it has closed (window_start at or before ?4), ending at ?5, counts the
// call in if the window has room (calls below ?3), and otherwise changes
// nothing and returns no row. The SET expressions all read the row as it
// was.
const takeQuota = `INSERT INTO quotas (key, window_start, calls, window_end) VALUES (?1, ?2, 1, ?5)
	ON CONFLICT (key) DO UPDATE SET
		window_start = CASE WHEN window_start <= ?4 THEN ?2 ELSE window_start END,
		calls        = CASE WHEN window_start <= ?4 THEN 1 ELSE calls + 1 END,
		window_end   = CASE WHEN window_start <= ?4 THEN ?5 ELSE window_end END
	WHERE window_start <= ?4 OR calls < ?3
	RETURNING window_start`

// sweepQuotas deletes the windows closed at ?1 (Unix nanoseconds) under
// their own length; a window without an end (opened before windows kept
// one) once it has closed under the caller's, at ?2.
const sweepQuotas = `DELETE FROM quotas WHERE window_end <= ?1 OR (window_end IS NULL AND window_start <= ?2)`

// TakeQuota implements store.Store. It runs on the single writer, so the
// windows it reads cannot change under it; closed windows are swept in the
// same transaction.
func (db *DB) TakeQuota(ctx context.Context, key string, q store.Quota, now time.Time) (bool, time.Duration, error) {
	if q.Calls <= 0 || q.Per <= 0 {
		return false, 0, fmt.Errorf("sqlite: take quota of %q: %d calls per %v is not a quota", key, q.Calls, q.Per)
	}
	n := now.UnixNano()
	closed := n - int64(q.Per) // a window that opened at or before this has closed
	var ok bool
	var start int64
	err := inTx(ctx, db.write, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, sweepQuotas, n, closed); err != nil {
			return err
		}
		err := tx.QueryRowContext(ctx, takeQuota, key, n, q.Calls, closed, n+int64(q.Per)).Scan(&start)
		if errors.Is(err, sql.ErrNoRows) {
			return tx.QueryRowContext(ctx, `SELECT window_start FROM quotas WHERE key = ?`, key).Scan(&start)
		}
		ok = err == nil
		return err
	})
	if err != nil {
		return false, 0, fmt.Errorf("sqlite: take quota of %q: %w", key, err)
	}
	if ok {
		return true, 0, nil
	}
	return false, store.RetryAfter(q, start, n), nil
}
