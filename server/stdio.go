package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioMu serialises ServeStdio calls: they redirect the process's stdout.
var stdioMu sync.Mutex

// ServeStdio serves one client on stdin and stdout until ctx is done or
// the client closes stdin (both clean exits: it returns nil). Both eras
// are served per request: a request with a 2026-07-28 _meta is modern,
// initialize starts a legacy session.
//
// While it runs, stray writes to stdout cannot corrupt the protocol
// stream: they go to stderr. On Linux this holds at the file-descriptor
// level: the protocol is written to a duplicate of the original file
// descriptor 1, and descriptor 1 itself is made a duplicate of stderr, so
// that a fmt.Println in a handler, a dependency writing to fd 1 directly
// (cgo, a raw write) and child processes inheriting fd 1 all write to
// stderr. Elsewhere only the os.Stdout variable is swapped (for a pipe
// forwarded to stderr), so writes that bypass it still reach the real
// stdout. Stdout is restored on return.
func (s *Server) ServeStdio(ctx context.Context) error {
	stdioMu.Lock()
	defer stdioMu.Unlock()
	protocol, restore, err := redirectStdout()
	if err != nil {
		return fmt.Errorf("stdio: cannot redirect stdout: %w", err)
	}
	err = s.serveOn(ctx, os.Stdin, protocol)
	if rerr := restore(); rerr != nil && err == nil {
		err = fmt.Errorf("stdio: cannot restore stdout: %w", rerr)
	}
	return err
}

// serveOn serves one client reading in and writing the protocol to out,
// which it does not close.
func (s *Server) serveOn(ctx context.Context, in io.ReadCloser, out io.Writer) error {
	err := s.mcp.Run(ctx, &mcp.IOTransport{Reader: in, Writer: nopCloser{out}})
	if err == nil || errors.Is(err, io.EOF) || (ctx.Err() != nil && errors.Is(err, ctx.Err())) {
		return nil
	}
	return err
}

// swapStdout is the portable redirection: it replaces *out with a pipe
// whose contents are copied to stray, and returns the original *out for
// the protocol. restore puts it back, once everything written to the pipe
// has reached stray.
func swapStdout(out **os.File, stray io.Writer) (protocol *os.File, restore func() error, err error) {
	protocol = *out
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	*out = pw
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(stray, pr)
	}()
	restore = func() error {
		*out = protocol
		err := pw.Close()
		<-copied
		pr.Close()
		return err
	}
	return protocol, restore, nil
}

// nopCloser keeps the process's stdout open when the transport closes.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
