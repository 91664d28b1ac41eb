//go:build linux

package launcher

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/sandbox"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// A victimHome is a user's home holding what a hostile server is after:
// Switchboard's home with creds.json, an SSH key, a shell profile.
type victimHome struct {
	home, switchboard, creds, sshKey, bashrc string
}

const (
	credsText  = `{"github":"ghp_canary_token_of_another_server"}`
	sshText    = "-----BEGIN OPENSSH PRIVATE KEY----- canary"
	bashrcText = "# the user's own profile\n"
)

func newVictimHome(t testing.TB) victimHome {
	t.Helper()
	h := victimHome{home: t.TempDir()}
	h.switchboard = filepath.Join(h.home, ".switchboard")
	h.creds = filepath.Join(h.switchboard, "creds.json")
	h.sshKey = filepath.Join(h.home, ".ssh", "id_ed25519")
	h.bashrc = filepath.Join(h.home, ".bashrc")
	for path, text := range map[string]string{h.creds: credsText, h.sshKey: sshText, h.bashrc: bashrcText} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// hostileSpec runs the hostile server's escape mode under settings, with
// h as the user's home.
func hostileSpec(t testing.TB, h victimHome, settings *sandbox.Settings) Spec {
	t.Helper()
	spec := childSpec(t, "hostile")
	spec.Server = "hostile"
	spec.Env = map[string]string{hostile.ModeVar: hostile.ModeEscape, "GORACE": "atexit_sleep_ms=0"}
	spec.Sandbox = settings
	spec.SwitchboardHome = h.switchboard
	spec.CacheDir = t.TempDir()
	spec.LookupEnv = fakeEnv(map[string]string{"HOME": h.home, "PATH": os.Getenv("PATH")})
	return spec
}

// attempter calls the hostile server's attempt tool.
type attempter struct {
	t  testing.TB
	cs *mcp.ClientSession
	p  *Process
}

func connectHostile(t testing.TB, p *Process) *attempter {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "sandbox-test", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(context.Background(), p.Transport(), nil)
	if err != nil {
		t.Fatalf("Connect: %v (stderr: %s)", err, p.StderrTail())
	}
	t.Cleanup(func() { cs.Close() })
	return &attempter{t, cs, p}
}

// try returns the attempt's outcome text, or the call's error.
func (a *attempter) try(args map[string]any) (string, error) {
	res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "attempt", Arguments: args})
	if err != nil {
		return "", err
	}
	if len(res.Content) != 1 {
		return "", fmt.Errorf("content %v", res.Content)
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

func (a *attempter) denied(args map[string]any) string {
	a.t.Helper()
	out, err := a.try(args)
	if err != nil {
		a.t.Fatalf("attempt %v: %v (stderr: %s)", args, err, a.p.StderrTail())
	}
	if !strings.HasPrefix(out, "denied ") {
		a.t.Errorf("attempt %v: %s, want denied", args, out)
	}
	return out
}

func (a *attempter) allowed(args map[string]any) string {
	a.t.Helper()
	out, err := a.try(args)
	if err != nil {
		a.t.Fatalf("attempt %v: %v (stderr: %s)", args, err, a.p.StderrTail())
	}
	if !strings.HasPrefix(out, "ok ") {
		a.t.Errorf("attempt %v: %s, want ok", args, out)
	}
	return out
}

// requireProtections skips the test when this system lacks one of prots
// (as root on the machines CI uses, none is missing).
func requireProtections(t *testing.T, p *Process, prots ...string) {
	t.Helper()
	for _, m := range p.Sandbox().Missing {
		for _, want := range prots {
			if m.Protection == want {
				if os.Getenv("SWITCHBOARD_REQUIRE_SANDBOX") == "1" {
					t.Fatalf("%s is missing here (%s), and SWITCHBOARD_REQUIRE_SANDBOX=1", want, m.Code)
				}
				t.Skipf("%s is missing here: %s (%s)", want, m.Detail, m.Code)
			}
		}
	}
}

// TestSandboxFiles: under the default sandbox a hostile server reads
// neither Switchboard's creds.json nor an SSH key, writes neither the
// user's shell profile nor a file outside its paths, and still reads the
// system and writes its private temporary directory.
func TestSandboxFiles(t *testing.T) {
	t.Parallel()
	requireShim(t)
	h := newVictimHome(t)
	outside := filepath.Join(t.TempDir(), "planted")
	p := start(t, hostileSpec(t, h, &sandbox.Settings{}))
	requireProtections(t, p, sandbox.Files)
	a := connectHostile(t, p)

	a.denied(map[string]any{"what": "read", "path": h.creds})
	a.denied(map[string]any{"what": "read", "path": h.sshKey})
	a.denied(map[string]any{"what": "write", "path": h.bashrc})
	a.denied(map[string]any{"what": "write", "path": outside})
	a.denied(map[string]any{"what": "write", "path": filepath.Join(h.switchboard, "config.json")})
	a.allowed(map[string]any{"what": "read", "path": "/etc/passwd"})
	a.allowed(map[string]any{"what": "write", "path": "$TMPDIR/scratch"})

	if b, _ := os.ReadFile(h.bashrc); string(b) != bashrcText {
		t.Errorf(".bashrc changed: %q", b)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("the file outside the server's paths exists: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.switchboard, "config.json")); !os.IsNotExist(err) {
		t.Errorf("a file was planted in Switchboard's home: %v", err)
	}
}

// TestSandboxRefusesGrantsOfSwitchboardHome: Landlock cannot deny a path
// beneath a granted one, so a grant that contains Switchboard's home is
// refused, naming the grant.
func TestSandboxRefusesGrantsOfSwitchboardHome(t *testing.T) {
	t.Parallel()
	h := newVictimHome(t)
	for _, s := range []*sandbox.Settings{{Read: []string{"~"}}, {Write: []string{h.switchboard}}, {Read: []string{h.creds}}} {
		_, err := Start(hostileSpec(t, h, s))
		if err == nil || !strings.Contains(err.Error(), "Switchboard's home") {
			t.Errorf("%+v: Start = %v, want a refusal naming Switchboard's home", s, err)
		}
	}
}

// canary is a loopback listener that counts the connections it accepts.
type canary struct {
	ln   net.Listener
	hits atomic.Int32
}

func newCanary(t *testing.T) *canary {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &canary{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.hits.Add(1)
			conn.Close()
		}
	}()
	return c
}

func (c *canary) addr() string { return c.ln.Addr().String() }
func (c *canary) port() uint16 { return uint16(c.ln.Addr().(*net.TCPAddr).Port) }

// TestSandboxNetwork: with the network off, or on a list of ports that
// leaves out the canary's, a hostile server cannot reach a loopback
// canary; on a list that names it, it can (Landlock filters ports, not
// addresses, which the status says).
func TestSandboxNetwork(t *testing.T) {
	t.Parallel()
	requireShim(t)
	h := newVictimHome(t)
	c := newCanary(t)

	off := start(t, hostileSpec(t, h, &sandbox.Settings{Network: &sandbox.Network{Off: true}}))
	requireProtections(t, off, sandbox.NetworkAccess)
	connectHostile(t, off).denied(map[string]any{"what": "connect", "addr": c.addr()})

	ports := start(t, hostileSpec(t, h, &sandbox.Settings{Network: &sandbox.Network{Ports: []uint16{443}}}))
	requireProtections(t, ports, sandbox.NetworkAccess)
	connectHostile(t, ports).denied(map[string]any{"what": "connect", "addr": c.addr()})
	if n := c.hits.Load(); n != 0 {
		t.Fatalf("the canary got %d connections", n)
	}

	open := start(t, hostileSpec(t, h, &sandbox.Settings{Network: &sandbox.Network{Ports: []uint16{c.port()}}}))
	connectHostile(t, open).allowed(map[string]any{"what": "connect", "addr": c.addr()})
	found := false
	for _, m := range open.Sandbox().Missing {
		found = found || m.Protection == sandbox.PrivateAddresses && !m.Asked
	}
	if !found {
		t.Errorf("status %+v does not report private addresses open", open.Sandbox())
	}
}

// escapees lists the live processes the escape mode started (by the
// marker in their environment).
func escapees() []int {
	var out []int
	list, _ := proc.List()
	for _, i := range list {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", i.PID))
		if err == nil && bytes.Contains(b, []byte(hostile.EscapeMarker)) && !i.Zombie() {
			out = append(out, i.PID)
		}
	}
	return out
}

// TestSandboxForkBomb: a fork bomb stops at the process limit, and
// nothing it started outlives the server.
func TestSandboxForkBomb(t *testing.T) {
	t.Parallel()
	requireShim(t)
	h := newVictimHome(t)
	p, err := Start(hostileSpec(t, h, &sandbox.Settings{Processes: 48}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	requireProtections(t, p, sandbox.Processes)
	a := connectHostile(t, p)
	// Either the bomb is told no, or the server's own runtime, refused a
	// thread at the limit, dies: contained both ways.
	out, err := a.try(map[string]any{"what": "fork", "n": 400})
	var n int
	if err == nil {
		if _, err := fmt.Sscanf(out, "denied started %d", &n); err != nil || n >= 48 {
			t.Errorf("%s: want fewer than 48 processes started", out)
		}
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	proc.WaitGone(t, goneTimeout, func() bool { return len(escapees()) == 0 })
	if Support().Cgroup != "" && p.SandboxEvents().PidsRefused == 0 {
		t.Errorf("the cgroup counted no refused fork")
	}
}

// TestSandboxMemory: a server that allocates 4 GiB is killed at its
// memory limit, and the launcher reports the kill.
func TestSandboxMemory(t *testing.T) {
	t.Parallel()
	requireShim(t)
	h := newVictimHome(t)
	p, err := Start(hostileSpec(t, h, &sandbox.Settings{MemoryMB: 256}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	requireProtections(t, p, sandbox.Memory)
	a := connectHostile(t, p)
	out, err := a.try(map[string]any{"what": "alloc", "mb": 4096})
	if err == nil {
		t.Fatalf("allocating 4 GiB: %s, want the server killed", out)
	}
	select {
	case <-p.Done():
	case <-time.After(goneTimeout):
		t.Fatal("the server still runs")
	}
	if st := p.ExitStatus(); st != "signal: killed" {
		t.Errorf("exit status %q, want signal: killed", st)
	}
	if ev := p.SandboxEvents(); ev.OOMKills == 0 {
		t.Errorf("events %+v: no OOM kill counted", ev)
	}
}

// serverPID is the PID of the server under p's shim.
func serverPID(t *testing.T, p *Process) int {
	t.Helper()
	var pid int
	proc.WaitGone(t, goneTimeout, func() bool {
		for _, c := range proc.Children(p.PID()) {
			pid = c.PID
			return true
		}
		return false
	})
	return pid
}

// TestSandboxOtherProcesses: a hostile server can neither read another
// server's environment through /proc nor ptrace it, nor the host's.
func TestSandboxOtherProcesses(t *testing.T) {
	t.Parallel()
	requireShim(t)
	h := newVictimHome(t)
	victimSpec := childSpec(t, "block")
	victimSpec.Env["VICTIM_SECRET"] = "s3cret-of-the-victim"
	victimSpec.Sandbox = &sandbox.Settings{}
	victimSpec.SwitchboardHome = h.switchboard
	victimSpec.StopStage = 2 * time.Second // it ignores stdin
	victim := start(t, victimSpec)
	vpid := serverPID(t, victim)

	p := start(t, hostileSpec(t, h, &sandbox.Settings{}))
	requireProtections(t, p, sandbox.OtherProcesses)
	a := connectHostile(t, p)
	// In its own PID namespace, with a /proc of that namespace, the
	// hostile server cannot even name these processes.
	for _, pid := range []int{vpid, victim.PID(), os.Getpid()} {
		out := a.denied(map[string]any{"what": "environ", "pid": pid})
		if strings.Contains(out, "s3cret") {
			t.Errorf("read %d's environment: %s", pid, out)
		}
		a.denied(map[string]any{"what": "ptrace", "pid": pid})
	}
}

// TestSandboxNoNewNamespaces: a hostile server cannot make a user
// namespace, the way into most kernel exploits, by clone as well as by
// unshare.
func TestSandboxNoNewNamespaces(t *testing.T) {
	t.Parallel()
	requireShim(t)
	h := newVictimHome(t)
	p := start(t, hostileSpec(t, h, &sandbox.Settings{}))
	requireProtections(t, p, sandbox.OtherProcesses)
	a := connectHostile(t, p)
	a.denied(map[string]any{"what": "userns"})
}

// TestSandboxSetsidChildDiesWithKilledHost: a process the server starts in
// a session of its own dies when the host is killed with SIGKILL (the
// shim's PID namespace ends with the shim, which dies with the host).
func TestSandboxSetsidChildDiesWithKilledHost(t *testing.T) {
	t.Parallel()
	requireShim(t)
	h := newVictimHome(t)
	self, _ := os.Executable()
	host := exec.Command(self)
	host.Env = append(os.Environ(), modeVar+"=sandbox-host", "SANDBOX_TEST_HOME="+h.home)
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	host.Stderr = &stderr
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ok ") {
		host.Process.Kill()
		host.Wait()
		t.Fatalf("host said %q, %v (stderr: %s)", line, err, stderr.String())
	}
	var left []int
	proc.WaitGone(t, goneTimeout, func() bool { left = escapees(); return len(left) > 0 })
	t.Cleanup(func() {
		for _, pid := range escapees() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	host.Process.Signal(syscall.SIGKILL)
	host.Wait()
	proc.WaitGone(t, goneTimeout, func() bool { return len(escapees()) == 0 })
}

// runSandboxHost is a host that starts the hostile server sandboxed, has
// it start a process in a session of its own, says "ok PID" and waits to
// be killed.
func runSandboxHost() {
	MaybeRunShim()
	home := os.Getenv("SANDBOX_TEST_HOME")
	self, _ := os.Executable()
	p, err := Start(Spec{
		Server: "hostile", Command: self,
		Env:             map[string]string{hostile.ModeVar: hostile.ModeEscape, "GORACE": "atexit_sleep_ms=0"},
		Sandbox:         &sandbox.Settings{},
		SwitchboardHome: filepath.Join(home, ".switchboard"),
		LookupEnv:       fakeEnv(map[string]string{"HOME": home, "PATH": os.Getenv("PATH")}),
	})
	if err != nil {
		fmt.Println("error", err)
		return
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "sandbox-host", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(context.Background(), p.Transport(), nil)
	if err != nil {
		fmt.Println("error", err)
		return
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "attempt", Arguments: map[string]any{"what": "setsid"}})
	if err != nil {
		fmt.Println("error", err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	io.Copy(io.Discard, os.Stdin)
	select {}
}

// TestSandboxUnprivileged runs the sandbox tests again as an unprivileged
// user (nobody), from a copy of the test binary that user may execute:
// without root there is no cgroup, so the process limit is RLIMIT_NPROC
// in the server's own user namespace and memory and CPU are reported
// missing, as is the private /proc.
func TestSandboxUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("already unprivileged: the other sandbox tests ran as this user")
	}
	requireShim(t)
	dir, err := os.MkdirTemp("", "sandbox-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	self, _ := os.Executable()
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "launcher.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// Not beneath the binary's directory: the sandbox grants the runtime's
	// directory to a server only when it holds no Switchboard home.
	tmp, err := os.MkdirTemp("", "sandbox-unprivileged-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	os.Chmod(tmp, 0o1777)
	cmd := exec.Command(bin, "-test.run=^TestSandbox(Files|RefusesGrants.*|Network|ForkBomb|Memory|OtherProcesses|SetsidChildDiesWithKilledHost)$", "-test.v", "-test.count=1")
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp, "GORACE=atexit_sleep_ms=0"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody:\n%s", out)
	if err != nil {
		t.Fatalf("the sandbox tests failed as nobody: %v", err)
	}
	// Memory needs a cgroup, and a /proc of the server's own needs the
	// mount namespace that an unprivileged shim, which is not root in its
	// user namespace, cannot change: both are reported missing, and their
	// tests skip.
	for _, name := range []string{"TestSandboxFiles", "TestSandboxNetwork", "TestSandboxForkBomb", "TestSandboxSetsidChildDiesWithKilledHost"} {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass as nobody", name)
		}
	}
}

// TestSandboxRequiredRefuses: a server whose sandbox is required does not
// start where a protection it asks for is missing (here: without the
// shim, nothing is applied), with an error naming the server, the
// protection and its reason code; in the default mode it starts, and
// says what is missing.
func TestSandboxRequiredRefuses(t *testing.T) {
	t.Parallel()
	h := newVictimHome(t)
	spec := hostileSpec(t, h, &sandbox.Settings{Mode: sandbox.ModeRequired})
	spec.direct = true
	_, err := Start(spec)
	var req *SandboxError
	if !errors.As(err, &req) || !errors.Is(err, sandbox.ErrRequired) || req.Server != "hostile" || req.Missing.Code != "no_shim" ||
		!strings.Contains(err.Error(), `server "hostile": sandbox required but`) {
		t.Fatalf("Start = %v, want a refusal naming the server, the protection and no_shim", err)
	}
	spec.Sandbox = &sandbox.Settings{}
	p := start(t, spec)
	st := p.Sandbox()
	if len(st.InForce) != 0 || len(st.Missing) == 0 || st.Missing[0].Code != "no_shim" {
		t.Errorf("status without the shim: %+v", st)
	}
}
