//go:build linux

package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// goneTimeout bounds the waits for SIGKILLed processes to disappear. It is
// generous: the kernel is fast, a loaded CI machine may not be.
const goneTimeout = 20 * time.Second

// greet connects a go-sdk client over p's transport and calls the tool.
func greet(t *testing.T, p *Process) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "launcher-test-client", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(ctx, p.Transport(), nil)
	if err != nil {
		t.Fatalf("Connect: %v (stderr: %s)", err, p.StderrTail())
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "switchboard"}})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("CallTool content = %v, want one item", res.Content)
	}
	if got, ok := res.Content[0].(*mcp.TextContent); !ok || got.Text != "Hi switchboard" {
		t.Fatalf("CallTool content = %#v, want text %q", res.Content[0], "Hi switchboard")
	}
	return cs
}

// connectRaw connects p's transport and returns the first message the
// child sends, which must be a notification with the given method.
func connectRaw(t *testing.T, p *Process, method string) (mcp.Connection, *jsonrpc.Request) {
	t.Helper()
	conn, err := p.Transport().Connect(context.Background())
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	msg, err := conn.Read(context.Background())
	if err != nil {
		t.Fatalf("Read: %v (stderr: %s)", err, p.StderrTail())
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != method {
		t.Fatalf("first message = %#v, want notification %q", msg, method)
	}
	return conn, req
}

// exitSignal returns the signal that ended the child, or 0.
func exitSignal(t *testing.T, p *Process) syscall.Signal {
	t.Helper()
	var ee *ExitError
	if !errors.As(p.ExitErr(), &ee) {
		t.Fatalf("ExitErr = %v, want an *ExitError", p.ExitErr())
	}
	ws := ee.Status
	if !ws.Signaled() {
		return 0
	}
	return ws.Signal()
}

func TestMCPRoundTripAndGracefulStop(t *testing.T) {
	t.Parallel()
	p := start(t, childSpec(t, "mcp"))
	cs := greet(t, p)

	// Closing the session closes the transport: stage 1 (stdin EOF) is
	// enough for a well-behaved server, which exits 0.
	if err := cs.Close(); err != nil {
		t.Errorf("session Close: %v", err)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Done not closed after the session was closed")
	}
	if err := p.ExitErr(); err != nil {
		t.Errorf("ExitErr = %v, want nil (graceful exit on stdin EOF)", err)
	}
	if err := p.Fault(); err != nil {
		t.Errorf("Fault = %v, want nil", err)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("second Stop = %v", err)
	}
}

func TestTransportConnectsOnce(t *testing.T) {
	t.Parallel()
	spec := childSpec(t, "block")
	spec.StopStage = 500 * time.Millisecond // it ignores stdin: stage 1 expires
	p := start(t, spec)
	conn, _ := connectRaw(t, p, "ready")
	defer conn.Close()
	if _, err := p.Transport().Connect(context.Background()); err == nil {
		t.Error("second Connect succeeded, want an error")
	}
}

func TestConnectAfterStop(t *testing.T) {
	t.Parallel()
	p := start(t, childSpec(t, "mcp"))
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Transport().Connect(context.Background()); err == nil {
		t.Error("Connect after Stop succeeded, want an error")
	}
}

func TestStopIsIdempotentAndConcurrent(t *testing.T) {
	t.Parallel()
	p := start(t, childSpec(t, "mcp"))
	cs := greet(t, p)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			if i == 0 {
				errs[i] = cs.Close()
				return
			}
			errs[i] = p.Stop()
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if err := p.ExitErr(); err != nil {
		t.Errorf("ExitErr = %v, want nil", err)
	}
}

func TestStopEscalatesToSIGTERM(t *testing.T) {
	t.Parallel()
	spec := childSpec(t, "block")
	spec.StopStage = 2 * time.Second // stage 1 must expire, stage 2 must not
	p := start(t, spec)
	conn, _ := connectRaw(t, p, "ready")
	if err := conn.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if sig := exitSignal(t, p); sig != syscall.SIGTERM {
		t.Errorf("child ended by signal %v, want SIGTERM", sig)
	}
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	t.Parallel()
	spec := childSpec(t, "ignore-term")
	spec.StopStage = 2 * time.Second // stages 1 and 2 must expire, stage 3 must not
	p := start(t, spec)
	// "ready" is sent after SIGTERM is ignored, so the SIGTERM cannot
	// arrive first and make this test pass for the wrong reason.
	conn, _ := connectRaw(t, p, "ready")
	if err := conn.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if sig := exitSignal(t, p); sig != syscall.SIGKILL {
		t.Errorf("child ended by signal %v, want SIGKILL", sig)
	}
}

// shellWithGrandchild runs the child through sh, which first starts a
// long sleep in the background (a grandchild in the same process group),
// reports its pid on stderr, then execs this test binary in mode.
func shellWithGrandchild(t *testing.T, mode string) Spec {
	spec := childSpec(t, mode)
	spec.Args = []string{"-c", `sleep 1000 & echo "grandchild=$!" >&2; exec "$0"`, spec.Command}
	spec.Command = "sh"
	return spec
}

func grandchildPID(t *testing.T, p *Process) int {
	t.Helper()
	for _, line := range strings.Split(p.StderrTail(), "\n") {
		if v, ok := strings.CutPrefix(line, "grandchild="); ok {
			pid, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return hostPID(p, pid)
		}
	}
	t.Fatalf("no grandchild pid in stderr %q", p.StderrTail())
	return 0
}

// assertGroupGone waits until no live process is left in pgid and checks
// that whatever is left (zombies waiting for init) is not ours to reap.
func assertGroupGone(t *testing.T, pgid int) {
	t.Helper()
	proc.WaitGone(t, goneTimeout, func() bool { return len(proc.Live(proc.InGroup(pgid))) == 0 })
	for _, i := range proc.InGroup(pgid) {
		if i.PPID == os.Getpid() {
			t.Errorf("group %d: our unreaped child %v", pgid, i)
		}
	}
}

func TestGrandchildDiesWhenChildExitsGracefully(t *testing.T) {
	t.Parallel()
	p := start(t, shellWithGrandchild(t, "mcp"))
	cs := greet(t, p) // the child is the exec'd server, so sleep was forked

	var grandchildren []proc.Info
	for _, i := range proc.Live(proc.InGroup(p.PID())) {
		if i.PID != p.PID() && len(i.Cmdline) > 0 && i.Cmdline[0] == "sleep" {
			grandchildren = append(grandchildren, i)
		}
	}
	if len(grandchildren) == 0 {
		t.Fatalf("no grandchild in group %d: %v", p.PID(), proc.InGroup(p.PID()))
	}

	if got := grandchildPID(t, p); got != grandchildren[0].PID {
		t.Errorf("grandchild pid from stderr = %d, from /proc %v", got, grandchildren)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("session Close: %v", err)
	}
	// The server exited on its own at stage 1; the group was still killed.
	if err := p.ExitErr(); err != nil {
		t.Errorf("ExitErr = %v, want nil", err)
	}
	assertReaped(t, p)
	assertGroupGone(t, p.PID())
	for _, g := range grandchildren {
		if proc.Alive(g.PID) {
			t.Errorf("grandchild still alive: %v", g)
		}
	}
}

// hostPID translates a pid that p's server reported, as seen in its PID
// namespace when it runs under the shim, into ours; 0 once it is gone.
func hostPID(p *Process, pid int) int {
	if p.shim == nil {
		return pid
	}
	return proc.HostPID(p.PID(), pid)
}

func TestGrandchildDiesWhenChildExitsAlone(t *testing.T) {
	t.Parallel()
	p := start(t, shellWithGrandchild(t, "exit"))
	<-p.Done()
	// No Stop yet: the reap alone must have killed the group.
	assertGroupGone(t, p.PID())
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	gc := grandchildPID(t, p)
	if proc.Alive(gc) {
		t.Errorf("grandchild %d still alive", gc)
	}
}

func TestGrandchildDiesOnSIGKILLStage(t *testing.T) {
	t.Parallel()
	spec := shellWithGrandchild(t, "ignore-term")
	spec.StopStage = time.Second
	p := start(t, spec)
	conn, _ := connectRaw(t, p, "ready")
	if err := conn.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	assertReaped(t, p)
	assertGroupGone(t, p.PID())
	if gc := grandchildPID(t, p); proc.Alive(gc) {
		t.Errorf("grandchild %d still alive", gc)
	}
}

// TestEscapedProcessCannotBlockStop: a process that left the group (setsid)
// keeps stdout and stderr open; Stop must still return, and the session end.
func TestEscapedProcessCannotBlockStop(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	spec := childSpec(t, "mcp")
	spec.Args = []string{"-c", `setsid sleep 1000 & echo "escaped=$!" >&2; exec "$0"`, spec.Command}
	spec.Command = "sh"
	spec.StopStage = 500 * time.Millisecond
	spec.direct = true // under the shim, the escaped process dies with the server
	p := start(t, spec)

	// escapedPID returns the pid of the sleep once it has left the group.
	escapedPID := func() int {
		for _, line := range strings.Split(p.StderrTail(), "\n") {
			if v, ok := strings.CutPrefix(line, "escaped="); ok {
				pid, _ := strconv.Atoi(v)
				if info, err := proc.Get(pid); err == nil && !info.Zombie() && info.PGID == pid &&
					len(info.Cmdline) > 0 && info.Cmdline[0] == "sleep" {
					return pid
				}
			}
		}
		return 0
	}
	proc.WaitGone(t, goneTimeout, func() bool { return escapedPID() != 0 })
	escaped := escapedPID()
	t.Cleanup(func() { syscall.Kill(escaped, syscall.SIGKILL) })

	cs := greet(t, p)
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	cs.Wait() // returns: Stop closed our end of stdout
	cs.Close()
	if err := p.ExitErr(); err != nil {
		t.Errorf("ExitErr = %v, want nil", err)
	}
	if !proc.Alive(escaped) {
		t.Errorf("the escaped process %d is gone; the test proved nothing", escaped)
	}
}

func TestEnvAllowlist(t *testing.T) {
	// Not parallel: t.Setenv.
	t.Setenv("SWITCHBOARD_TEST_SECRET", "hunter2")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "also-secret")
	t.Setenv("HOME", "/home/test")
	t.Setenv("TMPDIR", "/tmp/test")
	t.Setenv("LANG", "C.UTF-8")
	spec := childSpec(t, "print-env")
	spec.Env["EXTRA"] = "1"
	spec.Env["LANG"] = "fr_FR.UTF-8" // the spec's value wins
	p := start(t, spec)
	<-p.Done()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}

	got := map[string]string{}
	for _, line := range strings.Split(p.StderrTail(), "\n") {
		if kv, ok := strings.CutPrefix(line, "env:"); ok {
			k, v, _ := strings.Cut(kv, "=")
			got[k] = v
		}
	}
	want := map[string]string{
		"HOME":   "/home/test",
		"PATH":   os.Getenv("PATH"),
		"TMPDIR": "/tmp/test",
		"LANG":   "fr_FR.UTF-8",
		"EXTRA":  "1",
		"GORACE": "atexit_sleep_ms=0",
		modeVar:  "print-env",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("child environment mismatch (-want +got):\n%s", diff)
	}
}

func TestEnvFromLookupEnv(t *testing.T) {
	t.Parallel()
	spec := childSpec(t, "print-env")
	spec.LookupEnv = fakeEnv(map[string]string{"HOME": "/fake", "PATH": os.Getenv("PATH"), "SECRET": "x"})
	p := start(t, spec)
	<-p.Done()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	tail := p.StderrTail()
	if !strings.Contains(tail, "env:HOME=/fake\n") || strings.Contains(tail, "SECRET") || strings.Contains(tail, "TMPDIR") {
		t.Errorf("child environment from a fake host:\n%s", tail)
	}
}

func TestInvalidEnv(t *testing.T) {
	t.Parallel()
	for _, env := range []map[string]string{{"": "x"}, {"A=B": "x"}, {"A\x00": "x"}, {"A": "x\x00y"}} {
		spec := childSpec(t, "exit")
		spec.Env = env
		_, err := Start(spec)
		var se *StartError
		if !errors.As(err, &se) || errors.Is(err, ErrProgramNotFound) {
			t.Errorf("Start with env %q: error %v, want a *StartError", env, err)
		}
	}
}

func fakeEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := childSpec(t, "print-env")
	spec.Dir = dir
	p := start(t, spec)
	<-p.Done()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tail := p.StderrTail(); !strings.Contains(tail, "cwd:"+want+"\n") {
		t.Errorf("stderr %q does not report cwd %q", tail, want)
	}
}

func TestMissingDir(t *testing.T) {
	t.Parallel()
	spec := childSpec(t, "exit")
	spec.Dir = filepath.Join(t.TempDir(), "nope")
	_, err := Start(spec)
	var se *StartError
	if !errors.As(err, &se) || se.Server != spec.Server || errors.Is(err, ErrProgramNotFound) {
		t.Fatalf("Start with a missing dir: %v, want a *StartError that is not ErrProgramNotFound", err)
	}
	if !strings.Contains(err.Error(), "nope") {
		t.Errorf("error %q does not name the directory", err)
	}
}

func TestMissingProgram(t *testing.T) {
	t.Parallel()
	_, err := Start(Spec{
		Server:    "gh",
		Command:   "npx-switchboard-missing",
		Args:      []string{"-y", "@modelcontextprotocol/server-github"},
		LookupEnv: fakeEnv(map[string]string{"PATH": "/usr/bin:/bin"}),
	})
	want := `server "gh": program "npx-switchboard-missing" not found in PATH (/usr/bin:/bin): install it or set "command" to its full path`
	if err == nil || err.Error() != want {
		t.Fatalf("Start error = %v, want %q", err, want)
	}
	if !errors.Is(err, ErrProgramNotFound) {
		t.Errorf("errors.Is(%v, ErrProgramNotFound) = false", err)
	}
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("error %T is not a *StartError", err)
	}
	wantSE := &StartError{Server: "gh", Program: "npx-switchboard-missing", PATH: "/usr/bin:/bin", Err: ErrProgramNotFound}
	if diff := cmp.Diff(*wantSE, *se, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("StartError mismatch (-want +got):\n%s", diff)
	}
}

func TestMissingProgramWithSlash(t *testing.T) {
	t.Parallel()
	_, err := Start(Spec{Server: "local", Command: "./bin/server", Dir: t.TempDir()})
	want := `server "local": program "./bin/server" not found: check "command" (a relative path is relative to "cwd")`
	if err == nil || err.Error() != want || !errors.Is(err, ErrProgramNotFound) {
		t.Fatalf("Start error = %v, want %q", err, want)
	}
}

func TestEmptyCommand(t *testing.T) {
	t.Parallel()
	_, err := Start(Spec{Server: "empty"})
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `server "empty"`) {
		t.Fatalf("Start error = %v, want a *StartError naming the server", err)
	}
}

// TestLookPathUsesChildPATH: the program is found in the PATH the child
// gets, not in ours.
func TestLookPathUsesChildPATH(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "fake-server")); err != nil {
		t.Fatal(err)
	}
	host := fakeEnv(map[string]string{"PATH": "/usr/bin:/bin"})

	// Found through the PATH given in the spec's env only.
	p := start(t, Spec{
		Server:    "fake",
		Command:   "fake-server",
		Env:       map[string]string{"PATH": bin, modeVar: "exit", "GORACE": "atexit_sleep_ms=0"},
		LookupEnv: host,
	})
	<-p.Done()
	if err := p.ExitErr(); err != nil {
		t.Errorf("ExitErr = %v", err)
	}

	// Not found when only the host PATH has it.
	_, err = Start(Spec{
		Server:    "fake",
		Command:   "fake-server",
		Env:       map[string]string{"PATH": "/usr/bin", modeVar: "exit"},
		LookupEnv: fakeEnv(map[string]string{"PATH": bin}),
	})
	if !errors.Is(err, ErrProgramNotFound) || !strings.Contains(err.Error(), "PATH (/usr/bin)") {
		t.Errorf("Start error = %v, want not found in PATH (/usr/bin)", err)
	}

	// A relative command is relative to Dir.
	p = start(t, Spec{
		Server:    "fake",
		Command:   "./fake-server",
		Dir:       bin,
		Env:       map[string]string{modeVar: "exit", "GORACE": "atexit_sleep_ms=0"},
		LookupEnv: host,
	})
	<-p.Done()
	if err := p.ExitErr(); err != nil {
		t.Errorf("ExitErr = %v", err)
	}
}

func TestStderrTailBoundedAndEscaped(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{0, 4096} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			t.Parallel()
			spec := childSpec(t, "noisy")
			spec.StderrLimit = limit
			p := start(t, spec)
			<-p.Done()
			if err := p.Stop(); err != nil {
				t.Fatal(err)
			}
			wantLimit := limit
			if wantLimit == 0 {
				wantLimit = DefaultStderrLimit
			}
			raw, _ := p.tail.Bytes()
			if len(raw) > wantLimit || len(raw) < wantLimit-utf8Max {
				t.Errorf("kept %d raw bytes, want about %d", len(raw), wantLimit)
			}
			tail := p.StderrTail()
			if !strings.HasSuffix(tail, `END\x1b]0;pwned\x07`+"\n") {
				t.Errorf("tail does not end with the escaped marker: %q", tail[max(0, len(tail)-80):])
			}
			if strings.Contains(tail, "line 0000 ") {
				t.Error("tail still has the first line")
			}
			for _, want := range []string{`\x1b[31mred\x1b[0m`, `\x85raw`, `\u0085c1`, `\u202eevil\x0d`} {
				if !strings.Contains(tail, want) {
					t.Errorf("tail lacks %q", want)
				}
			}
			for _, bad := range []string{"\x1b", "\r", "\x07", "\u0085", "\u202e"} {
				if strings.Contains(tail, bad) {
					t.Errorf("tail contains raw %q", bad)
				}
			}
		})
	}
}

const utf8Max = 4

func TestStderrLogged(t *testing.T) {
	t.Parallel()
	var buf testkit.Buffer
	spec := childSpec(t, "stderr-log")
	spec.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p := start(t, spec)
	<-p.Done()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	log := buf.String()
	for _, want := range []string{`line="hello \\x1b[2Jworld"`, `line="second line"`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, "\x1b") {
		t.Errorf("log contains a raw ESC:\n%s", log)
	}
}

// TestGiantFrame: a 64 MiB line with a 1 MiB cap fails the server with
// ErrFrameTooLarge, stops it, and costs a few MiB of memory, not 64.
// Not parallel, so the allocation figures are this test's own.
func TestGiantFrame(t *testing.T) {
	spec := childSpec(t, "giant")
	spec.Server = "giant"
	spec.MaxFrame = 1 << 20
	spec.StopStage = time.Second // the child blocks in write: stage 1 expires

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	p := start(t, spec)
	client := mcp.NewClient(&mcp.Implementation{Name: "launcher-test-client", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(context.Background(), p.Transport(), nil)
	if err == nil {
		cs.Close()
		t.Fatal("Connect succeeded, want an error")
	}
	t.Logf("Connect: %v", err) // go-sdk does not wrap: Fault is the typed channel
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}

	var after runtime.MemStats
	runtime.ReadMemStats(&after)

	fault := p.Fault()
	if !errors.Is(fault, ErrFrameTooLarge) {
		t.Fatalf("Fault = %v, want ErrFrameTooLarge", fault)
	}
	if want := `server "giant": stdout frame exceeds 1 MiB cap`; fault.Error() != want {
		t.Errorf("Fault = %q, want %q", fault, want)
	}
	if p.ExitErr() == nil {
		t.Error("ExitErr = nil, want the child killed by the stop sequence")
	}
	const bound = 24 << 20
	if d := after.TotalAlloc - before.TotalAlloc; d > bound {
		t.Errorf("allocated %d MiB while reading a 64 MiB frame with a 1 MiB cap; want < %d MiB", d>>20, bound>>20)
	}
	t.Logf("allocated %.1f MiB", float64(after.TotalAlloc-before.TotalAlloc)/(1<<20))
}

// TestPdeathsig: when the host dies, its servers die with it, even those
// in process groups of their own.
func TestPdeathsig(t *testing.T) {
	t.Parallel()
	spec := childSpec(t, "supervisor")
	spec.direct = true // its own shim's namespace would kill the grandchild
	p := start(t, spec)
	conn, req := connectRaw(t, p, "grandchild")
	defer conn.Close()
	var params struct{ PID int }
	if err := json.Unmarshal(req.Params, &params); err != nil || params.PID <= 0 {
		t.Fatalf("grandchild params %s: %v", req.Params, err)
	}
	gc := params.PID
	t.Cleanup(func() {
		// Only if the test failed: don't leave it behind.
		if info, err := proc.Get(gc); err == nil && !info.Zombie() && info.PGID == gc {
			syscall.Kill(-gc, syscall.SIGKILL)
		}
	})
	info, err := proc.Get(gc)
	if err != nil || info.Zombie() || info.PGID != gc || info.PPID != p.PID() {
		t.Fatalf("grandchild %d: %v %v, want alive, in its own group, child of %d", gc, info, err, p.PID())
	}

	// Kill the supervisor alone; nothing but the parent-death signal reaches
	// the grandchild, whose group is its own.
	if err := syscall.Kill(p.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	proc.WaitGone(t, goneTimeout, func() bool { return !proc.Alive(gc) })
}

// TestForkerSurvivesLockedThreadExit: the parent-death signal follows the
// forking thread, so a Start from a goroutine that exits while locked to
// its thread must not get the child killed (go.dev/issue/27505).
func TestForkerSurvivesLockedThreadExit(t *testing.T) {
	t.Parallel()
	type result struct {
		p   *Process
		tid int
		err error
	}
	spec := childSpec(t, "mcp")
	ch := make(chan result, 1)
	// startLocked starts the child from a goroutine locked to its thread,
	// which it never unlocks: the runtime destroys the thread when the
	// goroutine exits.
	startLocked := func() {
		runtime.LockOSThread()
		p, err := Start(spec)
		ch <- result{p, syscall.Gettid(), err}
	}
	go func() {
		// The runtime wedges the main thread instead of destroying it. If
		// this goroutine is there, it keeps the main thread locked while
		// another goroutine, necessarily on another thread, does the Start.
		runtime.LockOSThread()
		if syscall.Gettid() != os.Getpid() {
			startLocked()
			return
		}
		inner := make(chan struct{})
		go func() {
			defer close(inner)
			startLocked()
		}()
		<-inner
		runtime.UnlockOSThread()
	}()
	r := <-ch
	if r.tid == os.Getpid() {
		t.Fatal("Start ran on the main thread")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	p := r.p
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		assertReaped(t, p)
	})
	task := fmt.Sprintf("/proc/self/task/%d", r.tid)
	proc.WaitGone(t, goneTimeout, func() bool {
		_, err := os.Stat(task)
		return errors.Is(err, os.ErrNotExist)
	})
	// Had the child been forked on that thread, SIGKILL would have been
	// queued for it before the thread vanished, and it could not answer.
	cs := greet(t, p)
	cs.Close()
	if err := p.ExitErr(); err != nil {
		t.Errorf("ExitErr = %v, want a clean exit", err)
	}
}

// TestAbortSkipsGrace: Abort sends SIGTERM without waiting out stage 1. The
// stage is set far beyond the test's patience, so only the skip can pass.
func TestAbortSkipsGrace(t *testing.T) {
	t.Parallel()
	spec := childSpec(t, "block")
	spec.StopStage = 10 * time.Minute
	p := start(t, spec)
	connectRaw(t, p, "ready")
	go p.Abort()
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Abort waited out the first stop stage")
	}
	if sig := exitSignal(t, p); sig != syscall.SIGTERM {
		t.Errorf("child ended by signal %v, want SIGTERM", sig)
	}
}

// TestStderrMasked: Spec.Mask rewrites the tail and each logged line, and
// the tail keeps its bound.
func TestStderrMasked(t *testing.T) {
	t.Parallel()
	const secret = "launcher-secret-1"
	var buf testkit.Buffer
	spec := childSpec(t, "print-env")
	spec.Env["API_TOKEN"] = secret
	spec.Mask = func(s string) string { return strings.ReplaceAll(s, secret, "***") }
	spec.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p := start(t, spec)
	<-p.Done()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if tail := p.StderrTail(); strings.Contains(tail, secret) || !strings.Contains(tail, "env:API_TOKEN=***\n") {
		t.Errorf("tail not masked:\n%s", tail)
	}
	if log := buf.String(); strings.Contains(log, secret) || !strings.Contains(log, `line="env:API_TOKEN=***"`) {
		t.Errorf("log not masked:\n%s", log)
	}
	if raw, _ := p.tail.Bytes(); !strings.Contains(string(raw), secret) {
		t.Error("the raw tail lost the text it masks on reading")
	}
}

// requireShim skips the test where this kernel or user cannot create PID
// namespaces, and fails it if a server that could does not run under the
// shim.
func requireShim(t *testing.T) {
	t.Helper()
	p, err := Start(childSpec(t, "exit"))
	if err != nil {
		t.Fatal(err)
	}
	p.Stop()
	if p.shim == nil {
		if noNamespaces.Load() {
			t.Skip("this kernel or user cannot create PID namespaces")
		}
		t.Fatal("the server does not run under the shim")
	}
}

// TestSetsidDescendantDiesWithServer: a descendant that left the server's
// process group and session (setsid) is in the server's PID namespace,
// and dies with the shim when the server stops.
func TestSetsidDescendantDiesWithServer(t *testing.T) {
	t.Parallel()
	spec := childSpec(t, "mcp")
	spec.Args = []string{"-c", `setsid sleep 1000 & echo "escaped=$!" >&2; exec "$0"`, spec.Command}
	spec.Command = "sh"
	requireShim(t)
	p := start(t, spec)
	cs := greet(t, p)

	escaped := 0
	proc.WaitGone(t, goneTimeout, func() bool {
		for _, line := range strings.Split(p.StderrTail(), "\n") {
			if v, ok := strings.CutPrefix(line, "escaped="); ok {
				n, _ := strconv.Atoi(v)
				pid := hostPID(p, n)
				if info, err := proc.Get(pid); err == nil && info.PGID == pid && len(info.Cmdline) > 0 && info.Cmdline[0] == "sleep" {
					escaped = pid
					return true
				}
			}
		}
		return false
	})
	t.Cleanup(func() { syscall.Kill(escaped, syscall.SIGKILL) })

	cs.Close()
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := p.ExitErr(); err != nil {
		t.Errorf("ExitErr = %v, want nil", err)
	}
	proc.WaitGone(t, goneTimeout, func() bool { return !proc.Alive(escaped) })
}

// TestSIGTERMWaitIsTermGrace: a server that ignores SIGTERM is killed
// TermGrace after it, not a whole stop stage later. The stop stage is a
// minute, so that only a wait of TermGrace ends well within it however
// busy the machine.
func TestSIGTERMWaitIsTermGrace(t *testing.T) {
	t.Parallel()
	spec := childSpec(t, "ignore-term")
	spec.StopStage = time.Minute
	p := start(t, spec)
	connectRaw(t, p, "ready")
	begin := time.Now()
	if err := p.Abort(); err != nil { // no stage 1: SIGTERM at once
		t.Fatal(err)
	}
	took := time.Since(begin)
	if sig := exitSignal(t, p); sig != syscall.SIGKILL {
		t.Errorf("child ended by signal %v, want SIGKILL", sig)
	}
	if took < DefaultTermGrace || took >= spec.StopStage {
		t.Errorf("stopped %v after SIGTERM, want from TermGrace (%v) to well under StopStage (%v)",
			took, DefaultTermGrace, spec.StopStage)
	}
	t.Logf("a server ignoring SIGTERM stopped in %v", took)
}

// TestLeftoversOfAKilledHostDieAtTheNextStart: without a namespace, a
// killed host's server dies by its parent-death signal but its grandchild
// does not; the next Start with the same LeftoverDir kills it and says so.
func TestLeftoversOfAKilledHostDieAtTheNextStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := childSpec(t, "crash-host")
	spec.Env[leftoverVar] = dir
	spec.direct = true
	host := start(t, spec)
	conn, req := connectRaw(t, host, "grandchild")
	defer conn.Close()
	var params struct{ PID int }
	if err := json.Unmarshal(req.Params, &params); err != nil || params.PID <= 0 {
		t.Fatalf("grandchild params %s: %v", req.Params, err)
	}
	group := params.PID
	var sleeps []int
	proc.WaitGone(t, goneTimeout, func() bool {
		sleeps = nil
		for _, i := range proc.Live(proc.InGroup(group)) {
			if len(i.Cmdline) > 0 && i.Cmdline[0] == "sleep" {
				sleeps = append(sleeps, i.PID)
			}
		}
		return len(sleeps) > 0
	})
	t.Cleanup(func() { syscall.Kill(-group, syscall.SIGKILL) })
	if records, _ := filepath.Glob(filepath.Join(dir, "*.pgrp")); len(records) != 1 {
		t.Fatalf("records in %s: %v, want one", dir, records)
	}

	// The host dies without stopping anything.
	if err := syscall.Kill(host.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-host.Done()
	proc.WaitGone(t, goneTimeout, func() bool { return !proc.Alive(group) })
	for _, pid := range sleeps {
		if !proc.Alive(pid) {
			t.Fatalf("grandchild %d died with the host; the test proves nothing", pid)
		}
	}

	var logged strings.Builder
	next := childSpec(t, "exit")
	next.LeftoverDir = dir
	next.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	p, err := Start(next) // the leftovers are killed before it returns
	if err != nil {
		t.Fatal(err)
	}
	warning := logged.String()
	if err := p.Stop(); err != nil {
		t.Error(err)
	}
	proc.WaitGone(t, goneTimeout, func() bool { return len(proc.Live(proc.InGroup(group))) == 0 })
	if !strings.Contains(warning, "left behind") {
		t.Errorf("no warning logged: %q", warning)
	}
	if records, _ := filepath.Glob(filepath.Join(dir, "*.pgrp")); len(records) != 0 {
		t.Errorf("records left: %v", records)
	}
}
