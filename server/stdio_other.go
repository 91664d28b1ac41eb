//go:build !linux

package server

import "os"

// redirectStdout swaps the os.Stdout variable for a pipe forwarded to
// stderr and returns the original for the protocol. Writes to file
// descriptor 1 that bypass os.Stdout are not redirected on this platform.
func redirectStdout() (protocol *os.File, restore func() error, err error) {
	return swapStdout(&os.Stdout, os.Stderr)
}
