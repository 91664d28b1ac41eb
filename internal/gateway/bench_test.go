package gateway_test

// Benchmarks of one echo tool call made through the gateway, side by side
// with the same call made directly to the upstream with a go-sdk client.
//
//	go test -run '^$' -bench '^BenchmarkEcho$' -benchtime 2s ./internal/gateway
//
// Names are BenchmarkEcho/up=<upstream>/size=<payload>/conc=<callers>/path=<direct|gateway|floor|gateway-legacy>,
// so `benchstat -col /path` puts the paths in columns; path=floor goes
// through the bare forwarder of floor_test.go, the least any hop costs;
// path=gateway-legacy goes through the gateway with a client pinned to
// protocol 2025-11-25 (initialize and a session), as Claude Code and
// Claude Desktop connect today. See docs/PERFORMANCE.md and
// scripts/bench.sh.
//
// Upstreams:
//   - up=http: testkit.NewServer behind a stateless go-sdk Streamable HTTP
//     handler (protocol 2026-07-28), on 127.0.0.1:0 in this process;
//   - up=http-legacy: the same server behind a stateful handler (sessions,
//     protocol 2025-11-25 after the client's discover probe falls back);
//   - up=stdio: this test binary re-executed as the testkit server.
//
// Downstream, the benchmark client is a go-sdk client in the modern era
// (except on path=gateway-legacy). Direct, it talks to the upstream itself
// (for stdio: its own child process), in the upstream's era; through the
// gateway, it talks to gateway.ServeHTTP over Streamable HTTP behind the
// front door, whose host holds one connection to the same upstream. So
// with up=http-legacy, path=gateway has the client speak 2026-07-28 where
// path=direct has it speak 2025-11-25 (which costs the client less);
// path=gateway-legacy is the like-for-like comparison there.
//
// Each sub-benchmark reports, besides ns/op (wall time / calls, so with
// conc=16 it is the inverse of throughput), the per-call latency p50-µs
// and p99-µs (every call's duration is recorded and the exact quantiles are
// taken), calls/s, and cpu-µs/op: the CPU this process used per call (Linux
// only; a stdio upstream's own CPU is in its child process and not counted).
//
// Everything except a stdio server runs in this process, so on a small
// machine client, gateway and upstream share the same cores: the gateway's
// own CPU cost shows up in the numbers, as it would on a laptop running
// agent, gateway and servers together. They also share one heap, so the
// garbage one makes costs the others collection time; BenchmarkEchoApart
// (apart_test.go) runs the same calls with each party in its own process.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

const benchToken = "bench-token-0123456789abcdef"

// benchServer is the upstream server's name in the gateway's configuration;
// its echo tool is benchServer+"__echo" through the gateway.
const benchServer = "up"

// benchLegacyVersion is the protocol of the path=gateway-legacy client.
const benchLegacyVersion = "2025-11-25"

var benchSizes = []struct {
	name string
	n    int
}{
	{"100B", 100},
	{"100KB", 100 << 10},
}

var benchConcurrency = []int{1, 16}

func BenchmarkEcho(b *testing.B) {
	for _, up := range []string{"http", "http-legacy", "stdio"} {
		b.Run("up="+up, func(b *testing.B) {
			env := newBenchEnv(b, up)
			for _, size := range benchSizes {
				args := benchArgs(size.n)
				b.Run("size="+size.name, func(b *testing.B) {
					for _, conc := range benchConcurrency {
						b.Run(fmt.Sprintf("conc=%d", conc), func(b *testing.B) {
							b.Run("path=direct", func(b *testing.B) {
								benchCalls(b, env.direct, "echo", args, size.n, conc)
							})
							b.Run("path=gateway", func(b *testing.B) {
								benchCalls(b, env.gateway, benchServer+"__echo", args, size.n, conc)
							})
							b.Run("path=floor", func(b *testing.B) {
								benchCalls(b, env.floor, "echo", args, size.n, conc)
							})
							b.Run("path=gateway-legacy", func(b *testing.B) {
								benchCalls(b, env.gatewayLegacy, benchServer+"__echo", args, size.n, conc)
							})
						})
					}
				})
			}
		})
	}
}

// benchArgs returns the echo tool's arguments, encoded once: the client's
// encoding cost is the same on both paths and is kept out of the loop.
func benchArgs(n int) json.RawMessage {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 "
	text := strings.Repeat(alphabet, n/len(alphabet)+1)[:n]
	args, err := json.Marshal(testkit.EchoIn{Text: text})
	if err != nil {
		panic(err)
	}
	return args
}

// benchCalls makes b.N echo calls on cs from conc goroutines and reports
// the latency quantiles, the throughput and this process's CPU per call.
func benchCalls(b *testing.B, cs *mcp.ClientSession, tool string, args json.RawMessage, size, conc int) {
	benchCallsCPU(b, cs, tool, args, size, conc, benchClock{"cpu-µs/op", benchProcessCPU})
}

// benchClock is a CPU clock reported per call under its unit.
type benchClock struct {
	unit string
	read func() (time.Duration, bool)
}

// benchCallsCPU is benchCalls with the CPU clocks to report per call.
func benchCallsCPU(b *testing.B, cs *mcp.ClientSession, tool string, args json.RawMessage, size, conc int, clocks ...benchClock) {
	ctx := context.Background()
	call := func() error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return err
		}
		if res.IsError || len(res.Content) != 1 {
			return fmt.Errorf("unexpected result: isError=%t, %d content blocks", res.IsError, len(res.Content))
		}
		if tc, ok := res.Content[0].(*mcp.TextContent); !ok || len(tc.Text) != size {
			return fmt.Errorf("echo came back wrong (%T)", res.Content[0])
		}
		return nil
	}
	// Warm up: connections, pools, the gateway's per-request paths.
	for range conc {
		if err := call(); err != nil {
			b.Fatalf("warm-up call: %v", err)
		}
	}

	lat := make([]time.Duration, b.N) // every call's duration, by call index
	var next atomic.Int64
	var failed atomic.Int64
	worker := func() {
		for {
			i := next.Add(1) - 1
			if i >= int64(b.N) {
				return
			}
			start := time.Now()
			err := call()
			lat[i] = time.Since(start)
			if err != nil && failed.Add(1) == 1 {
				b.Errorf("call %d: %v", i, err)
			}
		}
	}

	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := make([]time.Duration, len(clocks))
	cpuOK := make([]bool, len(clocks))
	for i, c := range clocks {
		cpu0[i], cpuOK[i] = c.read()
	}
	start := time.Now()
	if conc == 1 {
		worker()
	} else {
		var wg sync.WaitGroup
		for range conc {
			wg.Go(worker)
		}
		wg.Wait()
	}
	elapsed := time.Since(start)
	cpu1 := make([]time.Duration, len(clocks))
	for i, c := range clocks {
		var ok bool
		cpu1[i], ok = c.read()
		cpuOK[i] = cpuOK[i] && ok
	}
	b.StopTimer()

	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d calls failed", n, b.N)
	}
	slices.Sort(lat)
	b.ReportMetric(benchQuantile(lat, 0.50), "p50-µs")
	b.ReportMetric(benchQuantile(lat, 0.99), "p99-µs")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	for i, c := range clocks {
		if cpuOK[i] {
			b.ReportMetric(float64(cpu1[i]-cpu0[i])/float64(time.Microsecond)/float64(b.N), c.unit)
		}
	}
}

// benchProcessCPU returns the CPU time (user + system, all threads) this
// process has used, from /proc; false where there is no such
// file. A stdio upstream runs in a child process and is not counted, on
// either path: the difference between the paths is the gateway's own CPU.
// Its resolution is a clock tick (10 ms): meaningful over runs of a second
// or more, not with -benchtime 1x.
func benchProcessCPU() (time.Duration, bool) {
	d, err := procCPU(os.Getpid())
	return d, err == nil
}

// procCPU returns the CPU time (user + system, all threads) process pid
// has used.
func procCPU(pid int) (time.Duration, error) {
	info, err := proc.Get(pid)
	return info.CPU, err
}

// benchQuantile returns the q-quantile of sorted durations in microseconds
// (nearest rank).
func benchQuantile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i]) / float64(time.Microsecond)
}

// benchEnv is one upstream with two client sessions: one to the upstream
// itself, one to a gateway in front of it.
type benchEnv struct {
	direct  *mcp.ClientSession
	gateway *mcp.ClientSession
	floor   *mcp.ClientSession // through the bare forwarder of floor_test.go
	// gatewayLegacy is a client pinned to protocol 2025-11-25 through the
	// gateway: initialize and a session, as Claude Code and Claude Desktop
	// connect today.
	gatewayLegacy *mcp.ClientSession
	// gatewayPID and floorPID are, in BenchmarkEchoApart, the processes
	// of the gateway and of the forwarder.
	gatewayPID, floorPID int
}

func newBenchEnv(b *testing.B, up string) *benchEnv {
	b.Helper()
	ctx := context.Background()
	var (
		direct   mcp.Transport
		upstream map[string]any // the server's entry in the gateway's configuration
		upURL    string         // an HTTP upstream's endpoint
	)
	switch up {
	case "http", "http-legacy":
		// One server for every request, as a real deployment would have.
		web := httptest.NewServer(benchUpstream(up == "http-legacy"))
		b.Cleanup(web.Close)
		direct = &mcp.StreamableClientTransport{Endpoint: web.URL, HTTPClient: benchHTTPClient(nil)}
		upstream = map[string]any{"url": web.URL, "trust": "trusted"}
		upURL = web.URL
	case "stdio":
		direct, upstream = benchStdio(b)
	default:
		b.Fatalf("unknown upstream %q", up)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "bench-client", Version: "1"}, nil)
	dcs, err := client.Connect(ctx, direct, nil)
	if err != nil {
		b.Fatalf("connect directly to %s upstream: %v", up, err)
	}
	b.Cleanup(func() { dcs.Close() })

	// The gateway, configured as `switchboard serve` configures it
	// (Forward: true), in front of the same upstream.
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{benchServer: upstream}})
	cfg, err := config.Parse(data, "bench.json", nil)
	if err != nil {
		b.Fatal(err)
	}
	h, err := host.Open(ctx, cfg, &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, Forward: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	for _, s := range h.Servers() {
		if s.State != host.StateReady {
			b.Fatalf("upstream %s: %s: %s", s.Name, s.State, s.LastError)
		}
		b.Logf("up=%s: gateway→upstream protocol %s, direct client→upstream protocol %s",
			up, s.ProtocolVersion, dcs.InitializeResult().ProtocolVersion)
	}
	g := gateway.New(h, &gateway.Options{Version: "bench"})
	base := serveHTTP(b, g, gateway.HTTPOptions{Front: frontdoor.Options{Token: benchToken}})
	gt := &mcp.StreamableClientTransport{
		Endpoint:   base + "/mcp",
		HTTPClient: benchHTTPClient(http.Header{"Authorization": {"Bearer " + benchToken}}),
	}
	gcs, err := client.Connect(ctx, gt, nil)
	if err != nil {
		b.Fatalf("connect to the gateway: %v", err)
	}
	b.Cleanup(func() { gcs.Close() }) // runs before the gateway's shutdown (LIFO)
	fcs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: newFloor(b, up, upURL), HTTPClient: benchHTTPClient(nil)}, nil)
	if err != nil {
		b.Fatalf("connect to the floor forwarder: %v", err)
	}
	b.Cleanup(func() { fcs.Close() })
	lgt := &mcp.StreamableClientTransport{
		Endpoint:   base + "/mcp",
		HTTPClient: benchHTTPClient(http.Header{"Authorization": {"Bearer " + benchToken}}),
	}
	lcs, err := client.Connect(ctx, lgt, &mcp.ClientSessionOptions{ProtocolVersion: benchLegacyVersion})
	if err != nil {
		b.Fatalf("connect to the gateway with protocol %s: %v", benchLegacyVersion, err)
	}
	b.Cleanup(func() { lcs.Close() })
	if v := lcs.InitializeResult().ProtocolVersion; v != benchLegacyVersion {
		b.Fatalf("legacy client to the gateway: protocol %s, want %s", v, benchLegacyVersion)
	}
	return &benchEnv{direct: dcs, gateway: gcs, floor: fcs, gatewayLegacy: lcs}
}

// benchUpstream is the HTTP upstream's handler: one testkit server for
// every request, as a real deployment would have, behind a stateless
// handler (2026-07-28) or, for legacy, a stateful one (sessions).
func benchUpstream(legacy bool) http.Handler {
	srv := testkit.NewServer()
	opts := &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}
	if legacy {
		opts = &mcp.StreamableHTTPOptions{SessionTimeout: time.Minute}
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts)
}

// benchStdio returns the direct client's transport to a stdio upstream
// (its own child: this test binary as the testkit server) and the
// upstream's entry in the gateway's configuration.
func benchStdio(b *testing.B) (mcp.Transport, map[string]any) {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), testkit.ModeVar+"="+testkit.ModeServer)
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second},
		map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer)}
}

// benchHTTPClient is the benchmark client's HTTP client: its own pool, large
// enough that 16 callers never wait for or churn connections, so that the
// comparison is about the gateway and not about the client.
func benchHTTPClient(headers http.Header) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 64
	t.MaxIdleConnsPerHost = 64
	var rt http.RoundTripper = t
	if len(headers) > 0 {
		rt = benchHeaders{headers, t}
	}
	return &http.Client{Transport: rt}
}

// benchHeaders adds fixed headers (the gateway's bearer token) to requests.
type benchHeaders struct {
	h    http.Header
	next http.RoundTripper
}

func (t benchHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.next.RoundTrip(r)
}
