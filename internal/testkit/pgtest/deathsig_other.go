//go:build !linux

package pgtest

import "syscall"

// dieWithParent does nothing where there is no parent-death signal
// (macOS): the cluster of a test binary that was killed runs on until it
// is stopped by hand.
func dieWithParent(*syscall.SysProcAttr) {}
