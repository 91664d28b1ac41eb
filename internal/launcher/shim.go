//go:build unix

package launcher

import (
	"os"
	"sync/atomic"
	"syscall"
)

// shimArg is the first argument that tells a re-executed program to run as
// the shim rather than as itself (see [MaybeRunShim]).
const shimArg = "__switchboard_launcher_shim__"

// PIDNamespaces reports whether the servers started from now on get a PID
// namespace of their own: false before MaybeRunShim was called, once the
// kernel refused to create one, and off Linux.
func PIDNamespaces() bool { return useShim() }

// shimHooked records that this program calls MaybeRunShim, so that a copy
// of it started with shimArg will run the shim and not the program.
var shimHooked atomic.Bool

// MaybeRunShim must be called first thing in main (and in TestMain of a
// test binary that launches servers), before any flag parsing or other
// work. When the program was re-executed by the launcher as a server's
// shim, it runs the shim and never returns. Otherwise it records that the
// shim is available and returns at once.
//
// On Linux the launcher starts each server under a shim: a copy of the
// running program (os.Executable) that is the first process (PID 1) of a
// PID namespace of its own, holds a parent-death signal, starts the server
// as its child and exits with it. When the shim exits, whether because the
// server did, because it was killed, or because the host died, the kernel
// kills every process left in that namespace, including those that called
// setsid or double-forked. A program that does not call MaybeRunShim still
// launches servers, without the namespace: a server's descendants that
// leave its process group can then outlive it (see [Start]).
func MaybeRunShim() {
	if len(os.Args) > 1 && os.Args[1] == shimArg {
		// syscall.Exit, not os.Exit: a race-enabled build would wait a
		// second at exit, and the shim has nothing to flush.
		syscall.Exit(runShim(os.Args[2:]))
	}
	shimHooked.Store(true)
}
