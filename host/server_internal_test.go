package host

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestCallTakesNoHostLock: a tool call reads the Host's snapshots and
// touches only its own server, so it completes while Host.mu is held (as a
// rebuild holds it) and while another server's lock is held.
func TestCallTakesNoHostLock(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"a": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer)},
		"b": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := Open(ctx, cfg, &Options{StopTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

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
	h.mu.Lock()
	b.mu.Lock()
	done := call()
	select {
	case err := <-done:
		b.mu.Unlock()
		h.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		b.mu.Unlock()
		h.mu.Unlock()
		<-done
		t.Fatal("the call waited for Host.mu or another server's lock")
	}
}
