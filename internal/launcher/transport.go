//go:build unix

package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport returns a go-sdk transport over the child's stdio:
// newline-delimited JSON-RPC read from stdout through the frame guard and
// written to stdin. It may be connected at most once. Closing the
// connection stops the process (see [Process.Stop]) and returns when the
// stop sequence has finished, that is within about 3×StopStage.
func (p *Process) Transport() mcp.Transport { return transport{p} }

type transport struct{ p *Process }

func (t transport) Connect(ctx context.Context) (mcp.Connection, error) {
	p := t.p
	if !p.connected.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("server %q: transport already connected", p.spec.Server)
	}
	select {
	case <-p.stopReq:
		return nil, fmt.Errorf("server %q: process is stopped", p.spec.Server)
	default:
	}
	it := &mcp.IOTransport{
		Reader: stdoutReader{p},
		Writer: stdinWriter{p},
		// go-sdk enforces its own line limit with an error that names
		// neither the server nor the cap; ours must trip first.
		MaxLineLength: p.spec.MaxFrame + sdkSlack,
	}
	return it.Connect(ctx)
}

// stdoutReader is the connection's reader. go-sdk closes the reader first,
// then the writer; the reader's Close only starts the stop sequence, so
// the writer's Close can wait for it and report its result once.
type stdoutReader struct{ p *Process }

func (r stdoutReader) Read(b []byte) (int, error) {
	n, err := r.p.guard.Read(b)
	if errors.Is(err, os.ErrClosed) {
		// Our end was closed by the stop sequence: for the reader that is
		// the end of the stream, not a failure.
		err = io.EOF
	}
	return n, err
}

func (r stdoutReader) Close() error {
	r.p.requestStop()
	return nil
}

// stdinWriter is the connection's writer; closing it is stage 1 of Stop.
type stdinWriter struct{ p *Process }

func (w stdinWriter) Write(b []byte) (int, error) { return w.p.stdin.Write(b) }

func (w stdinWriter) Close() error { return w.p.Stop() }
