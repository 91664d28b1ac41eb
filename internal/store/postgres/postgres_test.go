package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/storetest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openTest opens a store on url, closed at cleanup.
func openTest(t testing.TB, url string, o *Options) *DB {
	t.Helper()
	db, err := Open(t.Context(), url, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestStore holds the PostgreSQL store to the behaviour every store has.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, o storetest.Options) store.Store {
		return openTest(t, pgtest.URL(t), &Options{Now: o.Now, MaxCalls: o.MaxCalls, MaxCallAge: o.MaxCallAge})
	})
}

// migrations returns how many rows schema_migrations has, and its newest.
func migrations(t *testing.T, db *DB) (n, newest int) {
	t.Helper()
	if err := db.pool.QueryRow(t.Context(),
		`SELECT count(*), coalesce(max(version), 0) FROM schema_migrations`).Scan(&n, &newest); err != nil {
		t.Fatal(err)
	}
	return n, newest
}

// TestOpenRacing: replicas starting together on a fresh database all
// succeed, and the migrations are applied once.
func TestOpenRacing(t *testing.T) {
	ms, err := loadMigrations()
	if err != nil {
		t.Fatalf("embedded migrations: %v", err)
	}
	url := pgtest.URL(t)
	const replicas = 6
	dbs := make([]*DB, replicas)
	errs := make([]error, replicas)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range dbs {
		wg.Go(func() {
			<-start
			dbs[i], errs[i] = Open(t.Context(), url, nil)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
			continue
		}
		defer dbs[i].Close()
	}
	if t.Failed() {
		return
	}
	if n, newest := migrations(t, dbs[0]); n != len(ms) || newest != len(ms) {
		t.Errorf("schema_migrations has %d rows up to %d, want %d", n, newest, len(ms))
	}
	// And every replica sees what another wrote.
	if err := dbs[1].SaveScore(t.Context(), storetest.NewScore("s", 0.5)); err != nil {
		t.Fatal(err)
	}
	for i, db := range dbs {
		if s, err := db.Score(t.Context(), "s"); err != nil || s.Value != 0.5 {
			t.Errorf("replica %d: Score = %+v, %v; want 0.5", i, s, err)
		}
	}
}

// TestMigrationLockHeld: while another session holds the migration lock,
// Open waits for it rather than migrating beside it.
func TestMigrationLockHeld(t *testing.T) {
	url := pgtest.URL(t)
	holder := openTest(t, url, nil)
	tx, err := holder.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		t.Fatal(err)
	}
	// Open connects, then waits on the lock until ctx ends.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	db, err := Open(ctx, url, nil)
	if err == nil {
		db.Close()
		t.Fatal("Open succeeded while another session held the migration lock")
	}
	if ctx.Err() == nil {
		t.Fatalf("Open failed before its deadline, not waiting on the lock: %v", err)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	openTest(t, url, nil) // released: Open goes through
}

func TestReopenKeepsData(t *testing.T) {
	url := pgtest.URL(t)
	db, err := Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveScore(t.Context(), storetest.NewScore("s", 0.5)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openTest(t, url, nil)
	if s, err := db.Score(t.Context(), "s"); err != nil || s.Value != 0.5 {
		t.Errorf("after reopen: Score = %+v, %v; want 0.5", s, err)
	}
	ms, err := loadMigrations()
	if err != nil {
		t.Fatalf("embedded migrations: %v", err)
	}
	if n, _ := migrations(t, db); n != len(ms) {
		t.Errorf("schema_migrations has %d rows after a reopen, want %d (one per migration)", n, len(ms))
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	url := pgtest.URL(t)
	db := openTest(t, url, nil)
	// A newer binary's migration, recorded as it would record it.
	if _, err := db.pool.Exec(t.Context(), `INSERT INTO schema_migrations (version, applied_at) VALUES (9999, 0)`); err != nil {
		t.Fatal(err)
	}
	db2, err := Open(t.Context(), url, nil)
	if err == nil {
		db2.Close()
		t.Fatal("Open of a database from the future succeeded")
	}
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("Open error = %v, want ErrSchemaTooNew", err)
	}
}

// TestQuotaAcrossReplicas: two stores on one database share a quota, as
// two gateway replicas do.
func TestQuotaAcrossReplicas(t *testing.T) {
	url := pgtest.URL(t)
	a, b := openTest(t, url, nil), openTest(t, url, nil)
	q := store.Quota{Calls: 4, Per: time.Minute}
	now := storetest.When
	admitted := 0
	for i := range 10 {
		db := []*DB{a, b}[i%2]
		ok, retry, err := db.TakeQuota(t.Context(), "client", q, now.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			admitted++
		} else if want := q.Per - time.Duration(i)*time.Second; retry != want {
			t.Errorf("take %d refused with retry %v, want %v", i, retry, want)
		}
	}
	if admitted != q.Calls {
		t.Errorf("%d calls admitted across two replicas, want %d", admitted, q.Calls)
	}
}

// TestAuditAcrossReplicas: replicas append to one log, and retention by
// count holds it whoever inserted.
func TestAuditAcrossReplicas(t *testing.T) {
	url := pgtest.URL(t)
	a, b := openTest(t, url, &Options{MaxCalls: 10}), openTest(t, url, &Options{MaxCalls: 10})
	var wg sync.WaitGroup
	for _, db := range []*DB{a, b} {
		wg.Go(func() {
			for i := range 30 {
				if err := db.RecordCalls(context.Background(), storetest.NewCall("s", fmt.Sprint("t", i), time.Time{})); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	cs, err := b.Calls(t.Context(), store.CallFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	// Both finished, so their last inserts each ran retention after
	// every other insert but, at worst, the other's last one.
	if len(cs) < 10 || len(cs) > 11 {
		t.Errorf("%d rows after 60 inserts with MaxCalls 10, want 10 (11 if the last two raced)", len(cs))
	}
}

func TestRedact(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"postgres://sb:s3cret@db.example:5432/switchboard?sslmode=require",
			"postgres://sb:xxxxx@db.example:5432/switchboard?sslmode=require"},
		{"postgres://db.example/switchboard?user=sb&password=s3cret",
			"postgres://db.example/switchboard?password=xxxxx&user=sb"},
		{"postgres://sb@db.example/switchboard", "postgres://sb@db.example/switchboard"},
		{"host=db.example user=sb password=s3cret dbname=x", "host=db.example user=sb password=xxxxx dbname=x"},
		{`host=db.example password = 'it\'s s3cret' dbname=x`, "host=db.example password = xxxxx dbname=x"},
		{"postgres://sb:s3cret@db.example:notaport/x?password=s3cret&a=b", "postgres://sb:xxxxx@db.example:notaport/x?password=xxxxx&a=b"},
	} {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Contains(Redact(tt.in), "s3cret") {
			t.Errorf("Redact(%q) shows the password", tt.in)
		}
	}
}

// TestOpenErrorsHidePassword: a failed Open names the database without its
// password.
func TestOpenErrorsHidePassword(t *testing.T) {
	for _, url := range []string{
		"postgres://sb:s3cret@127.0.0.1:1/switchboard?connect_timeout=1", // nothing listens on port 1
		"postgres://sb:s3cret@127.0.0.1:notaport/x",
	} {
		db, err := Open(t.Context(), url, nil)
		if err == nil {
			db.Close()
			t.Fatalf("Open(%s) succeeded", url)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open error shows the password: %v", err)
		}
		t.Logf("error reads: %v", err)
	}
}
