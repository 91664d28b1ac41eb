package testkit

import (
	"context"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"testing"
)

// StreamWatch is an HTTP transport for a Streamable HTTP client that
// watches the client's GET event streams: how many it opened, and whether
// the server closed the connection of the last. Header is set on every
// request.
type StreamWatch struct {
	tr     *http.Transport
	header http.Header

	mu     sync.Mutex
	stream *watchedConn // the connection of the last GET stream
	gets   int          // GET streams opened
}

// NewStreamWatch returns a StreamWatch whose idle connections are closed
// when the test ends.
func NewStreamWatch(t testing.TB, header http.Header) *StreamWatch {
	w := &StreamWatch{header: header}
	w.tr = &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &watchedConn{Conn: c}, nil
	}}
	t.Cleanup(w.tr.CloseIdleConnections)
	return w
}

// RoundTrip sends r with the header, noting the connection of a GET.
func (w *StreamWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range w.header {
		r.Header[k] = v
	}
	if r.Method == http.MethodGet {
		r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			w.mu.Lock()
			w.stream, _ = info.Conn.(*watchedConn)
			w.gets++
			w.mu.Unlock()
		}}))
	}
	return w.tr.RoundTrip(r)
}

// Streams says how many GET streams were opened, and the first error a
// read met on the last one's connection: nil while it is open, io.EOF once
// the server closed it.
func (w *StreamWatch) Streams() (gets int, closed error) {
	w.mu.Lock()
	s, n := w.stream, w.gets
	w.mu.Unlock()
	if s == nil {
		return n, nil
	}
	return n, s.readErr()
}

// Opened reports whether a GET stream was opened.
func (w *StreamWatch) Opened() bool {
	n, _ := w.Streams()
	return n > 0
}

// watchedConn remembers the first error a read met.
type watchedConn struct {
	net.Conn
	mu  sync.Mutex
	err error
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *watchedConn) readErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
