package hostile

import (
	"runtime"
	"syscall"
)

// ptraceAttach attaches to pid and detaches again.
func ptraceAttach(pid int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err := syscall.PtraceAttach(pid)
	if err == nil {
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, syscall.WALL, nil)
		syscall.PtraceDetach(pid)
	}
	return err
}

// userNamespace asks for a child in a user namespace of its own (with no
// mapping written: making the namespace is the step that matters).
func userNamespace() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
}
