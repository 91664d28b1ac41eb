// Package pgtest runs a throwaway PostgreSQL cluster for a test binary:
// TestMain runs the tests through Main, the first test that asks for a
// database (URL) starts the cluster, each test gets a database of its own,
// and Main stops the cluster and removes its files when the tests end,
// leaving no process behind. A test binary none of whose tests ask for a
// database never starts one.
//
// The cluster is made with the machine's initdb and postgres (found on
// $PATH or under /usr/lib/postgresql/*/bin). It listens on a Unix socket in
// its own temporary directory only (no TCP port), with trust
// authentication for local connections. initdb refuses to run as root, so
// as root both run as the "postgres" user. The server is a child of the
// test binary and is killed if the binary dies without stopping it.
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
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
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

	serverPID atomic.Int64 // cluster's server, while it runs (ServerPID)
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
		serverPID.Store(0)
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
		serverPID.Store(int64(c.Pid()))
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

// A Cluster is a running throwaway PostgreSQL server: a child process
// of the test binary that dies with it.
type Cluster struct {
	// Fixed at Start.
	bin    string              // directory of initdb and postgres
	dir    string              // temporary directory: data/, the socket, the log
	cred   *syscall.Credential // the postgres user's, when started by root; nil runs as ourselves
	server *exec.Cmd
	exited chan struct{} // closed when server has been waited for

	stopping atomic.Bool // Stop was called: the server's end is expected
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
	c := &Cluster{bin: bin, dir: dir, exited: make(chan struct{})}
	if err := c.start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start() error {
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("pgtest: running as root, and there is no \"postgres\" user to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(c.dir, uid, gid); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
	}
	data := filepath.Join(c.dir, "data")
	if out, err := c.command("initdb", "-D", data, "-U", "postgres", "-E", "UTF8", "--no-sync",
		"--auth-local=trust", "--auth-host=reject").CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	log, err := os.Create(filepath.Join(c.dir, "log"))
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer log.Close()
	// The postmaster is our child, not pg_ctl's daemon, so that it dies
	// with the test binary (Pdeathsig) even when a test panics or times
	// out and Main never stops it; its backends follow it. No TCP at all
	// (listen_addresses empty): the socket in dir is the only way in.
	// Durability is pointless for a throwaway cluster.
	c.server = c.command("postgres", "-D", data, "-k", c.dir,
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "shared_buffers=16MB", "-c", "max_connections=200")
	setPdeathsig(c.server.SysProcAttr)
	c.server.Stdout, c.server.Stderr = log, log
	// Pdeathsig fires when the OS thread that forked the child exits, not
	// the process (https://go.dev/issue/27505), and the runtime destroys
	// the thread of a goroutine that exits locked to it (the launcher's
	// fork loop does, on whatever thread it ran). So the server is forked
	// by a goroutine that locks its thread and keeps it until the server
	// has exited.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine, after the server
		if err := c.server.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		err := c.server.Wait()
		if !c.stopping.Load() {
			// Every test after this fails to connect: say why it ended.
			b, _ := os.ReadFile(filepath.Join(c.dir, "log"))
			if len(b) > 4096 {
				b = b[len(b)-4096:]
			}
			fmt.Fprintf(os.Stderr, "pgtest: postgres (pid %d) ended before Stop: %v; the end of its log:\n%s\n", c.server.Process.Pid, err, b)
		}
		close(c.exited)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("pgtest: postgres: %w", err)
	}
	if err := c.ready(60 * time.Second); err != nil {
		c.Stop()
		b, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		return fmt.Errorf("pgtest: postgres: %w\n%s", err, b)
	}
	return nil
}

// ready waits until the server accepts a connection, it exits, or d has
// passed.
func (c *Cluster) ready(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		cancel()
		if err == nil {
			return conn.Close(context.Background())
		}
		select {
		case <-c.exited:
			return fmt.Errorf("exited before it was ready: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %v", d, err)
		}
	}
}

// URL is the connection URL of database name on c.
func (c *Cluster) URL(name string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + name,
		RawQuery: url.Values{"host": {c.dir}, "sslmode": {"disable"}}.Encode()}
	return u.String()
}

// Stop stops the server, at once (SIGQUIT: its data is thrown away) and
// if need be by force, waits for it, and removes its directory.
func (c *Cluster) Stop() error {
	var err error
	c.stopping.Store(true)
	if c.server != nil && c.server.Process != nil {
		c.server.Process.Signal(syscall.SIGQUIT) //nolint:errcheck // it may have exited
		select {
		case <-c.exited:
		case <-time.After(30 * time.Second):
			c.server.Process.Kill() //nolint:errcheck // it may have exited
			<-c.exited
			err = errors.New("pgtest: postgres did not stop within 30s of SIGQUIT; killed")
		}
	}
	return errors.Join(err, os.RemoveAll(c.dir))
}

// Pid is the server's process ID.
func (c *Cluster) Pid() int { return c.server.Process.Pid }

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

// command is one of the cluster's programs, run as the postgres user when
// we are root, in the cluster's directory.
func (c *Cluster) command(prog string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, prog), args...)
	cmd.Dir = c.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	return cmd
}

// findBin returns the directory holding initdb and postgres: $PATH's, or the
// newest under /usr/lib/postgresql.
func findBin() (string, error) {
	has := func(dir string) bool {
		for _, prog := range []string{"initdb", "postgres"} {
			if _, err := os.Stat(filepath.Join(dir, prog)); err != nil {
				return false
			}
		}
		return true
	}
	if p, err := exec.LookPath("initdb"); err == nil && has(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	return "", errors.New("initdb and postgres not found together on $PATH nor under /usr/lib/postgresql/*/bin")
}

// version is the major version in a /usr/lib/postgresql/N/bin path.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// Outage makes the database at url unreachable, as if its server had gone
// away: it refuses new connections and those open are terminated. The
// returned function ends the outage; so does t's cleanup, if it was not
// called.
func Outage(t testing.TB, url string) (end func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The outage is made from the cluster's "postgres" database: a
	// database cannot refuse connections to itself.
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatalf("pgtest: outage: %v", err)
	}
	name := cfg.Database
	cfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("pgtest: outage: %v", err)
	}
	db := pgx.Identifier{name}.Sanitize()
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+db+" ALLOW_CONNECTIONS false"); err != nil {
		t.Fatalf("pgtest: outage: %v", err)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, name); err != nil {
		t.Fatalf("pgtest: outage: %v", err)
	}
	var once sync.Once
	end = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := admin.Exec(ctx, "ALTER DATABASE "+db+" ALLOW_CONNECTIONS true"); err != nil {
				t.Errorf("pgtest: end of outage: %v", err)
			}
			admin.Close(ctx)
		})
	}
	t.Cleanup(end)
	return end
}

// ServerPID is the process ID of the test binary's cluster server, a
// child of the test binary until Main stops it, or 0 when none runs: a
// test that checks that no child of the binary is left leaves it out.
func ServerPID() int { return int(serverPID.Load()) }

// CutListeners terminates the connections to the database at url whose
// last statement was a LISTEN (a change feed), as a network cut would, and
// returns how many it terminated.
func CutListeners(t testing.TB, url string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("pgtest: cut listeners: %v", err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`).Scan(&n); err != nil {
		t.Fatalf("pgtest: cut listeners: %v", err)
	}
	return n
}
