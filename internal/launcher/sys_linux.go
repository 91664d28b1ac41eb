//go:build linux

package launcher

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"unsafe"
)

// sysProcAttr puts the child in a process group of its own (so that stopping
// it reaches the grandchildren npx and uvx spawn) and asks the kernel to
// SIGKILL it if its parent dies, so a crashed or SIGKILLed host does not
// leave servers behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// The parent-death signal is tied to the OS thread that forked the child,
// not to our process: the kernel sends it when that thread exits (see
// prctl(2), PR_SET_PDEATHSIG, and https://go.dev/issue/27505). The Go
// runtime destroys a thread when a goroutine exits while locked to it
// (runtime.LockOSThread without UnlockOSThread), which any library may do.
// A child forked from such a thread would be killed at a random moment.
//
// Locking the thread only around cmd.Start would not help: the thread goes
// back to the pool afterwards and can still be destroyed later. Instead,
// every child is forked by one goroutine that locks its thread and never
// unlocks it, so that thread lives at least as long as any child it forked.
// It exits (taking the thread with it) only when all of its children have
// been reaped; the next Start begins a fresh one. Its owner is the set of
// live Processes: the last one to be reaped ends it. (Should the goroutine
// happen to run on the main thread, the runtime parks that thread instead
// of destroying it on exit, which is harmless.) The cost is one OS thread
// while any server runs, and fork requests are serialized, which they
// effectively are anyway.
var forker struct {
	mu   sync.Mutex
	reqs chan forkReq // nil when no forker goroutine runs
	live int          // children reserved or forked by the current goroutine and not yet reaped
}

type forkReq struct {
	cmd   *exec.Cmd
	reply chan error
}

// startCmd starts cmd on the forker thread. On success the caller calls
// release once the child has been reaped (release is idempotent). On failure
// nothing is held and release is a no-op.
func startCmd(cmd *exec.Cmd) (release func(), err error) {
	forker.mu.Lock()
	if forker.reqs == nil {
		forker.reqs = make(chan forkReq)
		go forkLoop(forker.reqs)
	}
	forker.live++ // held from here, so the loop cannot end under us
	reqs := forker.reqs
	forker.mu.Unlock()

	reply := make(chan error, 1)
	reqs <- forkReq{cmd, reply}
	if err := <-reply; err != nil {
		releaseForker()
		return func() {}, err
	}
	return sync.OnceFunc(releaseForker), nil
}

func releaseForker() {
	forker.mu.Lock()
	defer forker.mu.Unlock()
	forker.live--
	if forker.live == 0 {
		close(forker.reqs)
		forker.reqs = nil
	}
}

func forkLoop(reqs <-chan forkReq) {
	runtime.LockOSThread()
	// No UnlockOSThread: when reqs is closed every child forked here has
	// been reaped, and the thread is discarded with this goroutine.
	for req := range reqs {
		req.reply <- req.cmd.Start()
	}
}

// killGroupAfterReap is false: on Linux the group is signalled before the
// reap (see waitExited), and never after it.
const killGroupAfterReap = false

// waitExited blocks until the child pid has exited, without reaping it
// (waitid with WNOWAIT). While the zombie exists its PID, and so its process
// group ID, cannot be reused, which makes it safe to signal the group.
// It returns false if the child cannot be waited for (not our child, or
// already reaped), in which case the group must not be signalled.
func waitExited(pid int) bool {
	const pPID = 1     // P_PID from <sys/wait.h>
	var info [128]byte // siginfo_t; its contents are not needed
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info)), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		switch errno {
		case 0:
			return true
		case syscall.EINTR:
			continue
		default:
			return false
		}
	}
}
