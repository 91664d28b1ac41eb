package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
)

// fakeTools are the tools the tests' scripts call: demo.add sums a and b,
// demo.echo returns its text, demo.fail fails as a tool, demo.blocked is
// refused as a policy would.
var fakeTools = []Tool{
	{Server: "demo", Name: "add", Call: "demo__add"},
	{Server: "demo", Name: "echo", Call: "demo__echo"},
	{Server: "demo", Name: "fail", Call: "demo__fail"},
	{Server: "demo", Name: "blocked", Call: "demo__blocked"},
	{Server: "my-server", Name: "get-sum", Call: "my-server__get-sum"},
	{Server: "globalThis", Name: "echo", Call: "demo__echo"},
	{Server: "undefined", Name: "echo", Call: "demo__echo"},
	{Server: "delete", Name: "echo", Call: "demo__echo"},
}

type fake struct{ calls atomic.Int64 }

func (f *fake) call(_ context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	f.calls.Add(1)
	switch tool {
	case "demo__add", "my-server__get-sum":
		var a struct{ A, B float64 }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, &ToolError{Tool: tool, Code: string(fault.CodeInvalidInput), Message: err.Error()}
		}
		return json.Marshal(map[string]float64{"sum": a.A + a.B})
	case "demo__echo":
		var a struct{ Text string }
		_ = json.Unmarshal(args, &a)
		return json.Marshal(a.Text)
	case "demo__fail":
		return nil, &ToolError{Tool: tool, Message: "it always fails"}
	case "demo__blocked":
		return nil, fault.New(fault.CodePolicyBlocked, "demo", `call tool "blocked"`, errors.New("the call needs a person's confirmation"))
	}
	return nil, fmt.Errorf("no tool %q", tool)
}

func runScript(t *testing.T, lim Limits, src string) (*Result, error, *fake) {
	t.Helper()
	f := &fake{}
	res, err := New(lim, 0).Run(t.Context(), src, fakeTools, f.call)
	return res, err, f
}

// TestRunCalls: scripts call tools as async functions grouped by server,
// in sequence and in parallel, catch a tool's error, and return a value.
func TestRunCalls(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
		calls           int
	}{
		{"return", `return 1 + 2`, `3`, 0},
		{"nothing", `const x = 1`, `null`, 0},
		{"sequence", `let s = 0; for (let i = 1; i <= 4; i++) s = (await demo.add({a: s, b: i})).sum; return s`, `10`, 4},
		{"parallel", `const r = await Promise.all([1,2,3].map(n => demo.echo({text: "n" + n}))); return r.join(",")`, `"n1,n2,n3"`, 3},
		{"hyphen", `return [(await my_server.get_sum({a: 1, b: 2})).sum, (await my_server["get-sum"]({a: 2, b: 2})).sum]`, `[3,4]`, 2},
		{"tool error caught", `try { await demo.fail() } catch (e) { return [e.name, e.message, e instanceof ToolError] }`, `["ToolError","it always fails",true]`, 1},
		{"object", `return {a: [1, "x"], b: null}`, `{"a":[1,"x"],"b":null}`, 0},
		{"awkward server names", `return [typeof undefined, await delete_.echo({text: "d"}), await globalThis.echo({text: "g"})]`, `["undefined","d","g"]`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err, f := runScript(t, Limits{}, tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Value) != tc.want {
				t.Errorf("value = %s, want %s", res.Value, tc.want)
			}
			if int(f.calls.Load()) != tc.calls || len(res.Calls) != tc.calls {
				t.Errorf("calls = %d (%d recorded), want %d", f.calls.Load(), len(res.Calls), tc.calls)
			}
		})
	}
}

// TestRunHostile: each hostile script is stopped by its limit with a
// fault code and a reason, and the next run works.
func TestRunHostile(t *testing.T) {
	// Only the CPU cases have a short CPU limit: under -race the others
	// must not reach it before their own.
	lim := Limits{CPU: time.Minute, Wall: 5 * time.Minute, Memory: 16 << 20, Calls: 10, Output: 1 << 10}
	cpu := lim
	cpu.CPU = 200 * time.Millisecond
	for _, tc := range []struct {
		name, src string
		code      fault.Code
		reason    string
		maxCalls  int64
	}{
		{"infinite loop", `while (true) {}`, fault.CodeTimeout, ReasonCPU, 0},
		{"loop catching", `for (;;) { try { while (true) {} } catch (e) {} }`, fault.CodeTimeout, ReasonCPU, 0},
		{"async loop", `for (;;) await null`, fault.CodeTimeout, ReasonCPU, 0},
		{"looping toJSON", `return {toJSON() { for (;;) {} }}`, fault.CodeTimeout, ReasonCPU, 0},
		{"looping toString", `throw {toString() { for (;;) {} }}`, fault.CodeTimeout, ReasonCPU, 0},
		{"memory bomb", `const a = []; for (;;) a.push("x".repeat(1000) + a.length)`, fault.CodeTooLarge, ReasonMemory, 0},
		{"string doubling", `let s = "x"; for (;;) s += s`, fault.CodeTooLarge, ReasonMemory, 0},
		{"deep recursion", `function f(n) { return f(n + 1) + 1 } return f(0)`, fault.CodeTooLarge, ReasonStack, 0},
		{"call flood", `for (;;) await demo.echo({text: "x"})`, fault.CodeTooLarge, ReasonCalls, 10},
		{"parallel flood", `await Promise.all(Array.from({length: 1000}, () => demo.echo({text: "x"})))`, fault.CodeTooLarge, ReasonCalls, 0},
		{"flood caught", `for (;;) { try { await demo.echo({text: "x"}) } catch (e) {} }`, fault.CodeTooLarge, ReasonCalls, 10},
		{"big output", `return "x".repeat(5000)`, fault.CodeTooLarge, ReasonOutput, 0},
		{"big arguments", `await demo.echo({text: "x".repeat(5000)})`, fault.CodeTooLarge, ReasonOutput, 0},
		{"never settles", `await new Promise(() => {})`, "", ReasonStalled, 0},
		{"throws", `throw new Error("boom")`, "", ReasonScript, 0},
		{"syntax", `return )(`, "", ReasonScript, 0},
		{"policy stops", `try { await demo.blocked({}) } catch (e) { return "caught" }`, fault.CodePolicyBlocked, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := lim
			if tc.reason == ReasonCPU {
				l = cpu
			}
			_, err, f := runScript(t, l, tc.src)
			if err == nil {
				t.Fatal("no error")
			}
			var se *ScriptError
			if tc.code == "" && (!errors.As(err, &se) || se.Reason != tc.reason) {
				t.Fatalf("err = %v, want a script error %s", err, tc.reason)
			}
			if fault.CodeOf(err) != tc.code {
				t.Fatalf("err = %v (code %q), want code %q", err, fault.CodeOf(err), tc.code)
			}
			if tc.reason != "" && !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("err = %v, want reason %s", err, tc.reason)
			}
			if tc.maxCalls > 0 && f.calls.Load() > tc.maxCalls {
				t.Errorf("%d calls made, over the limit %d", f.calls.Load(), tc.maxCalls)
			}
			// The sandbox is unaffected: the next run works.
			res, err, _ := runScript(t, lim, `return (await demo.add({a: 1, b: 1})).sum`)
			if err != nil || string(res.Value) != "2" {
				t.Fatalf("next run: %v, %v", res, err)
			}
		})
	}
}

// TestRunWall: a run is stopped at its wall time while a tool call is in
// flight, and when its context ends.
func TestRunWall(t *testing.T) {
	slow := func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, fault.New(fault.CodeTimeout, "demo", "call", ctx.Err())
	}
	s := New(Limits{Wall: 50 * time.Millisecond}, 1)
	_, err := s.Run(t.Context(), `await demo.echo({text: "x"})`, fakeTools, slow)
	if fault.CodeOf(err) != fault.CodeTimeout || !strings.Contains(err.Error(), ReasonWall) {
		t.Fatalf("err = %v", err)
	}
	// The caller's cancellation stops it too, saying so.
	ctx, cancel := context.WithCancel(t.Context())
	s = New(Limits{Wall: time.Hour, CPU: time.Hour}, 1)
	_, err = s.Run(ctx, `await demo.echo({text: "x"})`, fakeTools, func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		cancel()
		return slow(ctx, tool, args)
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), ReasonStopped) {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestRunIsolated: nothing of the host is in reach, and one run cannot
// see another's state (a polluted prototype, a global).
func TestRunIsolated(t *testing.T) {
	probe := `return [typeof std, typeof os, typeof print, typeof console, typeof require, typeof process,
		typeof fetch, typeof setTimeout, typeof XMLHttpRequest, typeof __sb_call, typeof WebAssembly,
		typeof Object.prototype.polluted, typeof leaked]`
	want := `["undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined"]`
	res, err, _ := runScript(t, Limits{}, probe)
	if err != nil || string(res.Value) != want {
		t.Fatalf("probe: %s, %v", res.Value, err)
	}
	if _, err, _ := runScript(t, Limits{}, `Object.prototype.polluted = 1; globalThis.leaked = 1; Array.prototype.map = null; demo.add = null; return 1`); err != nil {
		t.Fatal(err)
	}
	res, err, _ = runScript(t, Limits{}, probe)
	if err != nil || string(res.Value) != want {
		t.Fatalf("after pollution: %s, %v", res.Value, err)
	}
	for _, src := range []string{
		`return Date.now()`,
		`return new Date().getTime()`,
		`return Date()`,
		`return new (Object.getPrototypeOf(new Date(0)).constructor)()`,
		`return await import("std")`,
		`return await import("os")`,
	} {
		if res, err, _ := runScript(t, Limits{}, src); err == nil {
			t.Errorf("%s = %s, want an error", src, res.Value)
		}
	}
	res, err, _ = runScript(t, Limits{}, `return new Date(0).toISOString()`)
	if err != nil || string(res.Value) != `"1970-01-01T00:00:00.000Z"` {
		t.Errorf("a date from data: %s, %v", res.Value, err)
	}
	// A frozen namespace: a script cannot swap a tool for its own.
	res, err, _ = runScript(t, Limits{}, `"use strict"; try { demo.add = () => 0; return "swapped" } catch (e) { return "frozen" }`)
	if err != nil || string(res.Value) != `"frozen"` {
		t.Errorf("namespace: %s, %v", res.Value, err)
	}
}

// TestRunSource: a script over the source limit is refused unrun.
func TestRunSource(t *testing.T) {
	_, err, _ := runScript(t, Limits{Source: 10}, `return "far too long"`)
	if fault.CodeOf(err) != fault.CodeTooLarge || !strings.Contains(err.Error(), ReasonSource) {
		t.Fatalf("err = %v", err)
	}
}

// BenchmarkRun measures a run's start-up: a fresh runtime, the prelude,
// one tool call and the result.
func BenchmarkRun(b *testing.B) {
	s := New(Limits{}, 1)
	f := &fake{}
	for b.Loop() {
		if _, err := s.Run(context.Background(), `return (await demo.add({a: 1, b: 2})).sum`, fakeTools, f.call); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRunWaitsWithinWallTime: a run waiting for a free sandbox waits
// within its wall time.
func TestRunWaitsWithinWallTime(t *testing.T) {
	s := New(Limits{Wall: 100 * time.Millisecond}, 1)
	// The test holds the only sandbox, as a long run would, for as long
	// as the second run takes to give up.
	s.slots <- struct{}{}
	defer func() { <-s.slots }()
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(t.Context(), `return 1`, fakeTools, (&fake{}).call)
		done <- err
	}()
	select {
	case err := <-done:
		if fault.CodeOf(err) != fault.CodeTimeout || !strings.Contains(err.Error(), ReasonWall) {
			t.Fatalf("a run that never got a sandbox: %v, want wall_limit", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a run waiting for a sandbox outlived its wall time by a minute")
	}
}

// TestRunCancelledBeforeJavaScript: a run whose context ends before its
// script has entered JavaScript stops with the cancellation, not at the
// CPU limit: the engine drops an interrupt that comes before a call from
// Go enters JavaScript.
func TestRunCancelledBeforeJavaScript(t *testing.T) {
	for range 20 {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		s := New(Limits{Wall: time.Hour, CPU: 20 * time.Second}, 1)
		_, err := s.Run(ctx, `while (true) {}`, fakeTools, (&fake{}).call)
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), ReasonStopped) {
			t.Fatalf("a cancelled run: %v, want the cancellation", err)
		}
	}
}
