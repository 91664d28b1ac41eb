package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

var (
	_ store.Notifier = (*DB)(nil)
	_ store.Pinger   = (*DB)(nil)
)

// Ping implements store.Pinger.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: %s: %w", db.where, err)
	}
	return nil
}

// Notify implements store.Notifier with pg_notify: the notice is
// delivered to the listeners when the statement's transaction commits.
func (db *DB) Notify(ctx context.Context, topic, payload string) error {
	if _, err := db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, topic, payload); err != nil {
		return fmt.Errorf("postgres: notify %q: %w", topic, err)
	}
	return nil
}

// notifyPins tells the listeners of store.TopicPins that the pins or
// drifts of server changed, when tx commits.
func notifyPins(ctx context.Context, tx pgx.Tx, server string) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, store.TopicPins, server)
	return err
}

// The listener's reconnection backoff: it starts at listenBackoffMin and
// doubles up to listenBackoffMax while the database stays unreachable.
const (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
)

// Listen implements store.Notifier with LISTEN on a connection of its own,
// outside the pool (a pooled connection would carry the LISTEN to other
// queries and lose it when recycled). A goroutine owns the connection and
// ends, closing the channel, when ctx ends.
func (db *DB) Listen(ctx context.Context, topics ...string) (<-chan store.Change, error) {
	conn, err := db.listen(ctx, topics)
	if err != nil {
		return nil, err
	}
	ch := make(chan store.Change)
	go func() {
		defer close(ch)
		backoff := listenBackoffMin
		for {
			if conn != nil {
				backoff = listenBackoffMin
				relay(ctx, conn, ch) // returns when the connection is lost or ctx ends
				conn.Close(context.Background())
				conn = nil
				if ctx.Err() != nil {
					return
				}
			}
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			if conn, err = db.listen(ctx, topics); err != nil {
				backoff = min(backoff*2, listenBackoffMax)
				continue
			}
			select {
			case ch <- store.Change{Missed: true}:
			case <-ctx.Done():
				conn.Close(context.Background())
				return
			}
		}
	}()
	return ch, nil
}

// listen connects a dedicated connection and listens on topics.
func (db *DB) listen(ctx context.Context, topics []string) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("postgres: listen on %s: %w", db.where, err)
	}
	for _, t := range topics {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{t}.Sanitize()); err != nil {
			conn.Close(context.Background())
			return nil, fmt.Errorf("postgres: listen %q on %s: %w", t, db.where, err)
		}
	}
	return conn, nil
}

// relay passes conn's notifications to ch until the connection fails or
// ctx ends.
func relay(ctx context.Context, conn *pgx.Conn, ch chan<- store.Change) {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		select {
		case ch <- store.Change{Topic: n.Channel, Payload: n.Payload}:
		case <-ctx.Done():
			return
		}
	}
}
