//go:build !linux

package hostile

import (
	"errors"
	"syscall"
)

func ptraceAttach(int) error { return errors.New("ptrace attempts are Linux only") }

func userNamespace() *syscall.SysProcAttr { return nil }
