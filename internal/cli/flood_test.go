package cli_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// lowerNofile sets this process's limit of open files to n (soft and
// hard), for a gateway run as a child under a small limit; "" leaves it.
func lowerNofile(n string) {
	if n == "" {
		return
	}
	v, err := strconv.ParseUint(n, 10, 64)
	if err != nil {
		panic("SWITCHBOARD_TEST_NOFILE: " + err.Error())
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: v, Max: v}); err != nil {
		panic("SWITCHBOARD_TEST_NOFILE: " + err.Error())
	}
}

// startServeProc runs `switchboard serve --http 127.0.0.1:0` on a fresh
// home as a child process with env added to this one's, waits for its
// banner, and stops it at cleanup. It returns the endpoint, its host:port,
// the child's pid and its stderr.
func startServeProc(t *testing.T, env []string, args ...string) (endpoint, addr string, pid int, stderr *testkit.Buffer) {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, append([]string{"serve", "--http", "127.0.0.1:0", "--home", t.TempDir()}, args...)...)
	cmd.Env = append(append(os.Environ(), "SWITCHBOARD_CLI_RUN=1"), env...)
	stderr = &testkit.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(floodPatience):
			cmd.Process.Kill()
			<-exited
		}
	})
	var m []string
	if !proc.Eventually(floodPatience, func() bool { m = bannerRE.FindStringSubmatch(stderr.String()); return m != nil }) {
		t.Fatalf("no banner:\n%s", stderr.String())
	}
	return m[1] + m[2], strings.TrimPrefix(m[1], "http://"), cmd.Process.Pid, stderr
}

// floodPatience bounds a wait for something the gateway must do by
// itself: it only turns a hang into a failure.
const floodPatience = 30 * time.Second

// TestHostileConnectionsUnderFileLimit: `serve` run with at most 256 open
// files, its default idle timeout, keeps answering an authenticated client
// while 1,000 hostile loopback connections are opened (idle after
// /healthz, idle after a 401, bodies sent a byte at a time with and
// without the token); a real client's idle event stream stays open
// through it. Before connections had deadlines and a cap, some 240 such
// connections used up the gateway's files: accept failed for everyone
// until they closed.
func TestHostileConnectionsUnderFileLimit(t *testing.T) {
	// Serial: its 1,000 connections are this process's files, and it bounds a call's time.
	const (
		nofile  = 256
		hostile = 1000
		token   = "flood-test-token-0123456789abcdefghij"
	)
	endpoint, addr, pid, _ := startServeProc(t, []string{"SWITCHBOARD_TEST_NOFILE=" + strconv.Itoa(nofile), "FLOOD_TOKEN=" + token},
		"--token-env", "FLOOD_TOKEN", "--body-timeout", "2s")
	auth := headerRT{"Authorization", "Bearer " + token}

	// A real client with an idle event stream, held through the flood.
	streamer := openStream(t, endpoint, token)

	// The flood: bounded in count and time, loopback only, the
	// connections held open from this side until the test ends.
	var (
		held    sync.WaitGroup
		stop    = make(chan struct{})
		opened  atomic.Int64
		refused atomic.Int64 // dials or first exchanges that failed
		slowMu  sync.Mutex
		slow    []net.Conn // bodies sent slowly with the token
	)
	t.Cleanup(func() { close(stop); held.Wait() })
	floodEnd := time.Now().Add(20 * time.Second)
	halfway := make(chan struct{})
	var once sync.Once
	work := make(chan int)
	for range 8 {
		held.Go(func() {
			for i := range work {
				c, err := net.DialTimeout("tcp", addr, 5*time.Second)
				if err != nil {
					refused.Add(1)
					continue
				}
				if i%32 == 31 {
					slowMu.Lock()
					slow = append(slow, c)
					slowMu.Unlock()
				}
				if err := hostileOpen(c, i, token); err != nil {
					refused.Add(1)
				} else if opened.Add(1) == hostile/2 {
					once.Do(func() { close(halfway) })
				}
				held.Go(func() {
					<-stop
					c.Close()
				})
			}
		})
	}
	go func() {
		defer close(work)
		for i := range hostile {
			if time.Now().After(floodEnd) {
				return
			}
			select {
			case work <- i:
			case <-stop:
				return
			}
		}
	}()

	call := func(when string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), floodPatience)
		defer cancel()
		start := time.Now()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "caller", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: auth}}, nil)
		if err != nil {
			t.Fatalf("%s: connect: %v", when, err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "through"}})
		took := time.Since(start)
		if err != nil || res.IsError {
			t.Fatalf("%s: call: %+v, %v", when, res, err)
		}
		t.Logf("%s: connect and call took %v (%d hostile connections opened, %d refused)", when, took, opened.Load(), refused.Load())
		if took > 10*time.Second {
			t.Errorf("%s: an authenticated call took %v", when, took)
		}
	}
	select {
	case <-halfway:
	case <-time.After(time.Until(floodEnd)):
		t.Errorf("the flood opened only %d connections in 20 s (%d refused)", opened.Load(), refused.Load())
	}
	call("during the flood")
	for opened.Load()+refused.Load() < hostile && time.Now().Before(floodEnd) {
		time.Sleep(10 * time.Millisecond)
	}
	call("with the flood held")
	if n := refused.Load(); n > 0 {
		t.Logf("%d hostile connections were refused or cut before their first answer", n)
	}
	if fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		t.Logf("the gateway holds %d open files of %d with the flood held", len(fds), nofile)
	}
	// Bodies sent slowly, even with the token, are cut at the body
	// timeout.
	slowMu.Lock()
	defer slowMu.Unlock()
	for i, c := range slow {
		c.SetReadDeadline(time.Now().Add(floodPatience))
		if _, err := io.Copy(io.Discard, c); isTimeout(err) {
			t.Fatalf("slow authenticated body %d: still open after %v", i, floodPatience)
		}
	}

	streamer.check(t)
}

// TestEventStreamOutlivesIdleTimeout: under a 256-file limit too, a real
// client's idle event stream stays open across the idle timeout that
// closes idle connections (no write timeout), and its session still works.
func TestEventStreamOutlivesIdleTimeout(t *testing.T) {
	t.Parallel()
	const token = "stream-test-token-0123456789abcdefghij"
	endpoint, addr, _, _ := startServeProc(t, []string{"SWITCHBOARD_TEST_NOFILE=256", "STREAM_TOKEN=" + token},
		"--token-env", "STREAM_TOKEN", "--idle-timeout", "1s")
	streamer := openStream(t, endpoint, token)
	// Two authenticated idle connections in a row, both opened after the
	// stream, are closed by the idle timeout: the stream has been quiet
	// for longer than two of them.
	for i := range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		br := bufio.NewReader(c)
		fmt.Fprintf(c, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", addr, token)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		c.SetReadDeadline(time.Now().Add(floodPatience))
		if _, err := io.Copy(io.Discard, br); isTimeout(err) {
			t.Fatalf("idle authenticated connection %d: still open after %v", i, floodPatience)
		}
	}
	streamer.check(t)
}

// streamClient is a go-sdk client of the 2025-11-25 era whose GET event
// stream is watched: how many it opened, and whether the gateway closed
// the connection of the last.
type streamClient struct {
	cs    *mcp.ClientSession
	watch *testkit.StreamWatch
}

// openStream connects a streamClient to endpoint with token and waits for
// its event stream.
func openStream(t *testing.T, endpoint, token string) *streamClient {
	t.Helper()
	sc := &streamClient{watch: testkit.NewStreamWatch(t, http.Header{"Authorization": {"Bearer " + token}})}
	rt := sc.watch
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "streamer", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: rt}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	sc.cs = cs
	if !proc.Eventually(floodPatience, sc.watch.Opened) {
		t.Fatal("the client opened no event stream")
	}
	return sc
}

// check fails the test unless the client's one event stream is still
// open and its session answers a call.
func (sc *streamClient) check(t *testing.T) {
	t.Helper()
	if n, err := sc.watch.Streams(); err != nil || n != 1 {
		t.Errorf("the client's event stream: %d opened, its connection's error %v; want one, still open", n, err)
	}
	if _, err := sc.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "still"}}); err != nil {
		t.Errorf("a call on the streaming client's session: %v", err)
	}
}

// hostileOpen makes c one of four kinds of hostile connection, by i: idle
// after an unauthenticated /healthz, idle after a POST answered 401, a
// body sent a byte at a time without the token, and (one in 32) with it.
func hostileOpen(c net.Conn, i int, token string) error {
	c.SetDeadline(time.Now().Add(3 * time.Second))
	defer c.SetDeadline(time.Time{})
	const body = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	switch {
	case i%32 == 31:
		_, err := fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", token)
		return err
	case i%3 == 0:
		_, err := fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		if err != nil {
			return err
		}
	case i%3 == 1:
		_, err := fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		if err != nil {
			return err
		}
	default:
		_, err := fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

func isTimeout(err error) bool {
	ne, ok := errors.AsType[net.Error](err)
	return ok && ne.Timeout()
}
