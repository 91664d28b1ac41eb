package server

import (
	"os"
	"syscall"
)

// redirectStdout redirects file descriptor 1 to stderr and returns a
// duplicate of the original descriptor 1 for the protocol; restore makes
// descriptor 1 the original again. os.Stdout is left alone: it writes to
// descriptor 1, and so to stderr meanwhile. When the descriptors cannot be
// duplicated (stderr closed, no descriptors left), it falls back to the
// portable redirection of os.Stdout alone.
func redirectStdout() (protocol *os.File, restore func() error, err error) {
	protocol, restore, err = redirectFD1()
	if err != nil {
		return swapStdout(&os.Stdout, os.Stderr)
	}
	return protocol, restore, nil
}

// redirectFD1 is the descriptor-level redirection.
func redirectFD1() (protocol *os.File, restore func() error, err error) {
	// Hold ForkLock, as package os does, so that no child forked meanwhile
	// inherits the duplicate before it is close-on-exec.
	syscall.ForkLock.RLock()
	fd, err := syscall.Dup(1)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, err
	}
	if err := syscall.Dup3(2, 1, 0); err != nil {
		syscall.Close(fd)
		return nil, nil, err
	}
	protocol = os.NewFile(uintptr(fd), "/dev/stdout (protocol)")
	restore = func() error {
		err := syscall.Dup3(fd, 1, 0)
		protocol.Close()
		return err
	}
	return protocol, restore, nil
}
