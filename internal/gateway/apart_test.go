package gateway_test

// BenchmarkEchoApart is BenchmarkEcho with every party in its own process,
// as they are deployed: the benchmark client in this process, and the
// HTTP upstream, the gateway and the bare forwarder each in a re-executed
// copy of this test binary (a stdio upstream is, as in BenchmarkEcho, a
// child of whoever talks to it). So each has its own heap and garbage
// collector, as an editor, `switchboard serve` and a server each have
// theirs, and the machine's cores are still shared by all of them.
//
//	go test -run '^$' -bench BenchmarkEchoApart -benchtime 1s ./internal/gateway
//
// Names and paths are those of BenchmarkEcho. cpu-µs/op here is the CPU
// of the whole process tree (this process and all its descendants, idle
// ones included) per call, so it counts the upstream and the gateway too;
// hop-cpu-µs/op is the CPU per call of the process in the middle alone
// (the gateway's, or the forwarder's; not its stdio child's): what the
// hop itself costs, with no client or upstream in the same heap.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
)

// benchRoleVar selects what a re-executed test binary serves for
// BenchmarkEchoApart; benchArgVar is its argument (the gateway's
// configuration, the forwarder's upstream).
const (
	benchRoleVar = "SWITCHBOARD_BENCH_ROLE"
	benchArgVar  = "SWITCHBOARD_BENCH_ARG"
)

// benchProfileVar, when set to a directory, has each role write its CPU
// profile there as <role>-<pid>.cpu: a profile of the gateway (or the
// forwarder) alone, with no client or upstream in it.
//
//	SWITCHBOARD_BENCH_PROFILE=/tmp/prof go test -run '^$' \
//	    -bench 'BenchmarkEchoApart/up=http$/size=100B/conc=1$/path=gateway$' ./internal/gateway
const benchProfileVar = "SWITCHBOARD_BENCH_PROFILE"

// The roles. Each listens on 127.0.0.1:0, writes its endpoint as one line
// to stdout, and serves until its stdin closes.
const (
	roleUpstream       = "upstream-http"        // testkit server, stateless handler
	roleUpstreamLegacy = "upstream-http-legacy" // testkit server, stateful handler
	roleGateway        = "gateway"              // the gateway, configuration in benchArgVar
	roleFloor          = "floor"                // the bare forwarder, "up url" in benchArgVar
)

// maybeRunBenchRole serves a role and exits when benchRoleVar is set. It
// runs after testkit.MaybeRunChild, and takes both variables out of its
// environment before it starts anything, so that a child it starts (a
// stdio upstream) is that child and not the role again.
func maybeRunBenchRole() {
	role, arg := os.Getenv(benchRoleVar), os.Getenv(benchArgVar)
	if role == "" {
		return
	}
	os.Unsetenv(benchRoleVar)
	os.Unsetenv(benchArgVar)
	os.Exit(benchRole(role, arg))
}

// benchRole serves role and returns the process's exit code.
func benchRole(role, arg string) int {
	if dir := os.Getenv(benchProfileVar); dir != "" {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.cpu", role, os.Getpid())))
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench role %s: profile: %v\n", role, err)
			return 1
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	if err := runBenchRole(role, arg); err != nil {
		fmt.Fprintf(os.Stderr, "bench role %s: %v\n", role, err)
		return 1
	}
	return 0
}

func runBenchRole(role, arg string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	signal.Ignore(syscall.SIGINT) // the parent ends us by closing stdin
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var serve func() error
	switch role {
	case roleUpstream, roleUpstreamLegacy:
		hs := &http.Server{Handler: benchUpstream(role == roleUpstreamLegacy)}
		defer hs.Close()
		serve = func() error { return hs.Serve(ln) }
	case roleFloor:
		up, target, _ := strings.Cut(arg, " ")
		h, stop, err := floorHandler(up, target)
		if err != nil {
			return err
		}
		defer stop()
		hs := &http.Server{Handler: h}
		defer hs.Close()
		serve = func() error { return hs.Serve(ln) }
	case roleGateway:
		cfg, err := config.Parse([]byte(arg), "bench.json", nil)
		if err != nil {
			return err
		}
		h, err := host.Open(ctx, cfg, &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, Forward: true})
		if err != nil {
			return err
		}
		defer h.Close()
		for _, s := range h.Servers() {
			if s.State != host.StateReady {
				return fmt.Errorf("upstream %s: %s: %s", s.Name, s.State, s.LastError)
			}
		}
		g := gateway.New(h, &gateway.Options{Version: "bench"})
		serve = func() error {
			return g.ServeHTTP(ctx, ln, gateway.HTTPOptions{Front: frontdoor.Options{Token: benchToken}})
		}
	default:
		return fmt.Errorf("unknown role")
	}
	served := make(chan error, 1)
	go func() { served <- serve() }()
	fmt.Printf("http://%s\n", ln.Addr())
	stdin := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(stdin)
	}()
	select {
	case <-stdin:
		// Stop serving and wait for it: the gateway shuts down as
		// `switchboard serve` does, before its host stops the upstream.
		cancel()
		ln.Close()
		<-served
		return nil
	case err := <-served:
		return err
	}
}

// startBenchRole starts a role in a re-executed test binary and returns
// its endpoint and process ID; it is stopped when the benchmark ends.
func startBenchRole(b *testing.B, role, arg string) (string, int) {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), benchRoleVar+"="+role, benchArgVar+"="+arg)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				b.Errorf("bench role %s: %v", role, err)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			b.Errorf("bench role %s did not stop within 10s of its stdin closing", role)
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("bench role %s: no endpoint: %v", role, err)
	}
	return strings.TrimSpace(line), cmd.Process.Pid
}

func BenchmarkEchoApart(b *testing.B) {
	for _, up := range []string{"http", "http-legacy", "stdio"} {
		b.Run("up="+up, func(b *testing.B) {
			env := newApartEnv(b, up)
			for _, size := range benchSizes {
				args := benchArgs(size.n)
				b.Run("size="+size.name, func(b *testing.B) {
					for _, conc := range benchConcurrency {
						b.Run(fmt.Sprintf("conc=%d", conc), func(b *testing.B) {
							for _, p := range []struct {
								name string
								cs   *mcp.ClientSession
								tool string
								hop  int // the process in the middle, if any
							}{
								{"direct", env.direct, "echo", 0},
								{"gateway", env.gateway, benchServer + "__echo", env.gatewayPID},
								{"floor", env.floor, "echo", env.floorPID},
								{"gateway-legacy", env.gatewayLegacy, benchServer + "__echo", env.gatewayPID},
							} {
								clocks := []benchClock{{"cpu-µs/op", benchTreeCPU}}
								if p.hop != 0 {
									clocks = append(clocks, benchClock{"hop-cpu-µs/op", func() (time.Duration, bool) {
										d, err := procCPU(p.hop)
										return d, err == nil
									}})
								}
								b.Run("path="+p.name, func(b *testing.B) {
									benchCallsCPU(b, p.cs, p.tool, args, size.n, conc, clocks...)
								})
							}
						})
					}
				})
			}
		})
	}
}

// newApartEnv is newBenchEnv with the upstream, the gateway and the
// forwarder in processes of their own.
func newApartEnv(b *testing.B, up string) *benchEnv {
	b.Helper()
	ctx := context.Background()
	var (
		direct   mcp.Transport
		upstream map[string]any
		upURL    string
	)
	switch up {
	case "http", "http-legacy":
		role := roleUpstream
		if up == "http-legacy" {
			role = roleUpstreamLegacy
		}
		upURL, _ = startBenchRole(b, role, "")
		direct = &mcp.StreamableClientTransport{Endpoint: upURL, HTTPClient: benchHTTPClient(nil)}
		upstream = map[string]any{"url": upURL, "trust": "trusted"}
	case "stdio":
		direct, upstream = benchStdio(b)
	default:
		b.Fatalf("unknown upstream %q", up)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-client", Version: "1"}, nil)
	connect := func(what string, t mcp.Transport, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
		cs, err := client.Connect(ctx, t, opts)
		if err != nil {
			b.Fatalf("connect to %s (%s upstream): %v", what, up, err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	env := &benchEnv{direct: connect("the upstream", direct, nil)}

	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{benchServer: upstream}})
	if err != nil {
		b.Fatal(err)
	}
	var gwURL string
	gwURL, env.gatewayPID = startBenchRole(b, roleGateway, string(cfg))
	gwURL += "/mcp"
	auth := http.Header{"Authorization": {"Bearer " + benchToken}}
	env.gateway = connect("the gateway", &mcp.StreamableClientTransport{Endpoint: gwURL, HTTPClient: benchHTTPClient(auth)}, nil)
	env.gatewayLegacy = connect("the gateway", &mcp.StreamableClientTransport{Endpoint: gwURL, HTTPClient: benchHTTPClient(auth)},
		&mcp.ClientSessionOptions{ProtocolVersion: benchLegacyVersion})
	if v := env.gatewayLegacy.InitializeResult().ProtocolVersion; v != benchLegacyVersion {
		b.Fatalf("legacy client to the gateway: protocol %s, want %s", v, benchLegacyVersion)
	}
	var floorURL string
	floorURL, env.floorPID = startBenchRole(b, roleFloor, up+" "+upURL)
	env.floor = connect("the floor forwarder", &mcp.StreamableClientTransport{Endpoint: floorURL, HTTPClient: benchHTTPClient(nil)}, nil)
	return env
}

// benchTreeCPU returns the CPU time (user + system) of this process and
// all its living descendants.
func benchTreeCPU() (time.Duration, bool) {
	var total time.Duration
	var walk func(pid int) error
	walk = func(pid int) error {
		d, err := procCPU(pid)
		if err != nil {
			return err
		}
		total += d
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return err
		}
		for _, t := range tasks {
			kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
			if err != nil {
				continue // the thread ended
			}
			for _, f := range strings.Fields(string(kids)) {
				kid, err := strconv.Atoi(f)
				if err != nil {
					return err
				}
				if err := walk(kid); err != nil && !errors.Is(err, os.ErrNotExist) {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(os.Getpid()); err != nil {
		return 0, false
	}
	return total, true
}
