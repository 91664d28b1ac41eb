package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// The floor of BenchmarkEcho (path=floor): the cheapest forwarder that can
// stand where the gateway stands, one that moves bytes and does no MCP
// work at all (no names, policy, guard, validation, audit, sessions of its
// own). The ratio floor/direct is what the extra hop alone costs on this
// machine; a gateway cannot be cheaper than it, so a target below it
// cannot be met here whatever the gateway does.
//   - HTTP upstreams: httputil.ReverseProxy with the same pool as the
//     benchmark client (legacy sessions pass through: the proxy copies
//     Mcp-Session-Id both ways).
//   - stdio upstream: an HTTP handler that writes each POSTed message as
//     one line to its own child's stdin and answers a request with the
//     child's response line as application/json (2026-07-28 needs no
//     session, so this is a complete, if bare, HTTP→stdio bridge).

// newFloor starts the forwarder for the upstream in this process and
// returns its endpoint.
func newFloor(b *testing.B, up, upstreamURL string) string {
	b.Helper()
	h, stop, err := floorHandler(up, upstreamURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(stop)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// floorHandler returns the forwarder for the upstream (for stdio, with its
// own child) and the function that stops that child.
func floorHandler(up, upstreamURL string) (http.Handler, func(), error) {
	switch up {
	case "http", "http-legacy":
		target, err := url.Parse(upstreamURL)
		if err != nil {
			return nil, nil, err
		}
		rp := httputil.NewSingleHostReverseProxy(target)
		rp.Transport = benchHTTPClient(nil).Transport
		rp.FlushInterval = -1 // stream SSE as it comes
		rp.ErrorLog = log.New(floorLog{}, "floor: ", 0)
		return rp, func() {}, nil
	case "stdio":
		return newStdioFloor()
	}
	return nil, nil, fmt.Errorf("unknown upstream %q", up)
}

// floorLog passes the forwarder's errors on to stderr, on a line of their
// own (a benchmark's result line may be half written), except those of a
// client's standalone GET stream ending with its session, which every
// round has.
type floorLog struct{}

func (floorLog) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("use of closed network connection")) || bytes.Contains(p, []byte("context canceled")) {
		return len(p), nil
	}
	return os.Stderr.Write(append([]byte("\n"), p...))
}

// stdioFloor bridges HTTP POSTs to one stdio child.
type stdioFloor struct {
	mu      sync.Mutex // serialises writes to stdin and guards waiting
	stdin   io.Writer
	waiting map[string]chan []byte // by the request's raw JSON-RPC id
}

func newStdioFloor() (*stdioFloor, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), testkit.ModeVar+"="+testkit.ModeServer)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() {
		stdin.Close()
		cmd.Wait()
	}
	f := &stdioFloor{stdin: stdin, waiting: map[string]chan []byte{}}
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &msg) != nil || msg.ID == nil || msg.Method != "" {
				continue // notifications and the server's own requests: none in this benchmark
			}
			f.mu.Lock()
			ch := f.waiting[string(msg.ID)]
			delete(f.waiting, string(msg.ID))
			f.mu.Unlock()
			if ch != nil {
				ch <- line
			}
		}
	}()
	return f, stop, nil
}

func (f *stdioFloor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	line := append(bytes.TrimSpace(body), '\n')
	var ch chan []byte
	f.mu.Lock()
	if msg.ID != nil {
		ch = make(chan []byte, 1)
		f.waiting[string(msg.ID)] = ch
	}
	_, err = f.stdin.Write(line)
	f.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if ch == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	select {
	case resp := <-ch:
		w.Header().Set("Content-Type", "application/json")
		w.Write(resp)
	case <-r.Context().Done():
		f.mu.Lock()
		delete(f.waiting, string(msg.ID))
		f.mu.Unlock()
	}
}
