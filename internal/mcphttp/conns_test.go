package mcphttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// patience bounds a wait for something the server must do by itself; it
// only turns a hang (the behaviour before connections had deadlines) into
// a failure, and is far beyond the timeouts the tests configure.
const patience = 30 * time.Second

// rawConn dials addr (host:port of a URL served by serve).
func rawConn(t *testing.T, url string) net.Conn {
	t.Helper()
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), DefaultPath)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// idleAfterOneRequest sends one request on c that the endpoint answers at
// once (a GET without a session: 405), reads the answer, and leaves the
// connection idle and kept alive.
func idleAfterOneRequest(t *testing.T, c net.Conn) {
	t.Helper()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", DefaultPath)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.Close {
		t.Fatalf("the server closed the connection after %s", resp.Status)
	}
}

// closedByServer waits until the server closes c, and fails the test if it
// has not within patience.
func closedByServer(t *testing.T, c net.Conn, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(patience))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		t.Fatalf("%s: still open after %v", what, patience)
	}
}

// TestIdleConnectionsEnd: a kept-alive connection with no request is
// closed after IdleTimeout, while an idle event stream (a legacy
// session's GET stream, opened by go-sdk's client) stays open however
// long it is quiet, and still carries the server's notifications.
func TestIdleConnectionsEnd(t *testing.T) {
	nop := make(chan struct{})
	srv := newServer(nil, nil, nop, nil)
	url, _ := serve(t, NewHandler(srv, nil), &Options{IdleTimeout: 200 * time.Millisecond})

	watch := testkit.NewStreamWatch(t, nil)
	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: watch}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// The stream is open once the server has it: a list change then
	// reaches the client.
	deadline := time.Now().Add(patience)
	for {
		srv.AddTool(&mcp.Tool{Name: "probe", InputSchema: map[string]any{"type": "object"}}, nopTool)
		select {
		case <-changed:
		case <-time.After(50 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("no list_changed notification reached the client")
			}
			srv.RemoveTools("probe")
			continue
		}
		break
	}
	if !watch.Opened() {
		t.Fatal("the client opened no GET stream")
	}

	// Two idle connections in a row, each opened after the stream, are
	// closed by the idle timeout: by then the stream has been quiet for
	// longer than two idle timeouts.
	for i := range 2 {
		c := rawConn(t, url)
		idleAfterOneRequest(t, c)
		closedByServer(t, c, fmt.Sprintf("idle connection %d", i))
	}
	if _, err := watch.Streams(); err != nil {
		t.Fatalf("the event stream's connection ended: %v", err)
	}
	srv.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}}, nopTool)
	select {
	case <-changed:
	case <-time.After(patience):
		t.Fatal("a notification sent after the idle timeout did not reach the client")
	}
	if _, err := watch.Streams(); err != nil {
		t.Fatalf("the event stream's connection ended: %v", err)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatalf("a call after the idle timeout: %v", err)
	}
	if gets, _ := watch.Streams(); gets != 1 {
		t.Errorf("the client opened %d GET streams, want 1: the stream was cut and opened again", gets)
	}
}

// TestSlowBodyEnds: a body that does not arrive within BodyTimeout fails
// to read and its connection is closed, while a call whose body arrived
// in time is answered however long it runs after.
func TestSlowBodyEnds(t *testing.T) {
	started, release, cancelled := make(chan struct{}, 1), make(chan struct{}), make(chan bool, 1)
	url, _ := serve(t, NewHandler(newServer(nil, started, release, cancelled), nil), &Options{BodyTimeout: 200 * time.Millisecond})

	// A call that runs longer than the body timeout.
	answered := make(chan string, 1)
	go func() {
		resp, err := postNoFatal(url, "2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
		if err != nil {
			answered <- err.Error()
			return
		}
		answered <- resp
	}()
	<-started

	// A body sent a byte at a time, too slowly.
	c := rawConn(t, url)
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{", DefaultPath)
	closedByServer(t, c, "a connection sending its body too slowly")

	close(release)
	select {
	case got := <-answered:
		if !strings.Contains(got, "released") {
			t.Errorf("the call outlasting the body timeout got %q", got)
		}
	case <-time.After(patience):
		t.Fatal("the call outlasting the body timeout got no answer")
	}
}

// postNoFatal posts body as a 2026-07-28 request and returns the answer.
func postNoFatal(url, version, body string) (string, error) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", version)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "block")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func nopTool(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}
