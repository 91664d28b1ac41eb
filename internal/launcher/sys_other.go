//go:build unix && !linux

package launcher

import (
	"log/slog"
	"os/exec"
	"sync/atomic"
	"syscall"
)

// sysProcAttr puts the child in a process group of its own. There is no
// portable parent-death signal outside Linux: if the host is SIGKILLed, its
// servers see EOF on stdin, which well-behaved MCP servers treat as the
// signal to exit.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// startCmd starts cmd; without a parent-death signal the forking thread
// does not matter.
func startCmd(cmd *exec.Cmd) (release func(), err error) {
	return func() {}, cmd.Start()
}

// waitExited cannot wait without reaping portably; it reports false and the
// group is signalled right after the reap instead (best effort: in the short
// window in between, an emptied group's ID could in theory be reused).
func waitExited(pid int) bool { return false }

const killGroupAfterReap = true

// Without PID namespaces there is no shim: servers start directly.
func runShim([]string) int { return 125 }

type shim struct{}

func useShim() bool { return false }
func shimCmd(*exec.Cmd, *confinement) (*exec.Cmd, *shim, error) {
	return nil, nil, syscall.ENOSYS
}
func namespaceRefused(error) bool              { return true }
func (*shim) started(*confinement) error       { return nil }
func (*shim) exit() (syscall.WaitStatus, bool) { return 0, false }
func (*shim) close()                           {}

var noNamespaces atomic.Bool

// Without /proc, groups are not recorded: see leftover_linux.go.
func recordGroup(string, int, *slog.Logger) func() { return func() {} }
func killLeftovers(string, *slog.Logger)           {}
