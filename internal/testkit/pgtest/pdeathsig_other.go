//go:build !linux

package pgtest

import "syscall"

// setPdeathsig does nothing: there is no parent-death signal off Linux.
func setPdeathsig(*syscall.SysProcAttr) {}
