package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestReload: the new composition is connected, then swapped in, then the
// old is closed; an unchanged server keeps its process and the call in
// flight on it; an invalid configuration is refused and the running one
// stays.
func TestReload(t *testing.T) {
	tag := fmt.Sprintf("reload-%d", time.Now().UnixNano())
	srv := func(name string) map[string]any {
		return map[string]any{"command": self(t), "args": []string{tag, name}, "env": testkit.ChildEnv(testkit.ModeServer)}
	}
	h := open(t, parse(t, map[string]any{"a": srv("a"), "b": srv("b")}, nil))
	pidOf := func(name string) int {
		for _, p := range tagged(tag) {
			if p.Cmdline[len(p.Cmdline)-1] == name {
				return p.PID
			}
		}
		return 0
	}
	pidA := pidOf("a")
	if pidA == 0 || pidOf("b") == 0 {
		t.Fatalf("processes: %+v", tagged(tag))
	}

	// A call in flight on a, across the reload.
	type outcome struct {
		res *host.Result
		err error
	}
	done := make(chan outcome, 1)
	running := make(chan struct{}, 5)
	go func() {
		res, err := h.Call(context.Background(), "a__slow", json.RawMessage(`{"steps":5,"delay_ms":200}`),
			&host.CallOptions{Progress: func(host.Progress) { running <- struct{}{} }})
		done <- outcome{res, err}
	}()
	<-running // the call is running on the server

	next := parse(t, map[string]any{"a": srv("a"), "c": srv("c")}, nil)
	if err := h.Reload(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Tool("c__echo"); err != nil {
		t.Errorf("the new server's tools are not listed: %v", err)
	}
	if _, err := h.Tool("b__echo"); err == nil {
		t.Error("the removed server's tools are still listed")
	}
	o := <-done
	if o.err != nil || o.res.Text != "done" {
		t.Errorf("the call in flight on the unchanged server: %v, %v", o.res, o.err)
	}
	if pidOf("a") != pidA {
		t.Errorf("the unchanged server was restarted: pid %d → %d", pidA, pidOf("a"))
	}
	proc.WaitGone(t, 5*time.Second, func() bool { return pidOf("b") == 0 })
	if got := call(t, h, "c__echo", `{"text":"new"}`).Text; got != "new" {
		t.Errorf("c__echo = %q", got)
	}

	// An invalid configuration changes nothing.
	bad := parse(t, map[string]any{"a": srv("a")}, nil)
	bad.Servers[0].CallTimeout = 0
	if err := h.Reload(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "callTimeoutMs") {
		t.Errorf("invalid reload: %v", err)
	}
	if _, err := h.Tool("c__echo"); err != nil {
		t.Errorf("after a refused reload: %v", err)
	}
	// A changed server is restarted with its new settings.
	changed := parse(t, map[string]any{"a": srv("a"), "c": map[string]any{"command": self(t), "args": []string{tag, "c", "v2"}, "env": testkit.ChildEnv(testkit.ModeServer)}}, nil)
	if err := h.Reload(context.Background(), changed); err != nil {
		t.Fatal(err)
	}
	if pidOf("a") != pidA {
		t.Errorf("a restarted by an unrelated change")
	}
}
