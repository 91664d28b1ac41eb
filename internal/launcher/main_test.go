//go:build linux

package launcher

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// The tests re-execute their own binary as the child (the fork-and-exec
// trick of go-sdk's mcp/cmd_test.go). The launcher filters the child's
// environment, so the mode travels in Spec.Env.
const modeVar = "LAUNCHER_TEST_MODE"

// childModes are the behaviours a child can be asked for.
var childModes = map[string]func(){
	"mcp":          runMCPServer,   // a real go-sdk server with a "greet" tool; exits on stdin EOF
	"print-env":    runPrintEnv,    // environment and cwd to stderr, then exit 0
	"exit":         func() {},      // exit 0 at once
	"block":        runBlock,       // announce readiness, ignore stdin, wait for a signal
	"ignore-term":  runIgnoreTerm,  // same, with SIGTERM ignored
	"noisy":        runNoisy,       // >64 KiB of stderr full of escape sequences
	"giant":        runGiant,       // a 64 MiB stdout frame
	"supervisor":   runSupervisor,  // launch a "block" child of its own, report its pid
	"stderr-log":   runStderrLog,   // two short stderr lines
	"crash-host":   runCrashHost,   // launch sh with a grandchild and "block" without the shim, report the sh's pid
	"sandbox-host": runSandboxHost, // start the hostile server sandboxed, have it setsid a child, report it, wait to be killed
}

func TestMain(m *testing.M) {
	MaybeRunShim()
	hostile.MaybeRunChild()
	if mode := os.Getenv(modeVar); mode != "" {
		run, ok := childModes[mode]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown %s %q\n", modeVar, mode)
			os.Exit(2)
		}
		run()
		os.Exit(0)
	}
	code := m.Run()
	if code == 0 && !proc.Eventually(10*time.Second, func() bool { return launcherGoroutines() == "" }) {
		fmt.Fprintf(os.Stderr, "leaked launcher goroutines:\n%s\n", launcherGoroutines())
		code = 1
	}
	os.Exit(code)
}

// launcherGoroutines returns the stacks of goroutines running launcher code
// (not test code). Every one of them has an owner that must have waited for
// it by the time all Processes are stopped.
func launcherGoroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var leaked []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "internal/launcher.(*Process).") || strings.Contains(g, "internal/launcher.forkLoop") {
			leaked = append(leaked, g)
		}
	}
	return strings.Join(leaked, "\n\n")
}

// childSpec returns a Spec that runs this test binary in mode, with stop
// stages long enough never to expire by accident on a loaded machine; tests
// that want the stages to expire set StopStage themselves.
func childSpec(t testing.TB, mode string) Spec {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{
		Server:  "test-" + mode,
		Command: self,
		Env: map[string]string{
			modeVar: mode,
			// A race-enabled binary sleeps 1 s at exit by default.
			"GORACE": "atexit_sleep_ms=0",
		},
		StopStage: 20 * time.Second,
	}
}

// start starts spec and registers a cleanup that stops the process and
// checks that the direct child was reaped.
func start(t testing.TB, spec Spec) *Process {
	t.Helper()
	p, err := Start(spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		assertReaped(t, p)
	})
	return p
}

// assertReaped checks that p's child is not left as our zombie.
func assertReaped(t testing.TB, p *Process) {
	t.Helper()
	select {
	case <-p.Done():
	default:
		t.Fatalf("pid %d: Done not closed after Stop", p.PID())
	}
	for _, z := range proc.Zombies(os.Getpid()) {
		if z.PID == p.PID() {
			t.Errorf("pid %d is our zombie after Stop: %v", p.PID(), z)
		}
	}
}

// --- child modes ---

type greetArgs struct {
	Name string `json:"name"`
}

func runMCPServer() {
	server := mcp.NewServer(&mcp.Implementation{Name: "launcher-test", Version: "v0.0.1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "say hi"},
		func(ctx context.Context, req *mcp.CallToolRequest, args greetArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hi " + args.Name}}}, nil, nil
		})
	// Run returns when stdin reaches EOF: stage 1 of the stop sequence.
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "server ended:", err)
	}
}

func runPrintEnv() {
	env := os.Environ()
	slices.Sort(env)
	for _, kv := range env {
		fmt.Fprintf(os.Stderr, "env:%s\n", kv)
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = "error: " + err.Error()
	}
	fmt.Fprintf(os.Stderr, "cwd:%s\n", wd)
}

// ready tells the test, over stdout, that the child is set up.
func ready() {
	os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"ready"}` + "\n")
}

// blockForever waits for a signal to end the process; it ignores stdin.
func blockForever() {
	for {
		// The test binary must not look deadlocked to the Go runtime, so
		// this is a sleep rather than an empty select.
		time.Sleep(time.Hour)
	}
}

func runBlock() {
	ready()
	blockForever()
}

func runIgnoreTerm() {
	signal.Ignore(syscall.SIGTERM)
	ready()
	blockForever()
}

func runNoisy() {
	// ~200 KiB of lines with terminal escapes, raw C1 bytes, encoded C1
	// runes and bidi overrides, then a marker line.
	for i := range 2000 {
		fmt.Fprintf(os.Stderr, "line %04d \x1b[31mred\x1b[0m \x85raw \u0085c1 \u202eevil\r %s\n", i, strings.Repeat("x", 40))
	}
	os.Stderr.WriteString("END\x1b]0;pwned\x07\n")
}

func runGiant() {
	// A frame go-sdk's decoder would keep reading (an unterminated JSON
	// string), 64 MiB long. Writes block once the launcher stops reading;
	// the stop sequence ends that.
	os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"x","params":{"pad":"`)
	chunk := []byte(strings.Repeat("a", 64<<10))
	for range 1024 {
		if _, err := os.Stdout.Write(chunk); err != nil {
			break
		}
	}
	blockForever()
}

func runSupervisor() {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	inner, err := Start(Spec{Server: "inner", Command: self, Env: map[string]string{modeVar: "block", "GORACE": os.Getenv("GORACE")}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Report only once the inner server is ready: killed before it wrote
	// "ready", it would die of SIGPIPE and prove nothing.
	conn, err := inner.Transport().Connect(context.Background())
	if err == nil {
		_, err = conn.Read(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf(`{"jsonrpc":"2.0","method":"grandchild","params":{"pid":%d}}`+"\n", inner.PID())
	blockForever()
}

func runStderrLog() {
	os.Stderr.WriteString("hello \x1b[2Jworld\nsecond line")
}

// leftoverVar passes Spec.LeftoverDir to a "crash-host" child.
const leftoverVar = "LAUNCHER_TEST_LEFTOVERS"

func runCrashHost() {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	inner, err := Start(Spec{Server: "inner", Command: "sh",
		Args:        []string{"-c", `sleep 1000 & exec "$0"`, self},
		Env:         map[string]string{modeVar: "block", "GORACE": os.Getenv("GORACE")},
		LeftoverDir: os.Getenv(leftoverVar),
		direct:      true,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf(`{"jsonrpc":"2.0","method":"grandchild","params":{"pid":%d}}`+"\n", inner.PID())
	blockForever()
}
