package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// abandonVar makes the test binary start a cluster, print its server's
// PID and directory, and exit without stopping it, as a binary that
// panics or times out does.
const abandonVar = "PGTEST_ABANDON"

func TestMain(m *testing.M) {
	if os.Getenv(abandonVar) == "1" {
		c, err := Start()
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(c.Pid(), c.dir)
		os.Exit(3)
	}
	os.Exit(Main(m))
}

// TestServerDiesWithBinary: a test binary that exits without stopping its
// cluster leaves no server process behind.
func TestServerDiesWithBinary(t *testing.T) {
	URL(t) // skips without PostgreSQL
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), abandonVar+"=1")
	out, err := cmd.Output()
	var pid int
	var dir string
	if _, serr := fmt.Sscan(string(out), &pid, &dir); serr != nil {
		t.Fatalf("child: %v, output %q", err, out)
	}
	defer os.RemoveAll(dir)
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		// Gone, or a zombie waiting for init to reap it.
		if err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("postgres (pid %d) still runs 10s after its test binary exited", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestURL: each call gives a database of its own, reachable and empty.
func TestURL(t *testing.T) {
	a, b := URL(t), URL(t)
	if a == b {
		t.Fatalf("two calls gave the same database %s", a)
	}
	ctx := t.Context()
	for _, u := range []string{a, b} {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		var db string
		var tables int
		if err := conn.QueryRow(ctx, `SELECT current_database(),
			(SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public')`).Scan(&db, &tables); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
		if tables != 0 {
			t.Errorf("%s has %d tables, want a fresh database", db, tables)
		}
	}
	// A table made in one is not in the other.
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE only_in_a (x int)`); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	var n int
	if err := other.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name = 'only_in_a'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("only_in_a seen from the other database: %d, %v", n, err)
	}
}

// recorder is a testing.TB that records how a test ended instead of ending.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

// TestUnavailable: without PostgreSQL a test is skipped with the reason,
// or failed when PostgreSQL is required.
func TestUnavailable(t *testing.T) {
	for _, tt := range []struct {
		require              string
		wantSkip, wantFailed bool
	}{{"", true, false}, {"0", true, false}, {"1", false, true}} {
		t.Run("require="+tt.require, func(t *testing.T) {
			t.Setenv(RequireVar, tt.require)
			r := &recorder{TB: t}
			unavailable(r, "initdb not found")
			if (r.skipped != "") != tt.wantSkip || (r.failed != "") != tt.wantFailed {
				t.Fatalf("skipped %q, failed %q; want skip %v, fail %v", r.skipped, r.failed, tt.wantSkip, tt.wantFailed)
			}
			if msg := r.skipped + r.failed; !strings.Contains(msg, "initdb not found") {
				t.Errorf("message %q does not say why", msg)
			}
		})
	}
}
