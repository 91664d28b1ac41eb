//go:build unix

package launcher

import (
	"bytes"
	"io"
)

// frameGuard enforces the stdout frame cap. It counts the bytes since the
// last '\n' as they stream through and fails once a frame exceeds max. It
// never holds on to the data, so a server writing a multi-gigabyte line costs
// us at most max bytes (in go-sdk's decoder buffer), not the line.
//
// Read is called by one goroutine at a time (go-sdk's reader); n and err are
// owned by that caller.
type frameGuard struct {
	r     io.Reader
	max   int
	fault func() error // records the fault, asks for a stop, returns the error

	n   int   // bytes since the last '\n'
	err error // sticky once the cap is exceeded
}

func (g *frameGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	// Never read more than one byte past the cap: the overflow is detected
	// at exactly max+1 bytes, long before go-sdk's larger limit is reached.
	if room := g.max - g.n + 1; len(p) > room {
		p = p[:room]
	}
	n, err := g.r.Read(p)
	if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
		g.n = n - i - 1
	} else {
		g.n += n
	}
	if g.n > g.max {
		// Nothing read in this call can belong to a complete frame (any
		// '\n' would have reset n below the cap), so it is dropped.
		g.err = g.fault()
		return 0, g.err
	}
	return n, err
}
