package supervise_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/supervise"
)

// The host asks before each dial, reports every outcome on the Attempt, and
// reports the end of the connection the Attempt made.
func Example() {
	start := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	now := start
	sup := supervise.New("github", supervise.Policy{}, &supervise.Options{
		Now:  func() time.Time { return now },
		Rand: func() float64 { return 1 }, // no jitter, for a stable output
		OnChange: func(e supervise.Event) {
			fmt.Printf("t=%v %s: %s → %s (%s)\n", e.At.Sub(start), e.Server, e.From, e.To, e.Reason)
		},
	})

	// dial stands for the host's dial + discovery; it fails twice.
	fails := 2
	dial := func() error {
		if fails > 0 {
			fails--
			return errors.New("connection refused")
		}
		return nil
	}

	// A call arrives (or the host's tick fires): may we dial?
	try := func() (supervise.Attempt, bool) {
		a, wait, ok := sup.Acquire()
		if !ok {
			fmt.Printf("t=%v not now (wait %v)\n", now.Sub(start), wait)
			return a, false
		}
		if err := dial(); err != nil {
			a.Failed(err, true) // false for HTTP 401/403
			return a, false
		}
		a.Succeeded()
		return a, true
	}

	try()
	try()
	now = now.Add(time.Second)
	try()
	now = now.Add(2 * time.Second)
	conn, _ := try()

	// Later, the connection ends (the host's watcher sees it).
	now = now.Add(time.Minute)
	conn.Dropped(errors.New("EOF"))
	try()

	// Output:
	// t=0s github: starting → backoff (attempt 1 of 3 failed: connection refused)
	// t=0s not now (wait 1s)
	// t=1s github: backoff → backoff (attempt 2 of 3 failed: connection refused)
	// t=3s github: backoff → ready (connected)
	// t=1m3s github: ready → degraded (connection lost: EOF)
	// t=1m3s github: degraded → ready (connected)
}
