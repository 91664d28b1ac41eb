package host

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestCallTakesNoHostLock: a tool call reads the Host's snapshots and
// touches only its own server, so it completes while Host.mu is held (as a
// rebuild holds it) and while another server's locks are held.
func TestCallTakesNoHostLock(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := openTestServers(t, ctx, map[string]map[string]any{"a": nil, "b": nil})

	call := func() <-chan error {
		done := make(chan error, 1)
		go func() {
			res, err := h.Call(ctx, "a__echo", json.RawMessage(`{"text":"x"}`), nil)
			if err == nil && res.Text != "x" {
				t.Errorf("a__echo = %q", res.Text)
			}
			done <- err
		}()
		return done
	}
	b := h.comp.Load().servers["b"]
	lockB := func() { b.life.mu.Lock(); b.cat.mu.Lock(); b.holds.mu.Lock() }
	unlockB := func() { b.holds.mu.Unlock(); b.cat.mu.Unlock(); b.life.mu.Unlock() }
	h.mu.Lock()
	lockB()
	done := call()
	select {
	case err := <-done:
		unlockB()
		h.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		unlockB()
		h.mu.Unlock()
		<-done
		t.Fatal("the call waited for Host.mu or another server's lock")
	}
}

// TestIdleStopTakesNoCall: once the idle reaper has marked a connection
// for closing, ensure does not hand it to a call; it waits for the close
// and dials afresh. (A call on it would fail as if never sent and be sent
// again, though it may have run.)
func TestIdleStopTakesNoCall(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := openTestServers(t, ctx, map[string]map[string]any{"a": {"idleTimeoutMs": 3_600_000}})
	s := h.comp.Load().servers["a"]
	first, err := s.ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.lastUse.Store(0) // idle since 1970
	c := s.idleConn(time.Now())
	if c != first {
		t.Fatalf("idleConn = %p, want the live connection %p", c, first)
	}
	got := make(chan *upstream.Conn, 1)
	go func() {
		conn, err := s.ensure(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- conn
	}()
	select {
	case conn := <-got:
		t.Fatalf("ensure handed out a connection (%p; the closing one is %p) before the idle close finished", conn, c)
	case <-time.After(200 * time.Millisecond):
	}
	c.Close() // what the reaper does
	select {
	case conn := <-got:
		if conn == nil || conn == c {
			t.Errorf("after the idle close, ensure = %p, want a new connection", conn)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ensure did not dial afresh after the idle close")
	}
}

// openTestServers opens a Host over test kit servers (ModeServer), each
// with the extra configuration members given; it closes with the test.
func openTestServers(t *testing.T, ctx context.Context, servers map[string]map[string]any) *Host {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{}
	for name, extra := range servers {
		s := map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer)}
		for k, v := range extra {
			s[k] = v
		}
		doc[name] = s
	}
	data, err := json.Marshal(map[string]any{"mcpServers": doc})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, cfg, &Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}
