package cli_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/peers"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// benchCallers is the fixed concurrency of BenchmarkCluster.
const benchCallers = 16

// BenchmarkCluster: calls/s through HAProxy (docs/REPLICAS.md's configuration)
// in front of 1, 2 and 3 `switchboard serve` replicas sharing one
// PostgreSQL database, with the demo server and the npm server-everything
// as upstreams of each, at 16 callers: 2026-07-28 calls, stateless, half
// demo__echo and half every__echo. The replicas and databases are the same
// for the three sub-benchmarks; each has its own HAProxy, whose server
// lines past its replicas are left out. Besides calls/s it reports the
// latency's p50 and p99 and the CPU per call of the replicas, of their
// upstreams, of HAProxy, of PostgreSQL and of the callers (this process),
// read from /proc.
//
// $SWITCHBOARD_BENCH_PPROF=ADDR serves replica A's profiles on ADDR
// (serve --pprof) for `go tool pprof` while it runs. See
// docs/PERFORMANCE.md.
func BenchmarkCluster(b *testing.B) {
	bin := haproxyBinary(b)
	url := pgtest.URL(b)
	node, everything := peers.Script(b, peers.Everything)
	exe, _ := os.Executable()
	cfg := filepath.Join(b.TempDir(), "config.json")
	data := fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q, "args": ["demo-server"], "eager": true},
		"every": {"command": %q, "args": [%q], "eager": true}}}`, exe, node, everything)
	if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
		b.Fatal(err)
	}
	var reps []*replica
	for i := range 3 {
		args := []string{"--config", cfg, "--store", url}
		if addr := os.Getenv("SWITCHBOARD_BENCH_PPROF"); addr != "" && i == 0 {
			args = append(args, "--pprof", addr)
		}
		reps = append(reps, startReplicaIn(b, b.TempDir(), nil, args...))
	}
	for _, r := range reps {
		if !proc.Eventually(20*time.Second, func() bool { return r.get("/readyz") == 200 }) {
			b.Fatalf("not ready:\n%s", r.stderr.String())
		}
	}
	var fronts []string
	for n := 1; n <= 3; n++ {
		fronts = append(fronts, startHAProxy(b, bin, reps[:n]))
	}
	// Started, and asked for roots, before any call is in flight (see
	// TestCluster).
	for _, r := range reps {
		c := statelessClient{http: &http.Client{}, endpoint: r.endpoint}
		if status, body := c.callOnce(context.Background(), "every__echo", map[string]any{"message": "warm"}); status != 200 {
			b.Fatalf("every__echo: %d %s", status, body)
		}
	}
	time.Sleep(500 * time.Millisecond)

	var replicaPIDs []int
	for _, r := range reps {
		replicaPIDs = append(replicaPIDs, r.cmd.Process.Pid)
	}
	for n := 1; n <= 3; n++ {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			c := statelessClient{http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchCallers}}, endpoint: fronts[n-1]}
			lat := make([]time.Duration, b.N)
			var next atomic.Int64
			var failed atomic.Value
			cpu := func() [5]time.Duration {
				var ups []int
				for _, pid := range replicaPIDs {
					ups = append(ups, children(pid)...)
				}
				return [5]time.Duration{cpuOf(replicaPIDs...), cpuOf(descendants(ups...)...),
					cpuOf(haproxyPIDs()...), cpuOf(descendants(pgtest.ServerPID())...), cpuOf(os.Getpid())}
			}
			before := cpu()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for range benchCallers {
				wg.Go(func() {
					for {
						i := int(next.Add(1) - 1)
						if i >= b.N {
							return
						}
						tool, args, want := echoes(0, i)
						t0 := time.Now()
						status, body := c.callOnce(context.Background(), tool, args)
						lat[i] = time.Since(t0)
						if status != 200 || !strings.Contains(body, want) {
							failed.Store(fmt.Sprintf("%s: %d %.300s", tool, status, body))
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if f := failed.Load(); f != nil {
				b.Fatalf("a call failed: %s", f)
			}
			after := cpu()
			slices.Sort(lat)
			per := func(i int) float64 { return float64(after[i]-before[i]) / float64(time.Microsecond) / float64(b.N) }
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
			b.ReportMetric(float64(lat[len(lat)/2])/float64(time.Millisecond), "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100])/float64(time.Millisecond), "p99-ms")
			b.ReportMetric(per(0), "replicas-cpu-µs/call")
			b.ReportMetric(per(1), "upstreams-cpu-µs/call")
			b.ReportMetric(per(2), "haproxy-cpu-µs/call")
			b.ReportMetric(per(3), "postgres-cpu-µs/call")
			b.ReportMetric(per(4), "client-cpu-µs/call")
			b.ReportMetric(0, "ns/op") // calls/s says it, for 16 callers
		})
	}
}

// clockTick is the unit of /proc/PID/stat's times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// cpuOf sums the user and system CPU time of pids (0 when a pid is gone).
func cpuOf(pids ...int) time.Duration {
	var sum time.Duration
	for _, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: state is
		// the 3rd field of the line, utime the 14th, stime the 15th.
		f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
		u, _ := strconv.Atoi(f[11])
		s, _ := strconv.Atoi(f[12])
		sum += time.Duration(u+s) * clockTick
	}
	return sum
}

// children returns pid's child processes.
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		data, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// descendants returns pids and all their descendants.
func descendants(pids ...int) []int {
	var out []int
	for len(pids) > 0 {
		pid := pids[0]
		pids = pids[1:]
		if pid <= 0 {
			continue
		}
		out = append(out, pid)
		pids = append(pids, children(pid)...)
	}
	return out
}

// haproxyPIDs are this process's haproxy children.
func haproxyPIDs() []int {
	var out []int
	for _, pid := range children(os.Getpid()) {
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) == "haproxy" {
			out = append(out, pid)
		}
	}
	return out
}
