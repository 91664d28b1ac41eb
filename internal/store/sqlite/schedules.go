package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Schedule implements store.Store.
func (db *DB) Schedule(ctx context.Context, server string) (*store.Schedule, error) {
	s := &store.Schedule{Server: server}
	var next, saved int64
	err := db.read.QueryRowContext(ctx,
		`SELECT fingerprint, state, reason, attempts, probes, next, last_error, saved_at FROM schedules WHERE server = ?`, server,
	).Scan(&s.Fingerprint, &s.State, &s.Reason, &s.Attempts, &s.Probes, &next, &s.LastError, &saved)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: schedule of %q: %w", server, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: schedule of %q: %w", server, err)
	}
	s.Next, s.SavedAt = fromNanos(next), fromNanos(saved)
	return s, nil
}

// SaveSchedule implements store.Store.
func (db *DB) SaveSchedule(ctx context.Context, s *store.Schedule) error {
	if s == nil {
		return errors.New("sqlite: save schedule: nil schedule")
	}
	_, err := db.write.ExecContext(ctx,
		`INSERT OR REPLACE INTO schedules (server, fingerprint, state, reason, attempts, probes, next, last_error, saved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.Server, s.Fingerprint, s.State, s.Reason, s.Attempts, s.Probes, s.Next.UnixNano(), s.LastError, db.stamp(s.SavedAt))
	if err != nil {
		return fmt.Errorf("sqlite: save schedule of %q: %w", s.Server, err)
	}
	return nil
}

// DeleteSchedule implements store.Store.
func (db *DB) DeleteSchedule(ctx context.Context, server string) error {
	if _, err := db.write.ExecContext(ctx, `DELETE FROM schedules WHERE server = ?`, server); err != nil {
		return fmt.Errorf("sqlite: delete schedule of %q: %w", server, err)
	}
	return nil
}
