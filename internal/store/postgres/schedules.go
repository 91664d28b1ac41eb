package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Schedule implements store.Store.
func (db *DB) Schedule(ctx context.Context, server string) (*store.Schedule, error) {
	s := &store.Schedule{Server: server}
	var attempts, probes, next, saved int64
	err := db.pool.QueryRow(ctx,
		`SELECT fingerprint, state, reason, attempts, probes, next, last_error, saved_at FROM schedules WHERE server = $1`, server,
	).Scan(&s.Fingerprint, &s.State, &s.Reason, &attempts, &probes, &next, &s.LastError, &saved)
	if notFound(err) {
		return nil, fmt.Errorf("postgres: schedule of %q: %w", server, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: schedule of %q: %w", server, err)
	}
	s.Attempts, s.Probes = int(attempts), int(probes)
	s.Next, s.SavedAt = fromNanos(next), fromNanos(saved)
	return s, nil
}

// SaveSchedule implements store.Store. The reason and the last error may
// quote what a server wrote: bytes PostgreSQL refuses become U+FFFD.
func (db *DB) SaveSchedule(ctx context.Context, s *store.Schedule) error {
	if s == nil {
		return errors.New("postgres: save schedule: nil schedule")
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO schedules (server, fingerprint, state, reason, attempts, probes, next, last_error, saved_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (server) DO UPDATE SET fingerprint = excluded.fingerprint, state = excluded.state, reason = excluded.reason,
			attempts = excluded.attempts, probes = excluded.probes, next = excluded.next, last_error = excluded.last_error, saved_at = excluded.saved_at`,
		s.Server, s.Fingerprint, s.State, text(s.Reason), int64(s.Attempts), int64(s.Probes), s.Next.UnixNano(), text(s.LastError), db.stamp(s.SavedAt))
	if err != nil {
		return fmt.Errorf("postgres: save schedule of %q: %w", s.Server, err)
	}
	return nil
}

// DeleteSchedule implements store.Store.
func (db *DB) DeleteSchedule(ctx context.Context, server string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM schedules WHERE server = $1`, server); err != nil {
		return fmt.Errorf("postgres: delete schedule of %q: %w", server, err)
	}
	return nil
}
