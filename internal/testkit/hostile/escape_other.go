//go:build !linux

package hostile

import "errors"

func ptraceAttach(int) error { return errors.New("ptrace attempts are Linux only") }
