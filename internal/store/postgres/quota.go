package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// takeQuota admits a call in one statement, atomic against every other
// process: it opens the key's window if there is none or it has closed
// (window_start at or before $4), ending at $5, counts the call in if the
// window has room (calls below $3), and otherwise changes nothing and
// returns no row. Concurrent takes of one key queue on its row lock, and
// the WHERE is evaluated on the row as the previous one left it.
const takeQuota = `INSERT INTO quotas (key, window_start, calls, window_end) VALUES ($1, $2, 1, $5)
	ON CONFLICT (key) DO UPDATE SET
		window_start = CASE WHEN quotas.window_start <= $4 THEN $2 ELSE quotas.window_start END,
		calls        = CASE WHEN quotas.window_start <= $4 THEN 1 ELSE quotas.calls + 1 END,
		window_end   = CASE WHEN quotas.window_start <= $4 THEN $5 ELSE quotas.window_end END
	WHERE quotas.window_start <= $4 OR quotas.calls < $3
	RETURNING window_start`

// sweepQuotas deletes up to 100 windows closed at $1 (Unix nanoseconds)
// under their own length; a window without an end (opened before windows
// kept one) once it has closed under the caller's, at $2. SKIP LOCKED
// leaves rows another process is taking from, so sweeps neither wait nor
// deadlock; the take reopens a closed window itself, so one left behind is
// harmless.
const sweepQuotas = `DELETE FROM quotas WHERE key IN (
	SELECT key FROM quotas WHERE window_end <= $1 OR (window_end IS NULL AND window_start <= $2)
	LIMIT 100 FOR UPDATE SKIP LOCKED)`

// TakeQuota implements store.Store.
func (db *DB) TakeQuota(ctx context.Context, key string, q store.Quota, now time.Time) (bool, time.Duration, error) {
	if q.Calls <= 0 || q.Per <= 0 {
		return false, 0, fmt.Errorf("postgres: take quota of %q: %d calls per %v is not a quota", key, q.Calls, q.Per)
	}
	n := now.UnixNano()
	closed := n - int64(q.Per) // a window that opened at or before this has closed
	if _, err := db.pool.Exec(ctx, sweepQuotas, n, closed); err != nil {
		return false, 0, fmt.Errorf("postgres: take quota of %q: %w", key, err)
	}
	// A refused take reads the window to say when it closes. If that
	// window has meanwhile been swept (it closed in between), the take is
	// tried again; the second try opens a new window.
	for range 3 {
		var start int64
		err := db.pool.QueryRow(ctx, takeQuota, key, n, q.Calls, closed, n+int64(q.Per)).Scan(&start)
		if err == nil {
			return true, 0, nil
		}
		if !notFound(err) {
			return false, 0, fmt.Errorf("postgres: take quota of %q: %w", key, err)
		}
		err = db.pool.QueryRow(ctx, `SELECT window_start FROM quotas WHERE key = $1`, key).Scan(&start)
		if err == nil {
			return false, store.RetryAfter(q, start, n), nil
		}
		if !notFound(err) {
			return false, 0, fmt.Errorf("postgres: take quota of %q: %w", key, err)
		}
	}
	return false, 0, fmt.Errorf("postgres: take quota of %q: its window kept closing under the take", key)
}
