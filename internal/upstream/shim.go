package upstream

import "github.com/switchboard-mcp/switchboard/internal/launcher"

// MaybeRunShim runs the launcher's shim when this process was started as
// one, and otherwise lets the stdio servers started from now on run under
// it (see launcher.MaybeRunShim). host exports it.
func MaybeRunShim() { launcher.MaybeRunShim() }
