package server

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioMu serialises ServeStdio calls: they swap the process's os.Stdout.
var stdioMu sync.Mutex

// ServeStdio serves one client on stdin and stdout until ctx is done or
// the client closes stdin (both clean exits: it returns nil). Both eras
// are served per request: a request with a 2026-07-28 _meta is modern,
// initialize starts a legacy session.
//
// While it runs, os.Stdout is a pipe forwarded to stderr, so that stray
// writes (a fmt.Println in a handler or a dependency) cannot corrupt the
// protocol stream; the protocol goes to the original stdout. os.Stdout is
// restored on return. Writes to file descriptor 1 that bypass os.Stdout
// (cgo, child processes inheriting it) are not redirected.
func (s *Server) ServeStdio(ctx context.Context) error {
	stdioMu.Lock()
	defer stdioMu.Unlock()
	return s.serveIO(ctx, os.Stdin, &os.Stdout, os.Stderr)
}

// serveIO serves on in and *out, with *out swapped for a pipe forwarded
// to stray while it runs.
func (s *Server) serveIO(ctx context.Context, in io.ReadCloser, out **os.File, stray io.Writer) error {
	protocol := *out
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	*out = pw
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(stray, pr)
	}()
	defer func() {
		*out = protocol
		pw.Close()
		<-copied
		pr.Close()
	}()
	err = s.mcp.Run(ctx, &mcp.IOTransport{Reader: in, Writer: nopCloser{protocol}})
	if err == nil || errors.Is(err, io.EOF) || (ctx.Err() != nil && errors.Is(err, ctx.Err())) {
		return nil
	}
	return err
}

// nopCloser keeps the process's stdout open when the transport closes.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
