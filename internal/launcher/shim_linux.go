//go:build linux

package launcher

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/switchboard-mcp/switchboard/internal/sandbox"
)

// The shim's file descriptors beyond stdio, in the order of ExtraFiles.
const (
	shimLifeline = 3 // read end of a pipe whose write end the launcher holds
	shimStatus   = 4 // write end of a pipe the launcher reads reports from
)

// runShim is the shim, run by a re-executed copy of the program as the
// first process (PID 1) of a fresh PID namespace. args are the server's
// program path and its argv. Its steps, in order:
//
//  1. take the signals a process group receives (SIGTERM, SIGINT, ...), so
//     that the launcher's group-wide signals reach the server, which is in
//     the same group, and not the shim's Go runtime, which would exit;
//  2. lock the OS thread and set the parent-death signal (SIGKILL) from it:
//     it is tied to this thread, which now lives as long as the shim; name
//     the process for ps and top (as /proc/self/exe it would be "exe");
//  3. check that the launcher is still there, by the lifeline: getppid is
//     0 in a new PID namespace and cannot tell. From here on, the launcher's
//     death kills the shim (step 2), and its end of the lifeline closing
//     does too;
//  4. apply the server's sandbox when it has one (sandbox.Apply: the
//     shim joins the server's cgroups, then sets no_new_privs, Landlock
//     and seccomp, which the server inherits); start the server, in the
//     shim's process group, with stdio and environment as given, and
//     report "ok" or the error;
//  5. reap every process of the namespace (orphans are re-parented to the
//     shim) until the server is reaped, report its wait status and exit
//     with its code (128+N for signal N; the launcher reads the status
//     itself). The kernel then kills whatever is left in the namespace.
func runShim(args []string) int {
	status := os.NewFile(shimStatus, "status")
	lifeline := os.NewFile(shimLifeline, "lifeline")
	var policy *sandbox.Policy
	if len(args) > 1 && args[0] == "-sandbox" {
		p, err := sandbox.Decode(args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "switchboard shim:", err)
			return 125
		}
		policy, args = &p, args[2:]
	}
	if status == nil || lifeline == nil || len(args) < 2 {
		fmt.Fprintln(os.Stderr, "switchboard shim: started without the launcher")
		return 125
	}
	syscall.CloseOnExec(shimStatus)
	syscall.CloseOnExec(shimLifeline)
	report := func(format string, a ...any) { fmt.Fprintf(status, format+"\n", a...) }

	// 1.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP,
		syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGPIPE)

	// 2.
	runtime.LockOSThread() // never unlocked: the shim ends with syscall.Exit
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); e != 0 {
		report("error parent-death signal: %v", e)
		return 125
	}
	name := []byte("switchboard-shi\x00") // 15 bytes at most
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0)

	// 3.
	if !launcherAlive() {
		return 125
	}
	go func() {
		var b [1]byte
		for {
			if _, err := lifeline.Read(b[:]); err != nil {
				syscall.Exit(125) // the launcher is gone: end the namespace
			}
		}
	}()

	// 4.
	if policy != nil {
		// A /proc of the shim's own PID namespace, in a mount namespace of
		// its own (made private first, so that nothing propagates back):
		// the server sees no process but its own, so neither the host's
		// nor another server's /proc/PID/environ. Without it, say so.
		if err := privateProc(); err != nil {
			report("missing %s %s", sandbox.OtherProcesses, strings.ReplaceAll(err.Error(), " ", "_"))
		}
		if err := sandbox.Apply(*policy); err != nil {
			report("error sandbox: %s", strings.ReplaceAll(err.Error(), "\n", " "))
			return 126
		}
	}
	server, err := os.StartProcess(args[0], args[1:], &os.ProcAttr{
		Env:   os.Environ(),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
	})
	if err != nil {
		report("error %s", strings.ReplaceAll(err.Error(), "\n", " "))
		return 127
	}
	report("ok")

	// 5.
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			report("error wait: %v", err)
			return 125
		}
		if pid != server.Pid {
			continue // an orphan of the namespace
		}
		report("exit %d", uint32(ws))
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// privateProc mounts a procfs of the shim's PID namespace on /proc, in
// the shim's own mount namespace.
func privateProc() error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private mounts: %w", err)
	}
	if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount proc: %w", err)
	}
	return nil
}

// launcherAlive reads the lifeline without blocking: end of file means
// that the launcher has died (its end is closed only after the shim is
// reaped).
func launcherAlive() bool {
	if err := syscall.SetNonblock(shimLifeline, true); err != nil {
		return false
	}
	var b [1]byte
	n, err := syscall.Read(shimLifeline, b[:])
	alive := n < 0 && errors.Is(err, syscall.EAGAIN)
	if err := syscall.SetNonblock(shimLifeline, false); err != nil {
		return false
	}
	return alive
}

// A shim is the launcher's side of one server's shim.
type shim struct {
	lifeline *os.File // our write end; closing it ends the shim
	status   *bufio.Reader
	statusR  *os.File
	childEnd []*os.File // the shim's ends, closed once it started
}

// noNamespaces is set once creating a namespace has failed for want of
// permission or support: every later server starts without a shim.
var noNamespaces atomic.Bool

// useShim reports whether servers should start under the shim.
func useShim() bool { return shimHooked.Load() && !noNamespaces.Load() }

// shimCmd returns a command that runs the server of cmd under the shim, in
// a new PID namespace (and, when we are not root, a user namespace that
// maps our own user and group to themselves, which is what lets an
// unprivileged user create the PID namespace); with conf's sandbox
// enforced, its policy passed as the shim's first arguments and, when
// its network is off, in a network namespace of its own.
func shimCmd(cmd *exec.Cmd, conf *confinement) (*exec.Cmd, *shim, error) {
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	statR, statW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return nil, nil, err
	}
	attr := &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWPID}
	if uid := os.Geteuid(); uid != 0 {
		gid := os.Getegid()
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
	args := []string{"switchboard-shim", shimArg}
	if conf.enforced() {
		args = append(args, "-sandbox", conf.policy.Encode())
		attr.Cloneflags |= syscall.CLONE_NEWNS
		if conf.netns {
			attr.Cloneflags |= syscall.CLONE_NEWNET
		}
	}
	sc := &exec.Cmd{
		// Our own binary, as the kernel knows it: still there when the
		// file was replaced or removed since we started (an upgrade).
		Path:        "/proc/self/exe",
		Args:        append(append(args, cmd.Path), cmd.Args...),
		Env:         cmd.Env,
		Dir:         cmd.Dir,
		Stdin:       cmd.Stdin,
		Stdout:      cmd.Stdout,
		Stderr:      cmd.Stderr,
		ExtraFiles:  []*os.File{lifeR, statW},
		SysProcAttr: attr,
		WaitDelay:   cmd.WaitDelay,
	}
	return sc, &shim{lifeline: lifeW, status: bufio.NewReader(statR), statusR: statR,
		childEnd: []*os.File{lifeR, statW}}, nil
}

// namespaceRefused reports whether err from starting the shim means that
// this kernel or this user cannot create the namespaces.
func namespaceRefused(err error) bool {
	for _, e := range []error{syscall.EPERM, syscall.EACCES, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS, syscall.ENOSYS} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// started closes the shim's ends of the pipes and waits for its first
// report: nil once the server runs, or why it could not start it. The
// protections the shim could not apply, which it reports first, are
// recorded in conf's status.
func (s *shim) started(conf *confinement) error {
	for _, f := range s.childEnd {
		f.Close()
	}
	line, err := s.status.ReadString('\n')
	for err == nil && strings.HasPrefix(line, "missing ") {
		f := strings.Fields(line)
		if len(f) == 3 {
			conf.missing(f[1], strings.ReplaceAll(f[2], "_", " "))
		}
		line, err = s.status.ReadString('\n')
	}
	switch {
	case line == "ok\n":
		return nil
	case strings.HasPrefix(line, "error "):
		return errors.New(strings.TrimSpace(strings.TrimPrefix(line, "error ")))
	case err != nil:
		return fmt.Errorf("the launcher's shim ended before it started the server: %w", err)
	default:
		return fmt.Errorf("the launcher's shim said %q", line)
	}
}

// exit returns the server's wait status as the shim reported it after
// reaping the server; false if it did not (the shim was killed first).
// Call it once the shim has exited.
func (s *shim) exit() (syscall.WaitStatus, bool) {
	line, _ := s.status.ReadString('\n')
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "exit ")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return 0, false
	}
	return syscall.WaitStatus(n), true
}

// close releases the launcher's ends.
func (s *shim) close() {
	for _, f := range s.childEnd {
		f.Close()
	}
	s.lifeline.Close()
	s.statusR.Close()
}
