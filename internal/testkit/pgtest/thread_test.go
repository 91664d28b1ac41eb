package pgtest

import (
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The main goroutine keeps the main thread, which the runtime never
// destroys, so that every test goroutine runs on a thread it may destroy.
func init() { runtime.LockOSThread() }

// TestServerOutlivesThreads: the server is killed when the OS thread that
// forked it exits (Pdeathsig is per thread, https://go.dev/issue/27505),
// and the runtime destroys the thread of a goroutine that exits locked to
// it, as the launcher's fork loop does on whatever thread it ran; a
// cluster started from such a goroutine must outlive it.
func TestServerOutlivesThreads(t *testing.T) {
	URL(t) // skips without PostgreSQL
	started := make(chan *Cluster, 1)
	go func() {
		runtime.LockOSThread() // no unlock: the thread is destroyed on return
		c, err := Start()
		if err != nil {
			t.Error(err)
		}
		started <- c
	}()
	c := <-started
	if c == nil {
		return
	}
	defer c.Stop()
	time.Sleep(300 * time.Millisecond)
	conn, err := pgx.Connect(t.Context(), c.URL("postgres"))
	if err != nil {
		t.Fatalf("the server did not outlive the thread that started it: %v", err)
	}
	conn.Close(t.Context())
}
