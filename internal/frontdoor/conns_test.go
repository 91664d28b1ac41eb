package frontdoor

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// patience bounds a wait for something the server must do by itself; it
// only turns a hang into a failure.
const patience = 30 * time.Second

// limitedServer serves the front door (with testToken) on a loopback
// listener under a ConnLimit of max, and returns its address and the
// number of evictions so far.
func limitedServer(t *testing.T, max int) (addr string, evicted *atomic.Int64) {
	t.Helper()
	evicted = new(atomic.Int64)
	limit, err := NewConnLimit(max, func() { evicted.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(inner(), Options{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ConnContext: limit.ConnContext, ReadHeaderTimeout: patience}
	go srv.Serve(limit.Listener(ln))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), evicted
}

// exchange sends one request on c (with the token when auth) and returns
// the answer's status, or an error when the connection is gone.
func exchange(c net.Conn, br *bufio.Reader, path string, auth bool) (int, error) {
	hdr := ""
	if auth {
		hdr = "Authorization: Bearer " + testToken + "\r\n"
	}
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n", path, hdr); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

type clientConn struct {
	net.Conn
	br *bufio.Reader
}

func dialIdle(t *testing.T, addr, path string, auth bool, want int) clientConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cc := clientConn{c, bufio.NewReader(c)}
	if got, err := exchange(cc, cc.br, path, auth); err != nil || got != want {
		t.Fatalf("GET %s (token: %t) = %d, %v; want %d", path, auth, got, err, want)
	}
	return cc
}

// closedByServer waits until the server closes c; it fails the test if it
// has not within patience.
func closedByServer(t *testing.T, c clientConn, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(patience))
	_, err := io.Copy(io.Discard, c.br)
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		t.Fatalf("%s: still open after %v", what, patience)
	}
}

// TestPendingConnsCapped: connections that have not presented a valid
// token (an unauthenticated /healthz, a request answered 401) are at most
// the cap, the oldest closed first; a connection that presented the token
// is never closed for them.
func TestPendingConnsCapped(t *testing.T) {
	const max = 4
	addr, evicted := limitedServer(t, max)
	authed := dialIdle(t, addr, DefaultPath, true, http.StatusTeapot)

	var hostile []clientConn
	for i := range 3 * max {
		path, want := HealthPath, http.StatusOK
		if i%2 == 1 {
			path, want = DefaultPath, http.StatusUnauthorized
		}
		hostile = append(hostile, dialIdle(t, addr, path, false, want))
	}
	for i, c := range hostile[:len(hostile)-max] {
		closedByServer(t, c, fmt.Sprintf("pending connection %d of %d", i, len(hostile)))
	}
	if got := evicted.Load(); got != int64(len(hostile)-max) {
		t.Errorf("evictions = %d, want %d", got, len(hostile)-max)
	}
	for i, c := range hostile[len(hostile)-max:] {
		if got, err := exchange(c, c.br, HealthPath, false); err != nil || got != http.StatusOK {
			t.Errorf("the %d-th newest pending connection: %d, %v; want it open", max-i, got, err)
		}
	}
	if got, err := exchange(authed, authed.br, DefaultPath, true); err != nil || got != http.StatusTeapot {
		t.Errorf("the authenticated connection after the flood: %d, %v; want it open", got, err)
	}
}

func TestNewConnLimitErrors(t *testing.T) {
	if _, err := NewConnLimit(-1, nil); err == nil {
		t.Error("NewConnLimit(-1) succeeded")
	}
	l, err := NewConnLimit(0, nil)
	if err != nil || l.max != DefaultMaxPendingConns {
		t.Errorf("NewConnLimit(0) = %+v, %v; want the default", l, err)
	}
}
