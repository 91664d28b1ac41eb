package pgtest

import "syscall"

// dieWithParent has the child killed when the thread that forked it exits.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
