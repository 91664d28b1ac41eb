// Package postgres implements store.Store in a PostgreSQL database, through
// pgx, so that several Switchboard processes (replicas of one gateway)
// share their catalogues, approvals, held drifts, audit log, trust scores
// and call quotas. It is also their change feed (store.Notifier), through
// LISTEN/NOTIFY: every write of pins or drifts notifies store.TopicPins
// in its own transaction.
//
// The schema is created and upgraded by ordered migrations embedded in the
// binary (migrations/NNNN_name.sql), all in one transaction that holds a
// transaction-level advisory lock, so replicas starting together migrate
// once and never race. A database that has a migration this binary does
// not know was written by a newer Switchboard, and is refused.
//
// This package imports store and nothing else from Switchboard.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

var _ store.Store = (*DB)(nil)

// Options configure a DB (store.Options).
type Options = store.Options

// DB is a store.Store backed by a PostgreSQL database. It is safe for
// concurrent use, and any number of DBs, in any number of processes, may
// share one database.
type DB struct {
	// Fixed at Open.
	now        func() time.Time
	maxCalls   int           // <= 0: unbounded
	maxCallAge time.Duration // <= 0: unbounded
	pool       *pgxpool.Pool // has its own locking
	where      string        // the database, password redacted, for errors
}

// Open connects to the database at connString (a postgres:// URL or a
// keyword/value string, as pgx accepts; pool_max_conns and the other pgxpool
// settings may be given in it) and migrates it to the schema of this
// binary. It fails, with an error wrapping ErrSchemaTooNew, on a database
// that a newer binary has migrated further. Errors never show the password.
func Open(ctx context.Context, connString string, o *Options) (*DB, error) {
	if o == nil {
		o = &Options{}
	}
	db := &DB{now: o.Now, maxCalls: o.MaxCalls, maxCallAge: o.MaxCallAge, where: Redact(connString)}
	if db.now == nil {
		db.now = time.Now
	}
	if db.maxCalls == 0 {
		db.maxCalls = store.DefaultMaxCalls
	}
	if db.maxCallAge == 0 {
		db.maxCallAge = store.DefaultMaxCallAge
	}
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		// pgx's parse errors may quote the string; ours names it redacted.
		return nil, fmt.Errorf("postgres: %s: the connection string does not parse", db.where)
	}
	db.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open %s: %w", db.where, err)
	}
	if err := migrate(ctx, db.pool, db.now); err != nil {
		db.pool.Close()
		return nil, fmt.Errorf("postgres: open %s: %w", db.where, err)
	}
	return db, nil
}

// Close closes the connection pool, waiting for connections in use to be
// returned.
func (db *DB) Close() error {
	db.pool.Close()
	return nil
}

// What Redact replaces when a string is not a URL that url.Parse accepts:
// a keyword/value password (quoted as libpq quotes, with \' and \\), a
// URL's user:password@ and a URL's password= parameter.
var (
	keywordPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)`)
	userinfo        = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*://[^:/?#@]*:)[^/?#]*@`)
	queryPassword   = regexp.MustCompile(`([?&]password=)[^&#]*`)
)

// Redact returns a connection string fit to print: a URL's password is
// replaced by "xxxxx", and so is a keyword/value string's password=.
func Redact(connString string) string {
	u, err := url.Parse(connString)
	switch {
	case err == nil && u.Scheme != "":
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.Redacted()
	case strings.Contains(connString, "://"):
		s := userinfo.ReplaceAllString(connString, "${1}xxxxx@")
		return queryPassword.ReplaceAllString(s, "${1}xxxxx")
	}
	return keywordPassword.ReplaceAllString(connString, "${1}xxxxx")
}

// stamp returns t, or the clock's now if t is zero, as stored.
func (db *DB) stamp(t time.Time) int64 {
	if t.IsZero() {
		t = db.now()
	}
	return t.UnixNano()
}

// fromNanos is the inverse of stamp for values read back.
func fromNanos(n int64) time.Time { return time.Unix(0, n) }

// blob keeps nil slices out of NOT NULL BYTEA columns: pgx sends a nil
// []byte as NULL.
func blob(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// inTx runs fn in a transaction, committing if fn returns nil.
func (db *DB) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, db.pool, fn)
}

// notFound reports whether err is a query's "no rows".
func notFound(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
