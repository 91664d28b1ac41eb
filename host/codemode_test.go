package host_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// demoServer is the demo server as a stdio entry (the test binary
// re-executed).
func demoServer(t testing.TB) map[string]any {
	return map[string]any{"command": self(t), "args": []string{"demo-server"}, "eager": true}
}

func codeRun(ctx context.Context, v *host.View, script string) (*host.Result, error) {
	args, _ := json.Marshal(map[string]string{"script": script})
	return v.Call(ctx, host.CodeTool, args, nil)
}

// TestCodeRunOffByDefault: without context.codeMode, code_run is neither
// listed nor callable.
func TestCodeRunOffByDefault(t *testing.T) {
	t.Parallel()
	h := open(t, parseDoc(t, map[string]any{"mcpServers": map[string]any{"demo": demoServer(t)}}))
	for _, tl := range h.ModelTools() {
		if tl.Name == host.CodeTool {
			t.Fatal("code_run listed while code mode is off")
		}
	}
	if _, err := codeRun(t.Context(), h.View(host.Caller{}), `return 1`); fault.CodeOf(err) != fault.CodeNotFound {
		t.Fatalf("code_run while off: %v, want not_found", err)
	}
}

// TestCodeRun: a script calls the view's tools through the view's call
// path; its declarations are typed from the schemas; each inner call has
// its own audit row tied to the script's by the run's ID; a refused call
// stops the script naming it; a confirmation is asked for each inner call
// that needs one; a tool outside the caller's profile does not exist for
// the script.
func TestCodeRun(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked []string
	h := openWith(t, parseDoc(t, map[string]any{
		"context": map[string]any{"codeMode": map[string]any{"enabled": true, "cpuMs": 60000}},
		"policy": map[string]any{"rules": []any{
			map[string]any{"deny": "demo:slow"},
		}, "confirm": "always"},
		"mcpServers": map[string]any{"demo": demoServer(t), "other": demoServer(t)},
		"profiles":   map[string]any{"p": map[string]any{"servers": []string{"demo"}}},
	}), &host.Options{StateDir: t.TempDir(), StopTimeout: 500 * time.Millisecond,
		Confirm: func(_ context.Context, c host.Confirmation) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, c.ID)
			return c.ID != "demo:image", nil
		}})
	ctx := t.Context()
	for _, s := range []string{"demo", "other"} {
		if err := h.Ready(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	v := h.View(host.Caller{Client: "alice", Profile: "p"})

	var desc string
	for _, tl := range v.Tools() {
		if tl.Name == host.CodeTool {
			desc = tl.Description
		}
	}
	for _, want := range []string{"declare namespace demo {", "function add(a: {a:number;b:number}): Promise<{sum:number}>;", "function echo(a: {text:string}): Promise<string>;"} {
		if !strings.Contains(desc, want) {
			t.Errorf("code_run's description lacks %q:\n%s", want, desc)
		}
	}
	if strings.Contains(desc, "namespace other") {
		t.Errorf("the profile's declarations name a server outside it:\n%s", desc)
	}

	res, err := codeRun(ctx, v, `let s = 0;
for (const n of [1, 2, 3]) s = (await demo.add({a: s, b: n})).sum;
const w = await demo.weather({city: "Nairobi"});
return {sum: s, echo: await demo.echo({text: "hi"}), city: w.city}`)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != `{"sum":6,"echo":"hi","city":"Nairobi"}` {
		t.Errorf("result = %s", res.Text)
	}
	mu.Lock()
	if want := []string{"demo:add", "demo:add", "demo:add", "demo:weather", "demo:echo"}; !slices.Equal(asked, want) {
		t.Errorf("confirmations asked = %v, want %v: each inner call, as a direct call", asked, want)
	}
	asked = nil
	mu.Unlock()

	// The audit log: the script's row and its five calls', one run.
	var rows []host.AuditEntry
	if !proc.Eventually(10*time.Second, func() bool {
		rows, err = h.Audit(ctx, host.AuditQuery{Tool: host.CodeTool})
		return err == nil && len(rows) == 1
	}) {
		t.Fatalf("the script's audit row: %+v, %v", rows, err)
	}
	run := rows[0].Run
	if run == "" || rows[0].Caller != "alice" || rows[0].Outcome != "ok" {
		t.Fatalf("script row = %+v", rows[0])
	}
	if !proc.Eventually(10*time.Second, func() bool {
		rows, err = h.Audit(ctx, host.AuditQuery{Run: run})
		return err == nil && len(rows) == 6
	}) {
		t.Fatalf("rows of run %s: %+v, %v; want the script's and five calls'", run, rows, err)
	}
	inner := 0
	for _, r := range rows {
		switch {
		case r.Tool == host.CodeTool:
		case strings.HasPrefix(r.Tool, "demo:") && r.Caller == "alice" && r.Profile == "p":
			inner++
		default:
			t.Errorf("row of the run = %+v", r)
		}
	}
	if inner != 5 {
		t.Errorf("%d inner rows, want 5", inner)
	}

	for _, tc := range []struct {
		name, script string
		code         fault.Code
		text         string
	}{
		{"denied call stops", `await demo.echo({text: "x"}); try { await demo.slow({steps: 1}) } catch (e) { return "caught" }`,
			fault.CodePolicyBlocked, "stopped at call 2, demo__slow"},
		{"declined confirmation stops", `return await demo.image({})`, fault.CodePolicyBlocked, "not confirmed"},
		{"outside the profile", `return typeof other`, "", "undefined"},
		{"script throws", `throw new Error("boom")`, "", "The script failed (script_error): Error: boom"},
		{"tool error caught", `try { await demo.fail({}) } catch (e) { return e.name + ": " + e.message }`, "", "ToolError"},
		{"infinite loop", `while (true) {}`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "infinite loop" {
				// A CPU limit of a minute: stopped by the call's deadline
				// instead, as by a client's cancellation.
				cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
				_, err := codeRun(cctx, v, tc.script)
				if fault.CodeOf(err) != fault.CodeTimeout {
					t.Fatalf("err = %v, want timeout", err)
				}
			} else {
				res, err := codeRun(ctx, v, tc.script)
				if fault.CodeOf(err) != tc.code {
					t.Fatalf("err = %v (%q), want code %q", err, fault.CodeOf(err), tc.code)
				}
				got := ""
				if err != nil {
					got = err.Error()
				} else {
					got = res.Text
					if res.IsError != strings.HasPrefix(tc.name, "script throws") {
						t.Errorf("isError = %v", res.IsError)
					}
				}
				if !strings.Contains(got, tc.text) {
					t.Errorf("got %q, want it to contain %q", got, tc.text)
				}
			}
			// The host is unaffected: a direct call works.
			if got := call(t, h, "demo__echo", `{"text":"still here"}`).Text; got != "still here" {
				t.Errorf("direct call after: %q", got)
			}
		})
	}
}

// TestCodeRunBeside: while a script spins, the host answers other calls,
// other scripts included.
func TestCodeRunBeside(t *testing.T) {
	t.Parallel()
	h := open(t, parseDoc(t, map[string]any{
		"context":    map[string]any{"codeMode": map[string]any{"enabled": true, "cpuMs": 600000, "concurrent": 2}},
		"mcpServers": map[string]any{"demo": demoServer(t)},
	}))
	ctx := t.Context()
	if err := h.Ready(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	v := h.View(host.Caller{})
	spin, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := codeRun(spin, v, `while (true) {}`)
		done <- err
	}()
	if got := call(t, h, "demo__echo", `{"text":"beside"}`).Text; got != "beside" {
		t.Errorf("direct call beside a spinning script: %q", got)
	}
	res, err := codeRun(ctx, v, `return (await demo.add({a: 2, b: 3})).sum`)
	if err != nil || res.Text != "5" {
		t.Errorf("script beside a spinning script: %v, %v", res, err)
	}
	stop()
	if err := <-done; fault.CodeOf(err) != fault.CodeTimeout {
		t.Errorf("the spinning script ended with %v, want timeout", err)
	}
}

// TestStoredScripts: a stored script is a tool of its own, run with its
// arguments, its calls the caller's; pinned at its first run, it is held
// once changed until a person approves the change.
func TestStoredScripts(t *testing.T) {
	t.Parallel()
	doc := func(script string) map[string]any {
		return map[string]any{
			"context": map[string]any{"codeMode": map[string]any{"enabled": true, "cpuMs": 60000,
				"scripts": map[string]any{"sum": map[string]any{"description": "Adds a and b.", "script": script}}}},
			"mcpServers": map[string]any{"demo": demoServer(t)},
		}
	}
	h := openWith(t, parseDoc(t, doc(`return (await demo.add({a: args.a, b: args.b})).sum`)),
		&host.Options{StateDir: t.TempDir(), StopTimeout: 500 * time.Millisecond})
	ctx := t.Context()
	if err := h.Ready(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, tl := range h.ModelTools() {
		if tl.Name == host.ScriptPrefix+"sum" {
			listed = strings.HasPrefix(tl.Description, "Adds a and b.")
		}
	}
	if !listed {
		t.Fatal("script__sum not listed with its description")
	}
	if got := call(t, h, "script__sum", `{"a": 2, "b": 3}`).Text; got != "5" {
		t.Fatalf("script__sum = %q", got)
	}

	// Changed behind its pin: held, and the change listed for review.
	if err := h.Reload(ctx, parseDoc(t, doc(`return (await demo.add({a: args.a, b: args.b})).sum * 10`))); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Call(ctx, "script__sum", json.RawMessage(`{"a": 2, "b": 3}`), nil); fault.CodeOf(err) != fault.CodeDefinitionChanged {
		t.Fatalf("a changed script: %v, want definition_changed", err)
	}
	held, err := h.Held(ctx, "code mode:sum")
	if err != nil || len(held) != 1 || !strings.Contains(held[0].Diff, "* 10") {
		t.Fatalf("held = %+v, %v; want the change with its diff", held, err)
	}
	if _, err := h.Approve(ctx, "code mode:sum"); err != nil {
		t.Fatal(err)
	}
	if got := call(t, h, "script__sum", `{"a": 2, "b": 3}`).Text; got != "50" {
		t.Fatalf("script__sum once approved = %q", got)
	}
}

// TestCodeRunWaitsForStartingServers: a script run while a server of its
// view is still starting finds that server's tools once it has started,
// as a direct call of one waits for it.
func TestCodeRunWaitsForStartingServers(t *testing.T) {
	t.Parallel()
	h := openWith(t, parseDoc(t, map[string]any{
		"context":    map[string]any{"codeMode": map[string]any{"enabled": true, "cpuMs": 60000}},
		"mcpServers": map[string]any{"demo": demoServer(t)},
	}), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, StartupWait: -1})
	res, err := codeRun(t.Context(), h.View(host.Caller{}), `return (await demo.add({a: 1, b: 1})).sum`)
	if err != nil || res.Text != "2" {
		t.Fatalf("a script at once after Open: %v, %v", res, err)
	}
}

// TestCodeRunHeldTool: a script's call of a tool held for review stops
// the script with the hold's code, naming the call; once a person
// approves the tool, the same script runs.
func TestCodeRunHeldTool(t *testing.T) {
	t.Parallel()
	h := openWith(t, parseDoc(t, map[string]any{
		"context":    map[string]any{"codeMode": map[string]any{"enabled": true, "cpuMs": 60000}},
		"mcpServers": map[string]any{"s": child(t, testkit.ModeServer, map[string]any{"approval": "manual", "sandbox": testSandbox})},
	}), &host.Options{StateDir: t.TempDir(), StopTimeout: 500 * time.Millisecond})
	ctx := t.Context()
	if err := h.Ready(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	v := h.View(host.Caller{})
	script := `try { return await s.echo({text: "through"}) } catch (e) { return "caught " + e.code }`
	_, err := codeRun(ctx, v, script)
	if fault.CodeOf(err) != fault.CodeDefinitionChanged || !strings.Contains(err.Error(), "stopped at call 1, s__echo") {
		t.Fatalf("a held tool in a script: %v, want definition_changed naming the call", err)
	}
	// The hold is kept in the store in the background; a person approves
	// what the store lists.
	if !proc.Eventually(10*time.Second, func() bool { held, _ := h.Held(ctx, "s:echo"); return len(held) > 0 }) {
		t.Fatal("the held tool never reached the store")
	}
	if _, err := h.Approve(ctx, "s:echo"); err != nil {
		t.Fatal(err)
	}
	res, err := codeRun(ctx, v, script)
	if err != nil || res.Text != "through" {
		t.Fatalf("once approved: %v, %v", res, err)
	}
}

// TestCodeRunHeldForApproval: a script's call that policy.approve holds
// stops the script with approval_required, naming the call; once a person
// approves that call, the same script run again makes it, once.
func TestCodeRunHeldForApproval(t *testing.T) {
	t.Parallel()
	h := openWith(t, parseDoc(t, map[string]any{
		"context":    map[string]any{"codeMode": map[string]any{"enabled": true, "cpuMs": 60000}},
		"policy":     map[string]any{"approve": map[string]any{"tools": []string{"demo:add"}}},
		"mcpServers": map[string]any{"demo": demoServer(t)},
	}), &host.Options{StateDir: t.TempDir(), StopTimeout: 500 * time.Millisecond})
	ctx := t.Context()
	if err := h.Ready(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	v := h.View(host.Caller{})
	script := `const e = await demo.echo({text: "first"}); return e + " " + (await demo.add({a: 1, b: 2})).sum`
	_, err := codeRun(ctx, v, script)
	if fault.CodeOf(err) != fault.CodeApprovalRequired || !strings.Contains(err.Error(), "stopped at call 2, demo__add") {
		t.Fatalf("a held call in a script: %v, want approval_required naming the call", err)
	}
	held, err := h.HeldCalls(ctx, "pending")
	if err != nil || len(held) != 1 || held[0].Tool != "demo:add" {
		t.Fatalf("held calls = %+v, %v", held, err)
	}
	if _, err := h.DecideCall(ctx, held[0].ID, true, "test:person"); err != nil {
		t.Fatal(err)
	}
	res, err := codeRun(ctx, v, script)
	if err != nil || res.Text != "first 3" {
		t.Fatalf("once approved: %v, %v", res, err)
	}
	if _, err := codeRun(ctx, v, script); fault.CodeOf(err) != fault.CodeApprovalRequired {
		t.Fatalf("the approval served one call; again: %v", err)
	}
}
