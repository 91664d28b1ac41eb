package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestReload: the new composition is connected, then swapped in, then the
// old is closed; an unchanged server keeps its process and the call in
// flight on it; an invalid configuration is refused and the running one
// stays.
func TestReload(t *testing.T) {
	t.Parallel()
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

// TestReloadUnderCalls: tools are called, and the host read, from several
// goroutines while reloads change a kept server's settings and add and
// remove another server. Calls to the kept server all succeed; calls to the
// server that comes and goes succeed or say it is not there; under -race,
// nothing a call reads is written by a reload.
func TestReloadUnderCalls(t *testing.T) {
	t.Parallel()
	tag := fmt.Sprintf("reload-calls-%d", time.Now().UnixNano())
	srv := func(name string, extra map[string]any) map[string]any {
		s := map[string]any{"command": self(t), "args": []string{tag, name}, "env": testkit.ChildEnv(testkit.ModeServer)}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	h := open(t, parse(t, map[string]any{"a": srv("a", nil)}, nil))
	configs := []*config.Config{
		parse(t, map[string]any{"a": srv("a", map[string]any{"disabledTools": []string{"slow"}}), "b": srv("b", nil)}, nil),
		parse(t, map[string]any{"a": srv("a", map[string]any{"images": true})}, nil),
		parse(t, map[string]any{"a": srv("a", nil), "b": srv("b", map[string]any{"prefix": "bee"})}, nil),
		parse(t, map[string]any{"a": srv("a", map[string]any{"strict": true}), "b": srv("b", map[string]any{"args": []string{tag, "b", "v2"}})}, nil),
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var calls, others, othersOK atomic.Int64
	errs := make(chan error, 100)
	for i := range 4 {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				text := fmt.Sprintf("%d-%d", i, n)
				res, err := h.Call(ctx, "a__echo", json.RawMessage(`{"text":"`+text+`"}`), nil)
				switch {
				case err != nil && ctx.Err() != nil:
					return
				case err != nil || res.Text != text:
					errs <- fmt.Errorf("a__echo %s: %v, %v", text, res, err)
					return
				}
				calls.Add(1)
			}
		})
	}
	wg.Go(func() {
		for ctx.Err() == nil {
			for _, name := range []string{"b__echo", "bee__echo"} {
				res, err := h.Call(ctx, name, json.RawMessage(`{"text":"x"}`), nil)
				switch fault.CodeOf(err) {
				case "":
					if err == nil && res.Text == "x" {
						othersOK.Add(1)
					}
				case fault.CodeNotFound, fault.CodeUnavailable:
				default:
					if ctx.Err() == nil {
						errs <- fmt.Errorf("%s: %v", name, err)
						return
					}
				}
				others.Add(1)
			}
			h.Servers()
			h.ModelTools()
			h.Findings()
			h.Instructions()
		}
	})
	for i := range 2 * len(configs) {
		if err := h.Reload(context.Background(), configs[i%len(configs)]); err != nil {
			t.Errorf("reload %d: %v", i, err)
		}
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if calls.Load() == 0 || othersOK.Load() == 0 {
		t.Errorf("calls answered during the reloads: %d by a, %d by b", calls.Load(), othersOK.Load())
	}
	if got := call(t, h, "a__echo", `{"text":"after"}`).Text; got != "after" {
		t.Errorf("after the reloads: a__echo = %q", got)
	}
	t.Logf("%d calls to a, %d to b (%d answered) across %d reloads", calls.Load(), others.Load(), othersOK.Load(), 2*len(configs))
}
