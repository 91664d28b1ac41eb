package pgtest

import "syscall"

// setPdeathsig has the child SIGKILLed when the thread that forked it exits.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
