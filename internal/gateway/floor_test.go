package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
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

// newFloor starts the forwarder for the upstream and returns its endpoint.
func newFloor(b *testing.B, up, upstreamURL string) string {
	b.Helper()
	var h http.Handler
	switch up {
	case "http", "http-legacy":
		target, err := url.Parse(upstreamURL)
		if err != nil {
			b.Fatal(err)
		}
		rp := httputil.NewSingleHostReverseProxy(target)
		rp.Transport = benchHTTPClient(nil).Transport
		rp.FlushInterval = -1 // stream SSE as it comes
		h = rp
	case "stdio":
		h = newStdioFloor(b)
	default:
		b.Fatalf("unknown upstream %q", up)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// stdioFloor bridges HTTP POSTs to one stdio child.
type stdioFloor struct {
	mu      sync.Mutex // serialises writes to stdin and guards waiting
	stdin   io.Writer
	waiting map[string]chan []byte // by the request's raw JSON-RPC id
}

func newStdioFloor(b *testing.B) *stdioFloor {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), testkit.ModeVar+"="+testkit.ModeServer)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
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
	return f
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
