package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// launchKit is the stdio testkit server "kit" with extra environment.
func launchKit(t testing.TB, env map[string]string) map[string]any {
	e := testkit.ChildEnv(testkit.ModeServer)
	for k, v := range env {
		e[k] = v
	}
	return map[string]any{"command": self(t), "env": e}
}

// decisions returns the launch decisions rec saw for server.
func (r *recorder) decisions(server string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Kind == host.EventLaunch && e.Server == server {
			out = append(out, e.Decision)
		}
	}
	return out
}

func openLaunch(t *testing.T, st store.Store, cfg *config.Config, rec *recorder, extra ...func(*host.Options)) *host.Host {
	t.Helper()
	opts := hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond, OnEvent: rec.event}, st)
	for _, f := range extra {
		f(opts)
	}
	h, err := host.Open(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// TestLaunchPin: a server's launch is pinned at its first start in a
// store that pins no launch yet; rotating a secret keeps it; a changed
// non-secret environment value holds the server (not started, its tools
// not offered, calls refused with launch_changed naming the server and
// not saying how to approve) with a readable diff, until it is approved,
// when it starts.
func TestLaunchPin(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ctx := context.Background()
	env := map[string]string{"API_BASE_URL": "https://api.example", "API_TOKEN": "sk-firstfirstfirst"}

	rec := &recorder{}
	h := openLaunch(t, st, parse(t, map[string]any{"kit": launchKit(t, env)}, nil), rec)
	if got := call(t, h, "kit__echo", `{"text":"one"}`).Text; got != "one" {
		t.Fatalf("first start: echo = %q", got)
	}
	if got := rec.decisions("kit"); len(got) != 1 || got[0] != host.LaunchPinned {
		t.Errorf("first start: decisions %q, want [pinned]", got)
	}
	h.Close()

	// A rotated token is not a new launch.
	env["API_TOKEN"] = "sk-secondsecondsecond"
	rec = &recorder{}
	h = openLaunch(t, st, parse(t, map[string]any{"kit": launchKit(t, env)}, nil), rec)
	if got := call(t, h, "kit__echo", `{"text":"two"}`).Text; got != "two" {
		t.Fatalf("rotated token: echo = %q", got)
	}
	if got := rec.decisions("kit"); len(got) != 0 {
		t.Errorf("rotated token: decisions %q, want none", got)
	}
	h.Close()

	// A new base URL is.
	env["API_BASE_URL"] = "https://attacker.example"
	rec = &recorder{}
	h = openLaunch(t, st, parse(t, map[string]any{"kit": launchKit(t, env)}, nil), rec)
	s := status(h, "kit")
	if s.State != host.StateHeld || s.LaunchHeld != "changed" || s.PID != 0 || s.Tools != 0 {
		t.Fatalf("changed launch: state %q, launchHeld %q, pid %d, tools %d; want held, changed, no process, no tools", s.State, s.LaunchHeld, s.PID, s.Tools)
	}
	if got := rec.decisions("kit"); len(got) != 1 || got[0] != host.LaunchHeld {
		t.Errorf("changed launch: decisions %q, want [held]", got)
	}
	_, err := h.Call(ctx, "kit__echo", []byte(`{"text":"x"}`), nil)
	if !errors.Is(err, fault.LaunchChanged) || !strings.Contains(err.Error(), `"kit"`) || strings.Contains(err.Error(), "switchboard approve") {
		t.Fatalf("call while held: %v; want launch_changed naming kit, without how to approve", err)
	}
	held, err := h.Held(ctx, "kit")
	if err != nil || len(held) != 1 || !held[0].Launch || held[0].Target != "kit" {
		t.Fatalf("Held(kit) = %+v, %v; want the launch", held, err)
	}
	if d := held[0].Diff; !strings.Contains(d, "server launch: changed since it was approved") || !strings.Contains(d, `"API_BASE_URL"`) ||
		strings.Contains(d, "API_TOKEN\": \"sha256") || strings.Contains(d, "attacker") {
		t.Errorf("launch diff:\n%s\nwant API_BASE_URL's hash changed, the token masked, no value shown", d)
	}
	if _, err := h.Approve(ctx, "kit"); err != nil {
		t.Fatal(err)
	}
	if !proc.Eventually(10*time.Second, func() bool { _, err := h.Tool("kit__echo"); return err == nil }) {
		t.Fatalf("after approval: state %q, want ready", status(h, "kit").State)
	}
	if got := call(t, h, "kit__echo", `{"text":"three"}`).Text; got != "three" {
		t.Fatalf("after approval: echo = %q", got)
	}
	if got := rec.decisions("kit"); len(got) != 2 || got[1] != host.LaunchApproved {
		t.Errorf("after approval: decisions %q, want [held approved]", got)
	}
}

// TestLaunchNewServer: once a store pins launches, a server that appears
// in the configuration without a person approving it is held as new;
// one the program's user approves (ApproveLaunches, as the CLI's add
// does) starts; under onLaunchChange "warn" it starts and is reported.
func TestLaunchNewServer(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	rec := &recorder{}
	h := openLaunch(t, st, parse(t, map[string]any{"kit": launchKit(t, nil)}, nil), rec)
	call(t, h, "kit__echo", `{"text":"one"}`)
	h.Close()

	servers := map[string]any{"kit": launchKit(t, nil), "added": launchKit(t, map[string]string{"X": "1"})}
	h = openLaunch(t, st, parse(t, servers, nil), rec)
	if s := status(h, "added"); s.State != host.StateHeld || s.LaunchHeld != "new" {
		t.Fatalf("added by hand: state %q, launchHeld %q; want held, new", s.State, s.LaunchHeld)
	}
	if !slices.ContainsFunc(h.Findings(), func(f host.Finding) bool {
		return f.Server == "added" && f.Kind == host.KindLaunchHeld && f.Severity == host.SeverityHigh
	}) {
		t.Errorf("added by hand: findings %v, want launch_held", h.Findings())
	}
	call(t, h, "kit__echo", `{"text":"kit works"}`)
	h.Close()

	data := `{"security": {"onLaunchChange": "warn"}, "mcpServers": ` + mustJSON(t, servers) + `}`
	warn, err := config.Parse([]byte(data), "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	rec = &recorder{}
	h = openLaunch(t, st, warn, rec)
	call(t, h, "added__echo", `{"text":"warned"}`)
	if got := rec.decisions("added"); len(got) != 1 || got[0] != host.LaunchWarned {
		t.Errorf("warn: decisions %q, want [warned]", got)
	}
	if fs := status(h, "added").Findings; !slices.ContainsFunc(fs, func(f host.Finding) bool { return f.Kind == host.KindLaunchUnapproved }) {
		t.Errorf("warn: findings %v, want launch_unapproved", fs)
	}
	h.Close()

	rec = &recorder{}
	h = openLaunch(t, st, parse(t, servers, nil), rec, func(o *host.Options) { o.ApproveLaunches = []string{"added"} })
	call(t, h, "added__echo", `{"text":"approved"}`)
	if got := rec.decisions("added"); len(got) != 1 || got[0] != host.LaunchApproved {
		t.Errorf("approved by the user: decisions %q, want [approved]", got)
	}
	h.Close()

	// Approved: no longer held, and nothing is left to approve.
	h = openLaunch(t, st, parse(t, servers, nil), &recorder{})
	call(t, h, "added__echo", `{"text":"pinned"}`)
	if held, _ := h.Held(context.Background(), "added"); len(held) != 0 {
		t.Errorf("held after approval: %+v", held)
	}
	// Each decision that held or warned is an audit row; the first
	// start's pin of kit and the approval of added are not.
	var codes []string
	if !proc.Eventually(10*time.Second, func() bool {
		rows, err := st.Calls(context.Background(), store.CallFilter{Outcome: host.OutcomeGuard, Limit: 100})
		codes = codes[:0]
		for _, r := range rows {
			codes = append(codes, r.Tool+" "+r.Code)
		}
		slices.Sort(codes)
		return err == nil && len(codes) >= 2
	}) || !slices.Equal(codes, []string{"added:(launch) launch_held", "added:(launch) launch_warned"}) {
		t.Errorf("guard rows = %q, want the held and warned launches of added", codes)
	}
}

// TestLaunchUpgrade: a store made before launches were pinned (tool pins
// and a catalogue, no launch pin) pins a server at its first start, and
// a server with such a history is pinned even after the store has begun
// pinning launches.
func TestLaunchUpgrade(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ctx := context.Background()
	if err := st.Pin(ctx, store.Pin{Server: "old", Tool: "echo", Hash: "sha256:x", Definition: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	h := openLaunch(t, st, parse(t, map[string]any{"kit": launchKit(t, nil)}, nil), rec)
	call(t, h, "kit__echo", `{"text":"one"}`)
	h.Close()
	h = openLaunch(t, st, parse(t, map[string]any{"kit": launchKit(t, nil), "old": launchKit(t, nil)}, nil), rec)
	if s := status(h, "old"); s.State == host.StateHeld {
		t.Fatalf("a server pinned before launches were: held")
	}
	if got := rec.decisions("old"); len(got) != 1 || got[0] != host.LaunchPinned {
		t.Errorf("old: decisions %q, want [pinned]", got)
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLaunchDefault: the embedded default's demo server, which runs the
// program from wherever it is, is not held when the program moves.
func TestLaunchDefault(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	for _, exe := range []string{"/nonexistent/a/switchboard", "/nonexistent/b/switchboard"} {
		rec := &recorder{}
		opts := hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond, OnEvent: rec.event, NoStart: true}, st)
		h, err := host.Open(context.Background(), config.Default(exe), opts)
		if err != nil {
			t.Fatal(err)
		}
		if s := status(h, "demo"); s.State == host.StateHeld {
			t.Errorf("%s: demo held", exe)
		}
		h.Close()
	}
}
