// Package pgtest runs a throwaway PostgreSQL cluster for a test binary:
// TestMain runs the tests through Main, the first test that asks for a
// database (URL) starts the cluster, each test gets a database of its own,
// and Main stops the cluster and removes its files when the tests end,
// leaving no process behind. A test binary none of whose tests ask for a
// database never starts one.
//
// The cluster is made with the machine's initdb and pg_ctl (found on $PATH
// or under /usr/lib/postgresql/*/bin). It listens on a Unix socket in its
// own temporary directory only (no TCP port), with trust authentication
// for local connections. initdb refuses to run as root, so as root the
// server runs as the "postgres" user (through runuser).
//
// Without PostgreSQL a test that asks for a database is skipped with a
// message saying why, unless $SWITCHBOARD_REQUIRE_POSTGRES=1 (set by
// scripts/test.sh, so in CI), where it fails: CI never silently skips the
// PostgreSQL store.
//
// Only tests import this package.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequireVar is the environment variable that turns a missing PostgreSQL
// from a skip into a failure.
const RequireVar = "SWITCHBOARD_REQUIRE_POSTGRES"

// The cluster of this test binary, started by the first URL.
var (
	mainRan atomic.Bool // Main is running the tests, and will stop the cluster
	once    sync.Once   // starts the cluster
	cluster *Cluster    // set by once; nil if it could not start
	missing string      // why cluster is nil, set by once
	dbSeq   atomic.Int64
)

// Main runs the tests and then stops the cluster, if one was started, and
// returns the exit code, for TestMain: os.Exit(pgtest.Main(m)). A cluster
// that cannot be started (no PostgreSQL installed, or initdb failing) is
// not an error here: URL skips or fails each test that needs one, saying
// why.
func Main(m *testing.M) int {
	mainRan.Store(true)
	code := m.Run()
	once.Do(func() { missing = "the tests have ended" }) // none starts after this
	if c := cluster; c != nil {
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// URL returns the connection URL of a new, empty database on the test
// binary's cluster, dropped when t ends. Without a cluster it skips t (or
// fails it, when $SWITCHBOARD_REQUIRE_POSTGRES=1).
func URL(t testing.TB) string {
	t.Helper()
	if !mainRan.Load() {
		t.Fatal("pgtest.URL needs TestMain to run the tests through pgtest.Main, which stops the cluster")
	}
	once.Do(func() {
		c, err := Start()
		if err != nil {
			missing = err.Error()
			return
		}
		cluster = c
	})
	if cluster == nil {
		unavailable(t, missing)
		return ""
	}
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cluster.exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cluster.exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return cluster.URL(name)
}

// unavailable skips t for want of PostgreSQL, saying why, or fails it when
// $SWITCHBOARD_REQUIRE_POSTGRES=1.
func unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(RequireVar) == "1" {
		t.Fatalf("PostgreSQL is required (%s=1) but unavailable: %s", RequireVar, why)
		return
	}
	t.Skipf("PostgreSQL unavailable, skipping: %s (install PostgreSQL so that initdb is on $PATH or under /usr/lib/postgresql/*/bin, or set %s=1 to fail instead)", why, RequireVar)
}

// A Cluster is a running throwaway PostgreSQL server.
type Cluster struct {
	bin     string // directory of initdb, pg_ctl
	dir     string // temporary directory: data/, the socket, the log
	asUser  string // "postgres" when started by root; "" runs as ourselves
	started bool
}

// Start makes and starts a cluster in a new temporary directory.
func Start() (*Cluster, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	// The socket's path must fit in sun_path (about 100 bytes), so the
	// directory is made under /tmp whatever $TMPDIR says.
	dir, err := os.MkdirTemp("/tmp", "pgtest")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c := &Cluster{bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		c.asUser = "postgres"
		u, err := user.Lookup(c.asUser)
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: running as root, and there is no %q user to run PostgreSQL as: %w", c.asUser, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.run("initdb", "-D", data, "-U", "postgres", "-E", "UTF8", "--no-sync",
		"--auth-local=trust", "--auth-host=reject"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	// No TCP at all (listen_addresses empty): the socket in dir is the
	// only way in. Durability is pointless for a throwaway cluster.
	opts := strings.Join([]string{
		"-c listen_addresses=''",
		"-c unix_socket_directories=" + dir,
		"-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off",
		"-c shared_buffers=16MB", "-c max_connections=200",
	}, " ")
	if out, err := c.run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	c.started = true
	return c, nil
}

// URL is the connection URL of database name on c.
func (c *Cluster) URL(name string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + name,
		RawQuery: url.Values{"host": {c.dir}, "sslmode": {"disable"}}.Encode()}
	return u.String()
}

// Stop stops the server (fast: its data is thrown away) and removes its
// directory.
func (c *Cluster) Stop() error {
	var err error
	if c.started {
		if out, e := c.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "-t", "60", "stop"); e != nil {
			err = fmt.Errorf("pgtest: pg_ctl stop: %w\n%s", e, out)
		}
		c.started = false
	}
	return errors.Join(err, os.RemoveAll(c.dir))
}

// exec runs one statement on the cluster's maintenance database.
func (c *Cluster) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// run runs one of the cluster's programs, as c.asUser when set.
func (c *Cluster) run(prog string, args ...string) ([]byte, error) {
	path := filepath.Join(c.bin, prog)
	var cmd *exec.Cmd
	if c.asUser != "" {
		cmd = exec.Command("runuser", append([]string{"-u", c.asUser, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = c.dir
	// pg_ctl's server keeps running after pg_ctl returns; it must not
	// hold our output pipes open, or CombinedOutput would wait for it.
	// It is told to log to a file instead, and gets a temp file here.
	out, err := os.CreateTemp("", "pgtest-out")
	if err != nil {
		return nil, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	b, _ := os.ReadFile(out.Name())
	return b, err
}

// findBin returns the directory holding initdb and pg_ctl: $PATH's, or the
// newest under /usr/lib/postgresql.
func findBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("initdb not found on $PATH nor under /usr/lib/postgresql/*/bin")
}

// version is the major version in a /usr/lib/postgresql/N/bin path.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}
