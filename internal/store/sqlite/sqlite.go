// Package sqlite is the embedded implementation of store.Store: a SQLite
// database file, normally $SWITCHBOARD_HOME/state.db, driven through
// database/sql by modernc.org/sqlite, a pure Go SQLite, so Switchboard builds
// without cgo.
//
// The schema is created and upgraded by ordered migrations embedded in the
// binary (migrations/NNNN_name.sql). A database that has a migration this
// binary does not know was written by a newer Switchboard, and is refused
// rather than used with a schema the code does not understand.
//
// This package imports store and nothing else from Switchboard.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

var _ store.Store = (*DB)(nil)

// Options configure a DB (store.Options).
type Options = store.Options

// busyTimeout is how long a statement waits for a lock held by another
// process (two Switchboards sharing a home) before failing with SQLITE_BUSY.
// Within one process writes queue on the single writer connection instead.
const busyTimeout = 5 * time.Second

// maxReaders bounds the reader pool; each connection carries its own page
// cache, and reads are short.
const maxReaders = 4

// DB is a store.Store backed by a SQLite file. It is safe for concurrent use.
//
// It holds two pools on the same file. SQLite allows one writer at a time,
// and a writer that finds the lock taken mid-transaction can fail at once
// rather than wait; funnelling every write through a single connection
// makes writers queue in Go instead. In WAL mode readers do not block the
// writer nor it them, so reads get a pool of their own.
type DB struct {
	// Fixed at Open.
	now        func() time.Time
	maxCalls   int           // <= 0: unbounded
	maxCallAge time.Duration // <= 0: unbounded
	write      *sql.DB       // one connection; every transaction BEGIN IMMEDIATE
	read       *sql.DB       // query_only connections
}

// Open opens the database at path, creating it (mode 0600) and its parent
// directory (mode 0700) if they do not exist, and migrates it to the schema
// of this binary. It fails, with an error wrapping ErrSchemaTooNew, on a
// database that a newer binary has migrated further.
func Open(path string, o *Options) (*DB, error) {
	if o == nil {
		o = &Options{}
	}
	db := &DB{
		now:        o.Now,
		maxCalls:   o.MaxCalls,
		maxCallAge: o.MaxCallAge,
	}
	if db.now == nil {
		db.now = time.Now
	}
	if db.maxCalls == 0 {
		db.maxCalls = store.DefaultMaxCalls
	}
	if db.maxCallAge == 0 {
		db.maxCallAge = store.DefaultMaxCallAge
	}

	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	// SQLite would create the file with the umask's default mode; the
	// state names servers, tools and callers, so create it private first.
	// An empty file is a valid empty database. The -wal and -shm files
	// SQLite creates later copy this file's mode.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}

	// journal_mode is persistent in the file, so only the writer sets it.
	// synchronous=NORMAL is the usual WAL pairing: a crash cannot corrupt
	// the file, and a power cut can lose only the last commits.
	db.write, err = sql.Open("sqlite", dsn(abs,
		"_txlock", "immediate",
		"_pragma", "journal_mode(WAL)",
		"_pragma", "synchronous(NORMAL)",
	))
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	db.write.SetMaxOpenConns(1)
	db.write.SetMaxIdleConns(1)
	db.write.SetConnMaxLifetime(0)
	db.write.SetConnMaxIdleTime(0)

	db.read, err = sql.Open("sqlite", dsn(abs, "_pragma", "query_only(1)"))
	if err != nil {
		db.write.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	db.read.SetMaxOpenConns(maxReaders)
	db.read.SetMaxIdleConns(maxReaders)

	// Migrations are the first use of the writer, so they also surface a
	// file that is not a database or cannot be opened.
	if err := migrate(context.Background(), db.write, abs, db.now); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// dsn builds a file: URI for the driver, so that a path containing '?' or
// '%' is escaped rather than taken for parameters. Every connection gets the
// busy timeout and foreign keys; kv adds parameters in key, value pairs.
func dsn(abs string, kv ...string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	for i := 0; i+1 < len(kv); i += 2 {
		q.Add(kv[i], kv[i+1])
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	return u.String()
}

// Close closes both pools. Readers go first so that the writer, closing
// last, checkpoints the WAL back into the main file.
func (db *DB) Close() error {
	return errors.Join(db.read.Close(), db.write.Close())
}

var _ store.Pinger = (*DB)(nil)

// Ping implements store.Pinger: it checks that the file can be read.
func (db *DB) Ping(ctx context.Context) error {
	if _, err := db.read.ExecContext(ctx, `SELECT 1`); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
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

// blob keeps nil slices out of NOT NULL BLOB columns: the driver binds a nil
// []byte as NULL.
func blob(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// inTx runs fn in a transaction on db, committing if fn returns nil.
func inTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
