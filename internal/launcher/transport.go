//go:build unix

package launcher

import (
	"bufio"
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
// stop sequence has finished, that is within about 2×StopStage+TermGrace.
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
	var reader io.ReadCloser = stdoutReader{p}
	reader = &filterReader{ReadCloser: reader, br: bufio.NewReaderSize(reader, 64<<10), filter: p.filterFrame}
	it := &mcp.IOTransport{
		Reader: reader,
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
	if err != nil {
		r.p.stdoutOnce.Do(func() { close(r.p.stdoutEnd) })
	}
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

// go-sdk writes each message with one Write call; the lock keeps it whole
// against WriteFrame.
func (w stdinWriter) Write(b []byte) (int, error) {
	w.p.writeMu.Lock()
	defer w.p.writeMu.Unlock()
	return w.p.stdin.Write(b)
}

// WriteFrame writes one pre-encoded message to the child's stdin, whole,
// serialised with the connection's own writes (go-sdk writes each message
// with a single Write, under the same lock). frame must be one complete
// JSON-RPC message ending in '\n'. n is how many bytes reached the pipe:
// 0 means the child cannot have seen any of it.
func (p *Process) WriteFrame(frame []byte) (n int, err error) {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	return p.stdin.Write(frame)
}

func (w stdinWriter) Close() error { return w.p.Stop() }

// filterFrame skips a stdout line that is not JSON-RPC (see stray.go) and
// hands the others to Spec.FrameFilter.
func (p *Process) filterFrame(frame []byte) []byte {
	if !isMessage(frame) {
		p.stray(frame)
		return nil
	}
	if p.spec.FrameFilter != nil {
		return p.spec.FrameFilter(frame)
	}
	return frame
}

// filterReader hands each complete frame to a filter before go-sdk reads
// it. The frame guard sits below it, so a frame is never longer than
// MaxFrame here.
type filterReader struct {
	io.ReadCloser               // the guarded stdout, for Close
	br            *bufio.Reader // over the same reader
	filter        func([]byte) []byte
	line          []byte // the frame being assembled (reused)
	pending       []byte // filtered bytes not yet returned
}

func (f *filterReader) Read(b []byte) (int, error) {
	if len(f.pending) == 0 {
		if cap(f.line) > 1<<20 {
			f.line = nil // do not keep a huge frame's buffer for good
		}
		f.line = f.line[:0]
		for {
			chunk, err := f.br.ReadSlice('\n')
			f.line = append(f.line, chunk...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				if err != io.EOF || len(f.line) == 0 {
					// An oversized frame (the guard's error) or a broken
					// pipe: drop what was read, so the SDK does not buffer
					// a partial frame a second time.
					f.line = nil
					return 0, err
				}
				// A last frame without a newline: deliver what the filter
				// keeps of it; the next Read reports EOF.
				if f.pending = f.filter(f.line); len(f.pending) == 0 {
					f.line = nil
					return 0, io.EOF
				}
				break
			}
			f.pending = f.filter(f.line)
			if len(f.pending) == 0 {
				// The filter took the frame: go-sdk never sees it.
				f.line = f.line[:0]
				continue
			}
			break
		}
	}
	n := copy(b, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}
