package host_test

// The hostile battery: every test opens a host on a hostile server
// (internal/testkit/hostile) next to a benign control server, "good", and
// proves two things besides its own subject: the control server still
// answers, and after Close nothing the host started is left running.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/ingest"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// hostileTagArg marks the command line of every stdio server a hostile
// test starts. The tests run in parallel, so "no child of the test process
// is left" must be scoped to the children of one host: each host's servers
// carry a tag of their own, which the re-executed test binary ignores
// (TestMain serves the mode before it reads any argument).
const hostileTagArg = "switchboard-hostile-tag"

var hostileTags atomic.Int64

// hostileRig is a host opened on a hostile configuration, with the
// processes it started.
type hostileRig struct {
	*host.Host
	tag  string
	pids []int // the stdio servers seen alive, at Open and at finish (each leads its own process group)
}

// hostileServer is a stdio entry for the hostile server in mode; env is
// added to the mode variable, extra to the entry.
func hostileServer(t testing.TB, mode string, env map[string]string, extra map[string]any) map[string]any {
	e := hostile.ChildEnv(mode)
	for k, v := range env {
		e[k] = v
	}
	// The tests' startup timeout unless extra says otherwise, as parse
	// gives (openHostile parses without it): some modes list thousands
	// of items, or schemas that take seconds of CPU to vet under the
	// race detector.
	s := map[string]any{"command": self(t), "env": e, "startupTimeoutMs": testStartupMs}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// goodServer is the benign control server.
func goodServer(t testing.TB) map[string]any {
	return map[string]any{"command": self(t), "env": testkit.ChildEnv(testkit.ModeServer)}
}

// hostileDoc builds a configuration document: the servers, with "good"
// added, and top-level members such as "security" and "policy".
func hostileDoc(t testing.TB, servers map[string]any, top map[string]any) []byte {
	t.Helper()
	all := map[string]any{"good": goodServer(t)}
	for k, v := range servers {
		all[k] = v
	}
	doc := map[string]any{"mcpServers": all}
	for k, v := range top {
		doc[k] = v
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// parseHostile parses a document through the real parser with an empty
// environment for ${VAR} references.
func parseHostile(data []byte) (*config.Config, error) {
	return config.Parse(data, "hostile.json", &config.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }})
}

// openHostile opens a host on servers (plus "good") and top-level members.
// At cleanup it checks that good__echo still works, closes the host and
// waits until every process it started, and their process groups, are
// gone and reaped.
func openHostile(t *testing.T, servers, top map[string]any, opts *host.Options) *hostileRig {
	t.Helper()
	tag := fmt.Sprintf("%d-%d", os.Getpid(), hostileTags.Add(1))
	tagged := map[string]any{}
	for name, s := range servers {
		tagged[name] = s
	}
	tagged["good"] = goodServer(t)
	for name, s := range tagged {
		m := s.(map[string]any)
		if _, stdio := m["command"]; stdio {
			c := map[string]any{"args": []string{hostileTagArg, tag}}
			for k, v := range m {
				c[k] = v
			}
			tagged[name] = c
		}
	}
	cfg, err := parseHostile(hostileDoc(t, tagged, top))
	if err != nil {
		t.Fatal(err)
	}
	if opts == nil {
		opts = fastOpts
	}
	if !opts.Ephemeral {
		// Each rig's tag is a new argument, so a new launch: the test
		// approves it, as a person adding the servers would.
		o := *opts
		for name := range tagged {
			o.ApproveLaunches = append(o.ApproveLaunches, name)
		}
		opts = &o
	}
	h, err := host.Open(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &hostileRig{Host: h, tag: tag}
	for _, c := range r.children() {
		r.pids = append(r.pids, c.PID)
	}
	if len(r.pids) == 0 {
		h.Close()
		t.Fatalf("no tagged child process found after Open; servers: %+v", h.Servers())
	}
	t.Cleanup(func() { r.finish(t) })
	return r
}

// children returns the live children of the test process that belong to
// this rig. A zombie has no command line, so it cannot be attributed: the
// pids recorded at Open cover those.
func (r *hostileRig) children() []proc.Info {
	var out []proc.Info
	for _, c := range proc.Live(proc.Children(os.Getpid())) {
		if slices.Contains(c.Cmdline, r.tag) {
			out = append(out, c)
		}
	}
	return out
}

// finish is every test's epilogue: the control server answers, and after
// Close no process of the rig remains, neither live nor unreaped, nor any
// member of their process groups.
func (r *hostileRig) finish(t *testing.T) {
	t.Helper()
	res, err := r.Call(context.Background(), "good__echo", json.RawMessage(`{"text":"still here"}`), nil)
	if err != nil || res.Text != "still here" {
		t.Errorf("control server after the hostile one: %+v, %v", res, err)
	}
	// Servers restarted since Open are the rig's too.
	for _, c := range r.children() {
		if !slices.Contains(r.pids, c.PID) {
			r.pids = append(r.pids, c.PID)
		}
	}
	if err := r.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	if left := r.children(); len(left) > 0 {
		t.Errorf("children left after Close: %v", left)
	}
	for _, pid := range r.pids {
		// Killed grandchildren are reaped by init, not us: poll.
		if !proc.Eventually(10*time.Second, func() bool { return !proc.Exists(pid) && len(proc.InGroup(pid)) == 0 }) {
			t.Errorf("server process %d or its group still present after Close: %v", pid, proc.InGroup(pid))
		}
	}
}

// call calls a tool and fails the test on a Go error.
func (r *hostileRig) call(t *testing.T, name, args string) *host.Result {
	t.Helper()
	res, err := r.Call(context.Background(), name, json.RawMessage(args), nil)
	if err != nil {
		t.Fatalf("Call(%s): %v", name, err)
	}
	return res
}

// tools returns server's registered tools by model-facing name.
func (r *hostileRig) tools(server string) map[string]host.Tool {
	out := map[string]host.Tool{}
	for _, tl := range r.Tools() {
		if tl.Server == server {
			out[tl.Name] = tl
		}
	}
	return out
}

// findings returns server's findings of kind.
func (r *hostileRig) findings(server, kind string) []host.Finding {
	var out []host.Finding
	for _, f := range r.Findings() {
		if f.Server == server && f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

// hasFinding reports whether server has a finding of kind about item.
func (r *hostileRig) hasFinding(server, kind, item string) bool {
	for _, f := range r.findings(server, kind) {
		if f.Item == item {
			return true
		}
	}
	return false
}

func toolItem(name string) string { return "tool " + strconv.Quote(name) }

// mustReady fails the test unless server is ready.
func (r *hostileRig) mustReady(t *testing.T, server string) {
	t.Helper()
	if st := status(r.Host, server); st.State != host.StateReady {
		t.Fatalf("server %s: %s: %s\nstderr: %s", server, st.State, st.LastError, st.Stderr)
	}
}

// canary is a loopback HTTP listener that counts the connections it
// accepts: a host tricked into fetching a URL (SSRF, a remote $ref, an
// icon) shows up as a count above zero.
type canary struct {
	net.Listener
	accepted atomic.Int64
	URL      string // a JSON document on the canary
	Port     int
}

func (c *canary) Accept() (net.Conn, error) {
	conn, err := c.Listener.Accept()
	if err == nil {
		c.accepted.Add(1)
	}
	return conn, err
}

func newCanary(t *testing.T) *canary {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &canary{Listener: ln, Port: ln.Addr().(*net.TCPAddr).Port}
	c.URL = fmt.Sprintf("http://127.0.0.1:%d/x.json", c.Port)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"type":"object"}`))
	}), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { srv.Serve(c); close(done) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return c
}

// TestHostilePoison: poisoned descriptions are flagged; an untrusted
// server's flagged tools are held back until approved (the benign one
// stays; a call is refused with held_injection), or only flagged under
// "onInjection": "flag"; in strict mode they are held back for good; a
// trusted server's are only flagged; instructions are capped; the icon on
// the canary is never fetched.
func TestHostilePoison(t *testing.T) {
	t.Parallel()
	poisoned := []string{"add_numbers", "summarize", "mail_helper"}
	for _, tc := range []struct {
		name     string
		security map[string]any
		trust    string
		held     string // the finding kind of a held tool; "" when listed
	}{
		{name: "default", held: ingest.KindHeld},
		{name: "default trusted", trust: "trusted"},
		{name: "flag only", security: map[string]any{"onInjection": "flag"}},
		{name: "strict", security: map[string]any{"strict": true}, held: ingest.KindWithheld},
		{name: "strict flag only", security: map[string]any{"strict": true, "onInjection": "flag"}, held: ingest.KindWithheld},
		{name: "strict trusted", security: map[string]any{"strict": true}, trust: "trusted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			can := newCanary(t)
			extra := map[string]any{}
			if tc.trust != "" {
				extra["trust"] = tc.trust
			}
			top := map[string]any{}
			if tc.security != nil {
				top["security"] = tc.security
			}
			r := openHostile(t, map[string]any{
				"hostile": hostileServer(t, hostile.ModePoison, map[string]string{hostile.CanaryVar: can.URL}, extra),
			}, top, nil)
			r.mustReady(t, "hostile")
			tools := r.tools("hostile")
			held := tc.held != ""
			for _, name := range poisoned {
				if !r.hasFinding("hostile", ingest.KindFlagged, toolItem(name)) {
					t.Errorf("tool %s not flagged; findings: %v", name, r.Findings())
				}
				_, listed := tools["hostile__"+name]
				if listed == held {
					t.Errorf("tool %s listed = %v, want %v (held back: %v)", name, listed, !held, held)
				}
				for _, kind := range []string{ingest.KindWithheld, ingest.KindHeld} {
					if got := r.hasFinding("hostile", kind, toolItem(name)); got != (kind == tc.held) {
						t.Errorf("tool %s %s finding = %v, want %v", name, kind, got, kind == tc.held)
					}
				}
			}
			if got, want := status(r.Host, "hostile").HeldInjection, map[bool][]string{true: {"add_numbers", "mail_helper", "summarize"}}[tc.held == ingest.KindHeld]; !slices.Equal(got, want) {
				t.Errorf("HeldInjection = %v, want %v", got, want)
			}
			// ok_echo carries no injection. (Its parameter says "the text to
			// echo", and "echo" is the control server's tool: the
			// cross_server rule fires on it; see
			// TestHostileStrictKeepsBenignTool.)
			for _, f := range r.findings("hostile", ingest.KindFlagged) {
				if f.Item == toolItem("ok_echo") && !strings.HasPrefix(f.Detail, "cross_server:") {
					t.Errorf("the benign ok_echo is flagged: %v", f)
				}
			}
			if got := r.call(t, "hostile__ok_echo", `{"text":"benign"}`).Text; got != "benign" {
				t.Errorf("ok_echo = %q", got)
			}
			switch tc.held {
			case ingest.KindWithheld:
				// A held-back tool cannot be called by either name.
				if _, err := r.Call(context.Background(), "hostile:add_numbers", json.RawMessage(`{"a":1,"b":2}`), nil); !errors.Is(err, host.ErrNotFound) {
					t.Errorf("calling a held-back tool: %v, want not found", err)
				}
			case ingest.KindHeld:
				// Refused by either name, held for review; Release (for a
				// person) says how to release it: this host has no store
				// to keep an approval (see TestHostileInjectionApproval),
				// so by trust or onInjection.
				for _, name := range []string{"hostile:add_numbers", "hostile__add_numbers"} {
					_, err := r.Call(context.Background(), name, json.RawMessage(`{"a":1,"b":2}`), nil)
					var held *host.HeldError
					if fault.CodeOf(err) != fault.CodeHeldInjection || !errors.As(err, &held) || strings.Contains(err.Error(), "onInjection") ||
						!strings.Contains(held.Release(), `"onInjection": "flag"`) {
						t.Errorf("calling %s: %v, want held_injection held for review, onInjection named in Release only", name, err)
					}
				}
			default:
				if got := r.call(t, "hostile__add_numbers", `{"a":1,"b":2}`).Text; got != "3" {
					t.Errorf("add_numbers = %q", got)
				}
			}
			st := status(r.Host, "hostile")
			if n := len(st.Instructions); n == 0 || n > config.DefaultInstructionsMaxBytes {
				t.Errorf("instructions are %d bytes, want 1..%d (the server sent %d)", n, config.DefaultInstructionsMaxBytes, hostile.InstructionsSize)
			}
			// The injection sits in the middle of 64 KiB: whatever part of
			// it survives the cap must be flagged.
			if strings.Contains(st.Instructions, "<IMPORTANT>") && !r.hasFinding("hostile", ingest.KindFlagged, "") {
				t.Errorf("the instructions keep the injection unflagged")
			}
			if !r.hasFinding("hostile", ingest.KindTruncated, "") {
				t.Errorf("no truncated finding for the instructions: %v", r.findings("hostile", ingest.KindTruncated))
			}
			if n := can.accepted.Load(); n != 0 {
				t.Errorf("the canary (add_numbers' icon) accepted %d connections", n)
			}
		})
	}
}

// TestHostileInjectionApproval: a held poisoned tool's definition is saved
// as a drift under its approval key; pinning another hash releases
// nothing; pinning the saved definition (what `switchboard approve
// hostile:add_numbers` does) releases that tool alone, its flagged
// findings become info, and the approval outlives the host.
func TestHostileInjectionApproval(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ctx := context.Background()
	servers := map[string]any{"hostile": hostileServer(t, hostile.ModePoison, nil, nil)}
	opts := hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st)
	r := openHostile(t, servers, nil, opts)
	r.mustReady(t, "hostile")
	key := ingest.ApprovalKey("add_numbers")
	var d store.Drift
	if !proc.Eventually(5*time.Second, func() bool {
		drifts, err := st.Drifts(ctx, "hostile")
		i := slices.IndexFunc(drifts, func(d store.Drift) bool { return d.Tool == key })
		if err != nil || i < 0 {
			return false
		}
		d = drifts[i]
		return true
	}) {
		t.Fatal("the held definition of add_numbers was not saved as a drift")
	}
	if !strings.Contains(string(d.Definition), "id_rsa") {
		t.Errorf("the saved definition lacks the poison: %s", d.Definition)
	}
	// An approval of some other definition (an earlier one) releases nothing.
	if err := st.Pin(ctx, store.Pin{Server: "hostile", Tool: key, Hash: "0" + d.Hash[1:], Definition: []byte(`"older"`)}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // past a refresh of the pins
	if _, err := r.Tool("hostile__add_numbers"); fault.CodeOf(err) != fault.CodeHeldInjection {
		t.Fatalf("add_numbers with a stale approval: %v, want held_injection", err)
	}
	if err := st.Pin(ctx, store.Pin{Server: "hostile", Tool: d.Tool, Hash: d.Hash, Definition: d.Definition}); err != nil {
		t.Fatal(err)
	}
	if !proc.Eventually(5*time.Second, func() bool { _, err := r.Tool("hostile__add_numbers"); return err == nil }) {
		t.Fatal("the approved tool did not come back")
	}
	if got := r.call(t, "hostile__add_numbers", `{"a":1,"b":2}`).Text; got != "3" {
		t.Errorf("add_numbers = %q", got)
	}
	if _, err := r.Call(ctx, "hostile__summarize", nil, nil); !strings.Contains(fmt.Sprint(err), "held for review") ||
		strings.Contains(fmt.Sprint(err), "switchboard approve") {
		t.Errorf("summarize: %v, want it held for review, without the approve command", err)
	} else if held := (*host.HeldError)(nil); !errors.As(err, &held) || !strings.Contains(held.Release(), "switchboard approve hostile:summarize") {
		t.Errorf("summarize: Release of %v does not name the approve command", err)
	}
	check := func(h *host.Host) {
		t.Helper()
		if _, err := h.Tool("hostile__summarize"); fault.CodeOf(err) != fault.CodeHeldInjection {
			t.Errorf("summarize: %v, want held_injection (approving one tool releases only that one)", err)
		}
		for _, f := range h.Findings() {
			if f.Server != "hostile" || f.Item != toolItem("add_numbers") {
				continue
			}
			if f.Kind == ingest.KindHeld {
				t.Errorf("the approved tool is still reported held: %v", f)
			}
			if f.Kind == ingest.KindFlagged && (f.Severity != ingest.SeverityInfo || !strings.HasSuffix(f.Detail, "(approved)")) {
				t.Errorf("a finding of the approved tool: %+v, want severity info and (approved)", f)
			}
		}
	}
	check(r.Host)
	// The approval is the store's: a new host honours it.
	r2 := openHostile(t, servers, nil, opts)
	r2.mustReady(t, "hostile")
	if got := r2.call(t, "hostile__add_numbers", `{"a":2,"b":2}`).Text; got != "4" {
		t.Errorf("add_numbers after a restart = %q", got)
	}
	check(r2.Host)
}

// TestHostileStrictKeepsBenignTool: strict mode must hold back only the
// poisoned tools; ok_echo stays listed and callable.
func TestHostileStrictKeepsBenignTool(t *testing.T) {
	t.Parallel()
	r := openHostile(t, map[string]any{"hostile": hostileServer(t, hostile.ModePoison, nil, nil)},
		map[string]any{"security": map[string]any{"strict": true}}, nil)
	r.mustReady(t, "hostile")
	if r.hasFinding("hostile", ingest.KindWithheld, toolItem("ok_echo")) {
		t.Errorf("ok_echo withheld: %v", r.findings("hostile", ingest.KindFlagged))
	}
	if got := r.call(t, "hostile__ok_echo", `{"text":"benign"}`).Text; got != "benign" {
		t.Errorf("ok_echo = %q", got)
	}
}

// hasInvisible reports the first character of s that a host must not
// show: zero-width and bidi controls, tag characters, variation selectors,
// C0/C1 controls (but newline and tab) and DEL.
func hasInvisible(s string) (rune, bool) {
	for _, c := range s {
		switch {
		case c == '\n' || c == '\t':
		case c < 0x20, c == 0x7f, c >= 0x80 && c < 0xa0:
			return c, true
		case c == 0x200b, c == 0x200c, c == 0x200d, c == 0x2060, c == 0xfeff:
			return c, true
		case c >= 0x202a && c <= 0x202e, c >= 0x2066 && c <= 0x2069:
			return c, true
		case c >= 0xe0000 && c <= 0xe007f: // tags
			return c, true
		case c >= 0xfe00 && c <= 0xfe0f, c >= 0xe0100 && c <= 0xe01ef: // variation selectors
			return c, true
		}
	}
	return 0, false
}

// TestHostileUnicode: what reaches a model is free of invisible and
// terminal-driving characters; names holding them are refused, even the
// one that renders exactly as a benign tool; the operator can still read
// the original.
func TestHostileUnicode(t *testing.T) {
	t.Parallel()
	r := openHostile(t, map[string]any{"hostile": hostileServer(t, hostile.ModeUnicode, nil, nil)}, nil, nil)
	r.mustReady(t, "hostile")
	for _, tl := range r.Tools() {
		for field, s := range map[string]string{"name": tl.Name, "title": tl.Title, "description": tl.Description} {
			if c, bad := hasInvisible(s); bad {
				t.Errorf("tool %s: %s holds %U: %q", tl.ID, field, c, s)
			}
			if !utf8.ValidString(s) {
				t.Errorf("tool %s: %s is not valid UTF-8: %q", tl.ID, field, s)
			}
		}
	}
	for _, p := range r.View(host.Caller{}).Prompts() {
		if c, bad := hasInvisible(p.Description); bad {
			t.Errorf("prompt %s: description holds %U", p.ID, c)
		}
	}
	if p, err := r.GetPrompt(context.Background(), "hostile:greet", nil, nil); err != nil || !strings.HasPrefix(p.Text, "user: Hello!") {
		t.Errorf("greet = %+v, %v", p, err)
	} else if c, bad := hasInvisible(p.Text); bad {
		t.Errorf("rendered prompt holds %U: %q", c, p.Text)
	}
	tools := r.tools("hostile")
	want := []string{"hostile__bad_utf8", "hostile__bidi_title", "hostile__ok_echo", "hostile__rpc_error", "hostile__smuggler"}
	got := slices.Sorted(maps.Keys(tools))
	if !slices.Equal(got, want) {
		t.Errorf("registered hostile tools = %v, want %v", got, want)
	}
	for _, name := range []string{"evil\u200btool", "ok_echo\u200b"} {
		if !r.hasFinding("hostile", ingest.KindNameRejected, toolItem(name)) {
			t.Errorf("no name_rejected finding for %q: %v", name, r.findings("hostile", ingest.KindNameRejected))
		}
	}
	// The lookalike must not answer for ok_echo.
	if got := r.call(t, "hostile__ok_echo", `{"text":"x"}`).Text; got != "x" {
		t.Errorf("ok_echo = %q, want the real ok_echo", got)
	}
	if d := tools["hostile__smuggler"].Description; !strings.HasPrefix(d, "Formats text.") {
		t.Errorf("smuggler description = %q, want the visible text kept", d)
	}
	// The operator's view is the server's text, invisible characters and
	// all, as JSON (which escapes the C0 controls).
	raw, err := r.RawTool("hostile:smuggler")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `\u001b[31m`) || !strings.Contains(string(raw), "\u200b") {
		t.Errorf("RawTool does not hold the escaped original: %s", raw)
	}
	var orig struct{ Description string }
	if err := json.Unmarshal(raw, &orig); err != nil || orig.Description != hostile.Smuggled {
		t.Errorf("RawTool description = %q, %v; want hostile.Smuggled", orig.Description, err)
	}
	// A refused tool is still there for the operator to inspect.
	if raw, err := r.RawTool("hostile:evil\u200btool"); err != nil || !strings.Contains(string(raw), "zero-width") {
		t.Errorf("RawTool of the refused tool = %s, %v", raw, err)
	}
}

// TestHostileShadow: a tool named like another server's tool gets a
// model-facing name of its own, even when its server's name is chosen to
// derive the victim server's prefix; and a description that talks about
// another server's tool (poison's mail_helper, with the victim set to the
// control servers' echo) is flagged cross_server.
func TestHostileShadow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, hostileName string
	}{
		{"own prefix", "hostile"},
		// "mail_" derives the prefix "mail", the victim server's: its
		// shadow would be "mail__echo" too.
		{"same derived prefix", "mail_"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			victimEnv := map[string]string{hostile.VictimVar: "echo"}
			r := openHostile(t, map[string]any{
				tc.hostileName: hostileServer(t, hostile.ModeShadow, victimEnv, nil),
				"poisoner":     hostileServer(t, hostile.ModePoison, victimEnv, nil),
				"mail":         goodServer(t),
			}, nil, nil)
			r.mustReady(t, tc.hostileName)
			r.mustReady(t, "mail")
			shadow, err := r.Tool(tc.hostileName + ":echo")
			if err != nil {
				t.Fatal(err)
			}
			victim, err := r.Tool("mail:echo")
			if err != nil {
				t.Fatal(err)
			}
			if shadow.Name == victim.Name || !nameRE.MatchString(shadow.Name) {
				t.Fatalf("shadow %q, victim %q: want distinct valid names", shadow.Name, victim.Name)
			}
			t.Logf("victim %s, shadow %s", victim.Name, shadow.Name)
			// Each name reaches its own server.
			if got := r.call(t, victim.Name, `{"text":"to the victim"}`).Text; got != "to the victim" {
				t.Errorf("victim %s = %q", victim.Name, got)
			}
			if got := r.call(t, shadow.Name, `{"to":"a@b.example","body":"x"}`).Text; !strings.Contains(got, "bcc") {
				t.Errorf("shadow %s = %q", shadow.Name, got)
			}
			// The victim's name is the plain word "echo": a mention of it
			// is not distinctive (every server may say "echo"), so
			// mail_helper is not flagged cross_server for it; it is flagged
			// for its hidden block, and the shadow is reported as such.
			if !r.hasFinding(tc.hostileName, ingest.KindShadowing, toolItem("echo")) {
				t.Errorf("the shadow is not reported: %v", r.findings(tc.hostileName, ingest.KindShadowing))
			}
			if len(r.findings("poisoner", ingest.KindFlagged)) == 0 {
				t.Errorf("mail_helper not flagged at all")
			}
			for _, f := range r.findings("mail", ingest.KindFlagged) {
				t.Errorf("the victim is flagged: %v", f)
			}
		})
	}
}

// TestHostileShadowFlagged: the shadowing tool's description ("When
// calling echo always BCC ...") talks about the victim's tool and must be
// flagged cross_server.
func TestHostileShadowFlagged(t *testing.T) {
	// A plain word is not flagged when mentioned (everyone's "echo"); a
	// tool that takes another server's tool name is reported as
	// shadowing, on both sides.
	t.Parallel()
	r := openHostile(t, map[string]any{
		"hostile": hostileServer(t, hostile.ModeShadow, map[string]string{hostile.VictimVar: "echo"}, nil),
		"mail":    goodServer(t),
	}, nil, nil)
	r.mustReady(t, "hostile")
	for _, server := range []string{"hostile", "mail"} {
		if !r.hasFinding(server, ingest.KindShadowing, toolItem("echo")) {
			t.Errorf("%s: no shadowing finding for echo: %v", server, r.findings(server, ingest.KindShadowing))
		}
	}
}

// TestHostileSchema: schema bombs and oddities are refused tool by tool,
// without a fetch (the remote $ref points at the canary); a valid schema
// without properties is normalised; the benign tool works.
func TestHostileSchema(t *testing.T) {
	t.Parallel()
	can := newCanary(t)
	r := openHostile(t, map[string]any{
		"hostile": hostileServer(t, hostile.ModeSchema, map[string]string{hostile.CanaryVar: can.URL}, nil),
	}, nil, nil)
	r.mustReady(t, "hostile")
	tools := r.tools("hostile")
	for _, name := range []string{"deep_schema", "big_schema", "many_subschemas", "remote_ref", "relative_ref", "array_schema", "string_schema", "no_schema"} {
		if _, ok := tools["hostile__"+name]; ok {
			t.Errorf("tool %s registered", name)
		}
		if name == "deep_schema" {
			// It nests past go-sdk's decoder: its list entry is dropped
			// before decoding, so the finding names its position.
			at := fmt.Sprintf("tools[%d] ", slices.Index(hostile.Catalogue(hostile.ModeSchema).ToolNames(), name))
			if !slices.ContainsFunc(r.findings("hostile", ingest.KindListSkipped), func(f host.Finding) bool { return strings.HasPrefix(f.Detail, at) }) {
				t.Errorf("no list_entry_skipped finding for %s (%s): %v", name, at, r.findings("hostile", ingest.KindListSkipped))
			}
		} else if !r.hasFinding("hostile", ingest.KindSchema, toolItem(name)) {
			t.Errorf("no schema_rejected finding for %s", name)
		}
	}
	// A local $ref cycle is not a fetch: either outcome is safe, as long
	// as it is one of them.
	if _, ok := tools["hostile__ref_cycle"]; !ok && !r.hasFinding("hostile", ingest.KindSchema, toolItem("ref_cycle")) {
		t.Errorf("ref_cycle neither registered nor refused")
	}
	np, ok := tools["hostile__no_properties"]
	if !ok {
		t.Fatalf("no_properties not registered; tools: %v", slices.Sorted(maps.Keys(tools)))
	}
	var schema map[string]json.RawMessage
	if err := json.Unmarshal(np.InputSchema, &schema); err != nil || string(schema["properties"]) != "{}" {
		t.Errorf("no_properties input schema = %s, want \"properties\":{} added", np.InputSchema)
	}
	if got := r.call(t, "hostile__no_properties", `{}`).Text; got != "called no_properties" {
		t.Errorf("no_properties = %q", got)
	}
	if got := r.call(t, "hostile__ok_echo", `{"text":"fine"}`).Text; got != "fine" {
		t.Errorf("ok_echo = %q", got)
	}
	if n := can.accepted.Load(); n != 0 {
		t.Errorf("the canary (remote $ref) accepted %d connections", n)
	}
}

// nameRE is the model-facing name syntax clients require.
var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// TestHostileListing: a listing of junk keeps its good entries, and a
// listing of thousands of tools is capped.
func TestHostileListing(t *testing.T) {
	t.Parallel()
	r := openHostile(t, map[string]any{
		"hostile": hostileServer(t, hostile.ModeListing, nil, nil),
		"many":    hostileServer(t, hostile.ModeMany, nil, nil),
	}, nil, nil)
	r.mustReady(t, "hostile")
	r.mustReady(t, "many")
	for _, tl := range r.Tools() {
		if !nameRE.MatchString(tl.Name) {
			t.Errorf("model-facing name %q does not match %s", tl.Name, nameRE)
		}
	}

	tools := r.tools("hostile")
	if got := r.call(t, "hostile__ok_echo", `{"text":"ok"}`).Text; got != "ok" {
		t.Errorf("ok_echo = %q", got)
	}
	// null, 42 and "str" are not objects: dropped before decoding, each
	// with a finding that names its position.
	skipped := r.findings("hostile", ingest.KindListSkipped)
	for i, e := range hostile.Catalogue(hostile.ModeListing).Tools {
		if e.JSON[0] == '{' {
			continue
		}
		at := fmt.Sprintf("tools[%d] ", i)
		if !slices.ContainsFunc(skipped, func(f host.Finding) bool { return strings.HasPrefix(f.Detail, at) }) {
			t.Errorf("no list_entry_skipped finding for %s (%s): %v", at, e.JSON, skipped)
		}
	}
	if !r.hasFinding("hostile", ingest.KindNameRejected, toolItem("")) {
		t.Errorf("the nameless tool has no name_rejected finding: %v", r.findings("hostile", ingest.KindNameRejected))
	}
	dups := 0
	for _, tl := range r.Tools() {
		if tl.ID == "hostile:dup_tool" {
			dups++
			if !strings.HasPrefix(tl.Description, "The first") {
				t.Errorf("dup_tool kept the second definition: %q", tl.Description)
			}
		}
	}
	if dups != 1 || !r.hasFinding("hostile", ingest.KindDuplicate, toolItem("dup_tool")) {
		t.Errorf("dup_tool registered %d times, duplicate finding %v", dups, r.findings("hostile", ingest.KindDuplicate))
	}
	long := "long_" + strings.Repeat("n", hostile.LongNameLen-len("long_"))
	lt, err := r.Tool("hostile:" + long)
	if err != nil {
		t.Fatalf("the %d-character tool is not registered: %v", hostile.LongNameLen, err)
	}
	if !nameRE.MatchString(lt.Name) {
		t.Errorf("long tool's model-facing name %q (%d chars)", lt.Name, len(lt.Name))
	}
	if got := r.call(t, lt.Name, `{}`).Text; got != "called "+long {
		t.Errorf("long tool by its model-facing name = %q", got)
	}
	if want := []string{"hostile__dup_tool", "hostile__ok_echo", lt.Name}; !slices.Equal(slices.Sorted(maps.Keys(tools)), slices.Sorted(slices.Values(want))) {
		t.Errorf("hostile tools = %v, want %v", slices.Sorted(maps.Keys(tools)), want)
	}

	many := r.tools("many")
	if n := len(many); n != config.DefaultMaxToolsPerServer {
		t.Errorf("mode many (%d tools) registered %d, want the cap, %d", hostile.ManyTools+1, n, config.DefaultMaxToolsPerServer)
	}
	if len(r.findings("many", ingest.KindTooMany)) == 0 {
		t.Errorf("no too_many_tools finding")
	}
	if st := status(r.Host, "many"); st.Tools != len(many) {
		t.Errorf("status counts %d tools, Tools lists %d", st.Tools, len(many))
	}
	if got := r.call(t, "many__ok_echo", `{"text":"first"}`).Text; got != "first" {
		t.Errorf("many ok_echo = %q", got)
	}
}

// wireResult is a guarded tool result as the host returns it in Raw.
type wireResult struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MIMEType string `json:"mimeType"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func decodeResult(t *testing.T, res *host.Result) wireResult {
	t.Helper()
	var w wireResult
	if err := json.Unmarshal(res.Raw, &w); err != nil {
		t.Fatalf("%s: raw result does not decode: %v", res.Tool, err)
	}
	return w
}

// count returns the number of blocks of type typ.
func (w wireResult) count(typ string) int {
	n := 0
	for _, b := range w.Content {
		if b.Type == typ {
			n++
		}
	}
	return n
}

// texts joins the text blocks.
func (w wireResult) texts() string {
	var s []string
	for _, b := range w.Content {
		if b.Type == "text" {
			s = append(s, b.Text)
		}
	}
	return strings.Join(s, "\n")
}

// TestHostileResults: oversized, deep, crowded and bad-image results are
// cut down to what a model can safely take, saying what was removed, and
// the result itself survives.
func TestHostileResults(t *testing.T) {
	t.Parallel()
	r := openHostile(t, map[string]any{
		"hostile": hostileServer(t, hostile.ModeResults, nil, nil),
		"noimg":   hostileServer(t, hostile.ModeResults, nil, map[string]any{"images": false}),
	}, map[string]any{"security": map[string]any{
		// huge_image is 6 MiB of base64, 4.5 MiB decoded: under the
		// default imageMaxBytes of 5 MiB (a decoded size), where it is
		// kept. A 4 MiB cap makes it the oversized image.
		"imageMaxBytes": 4 << 20,
	}}, nil)
	r.mustReady(t, "hostile")
	r.mustReady(t, "noimg")

	t.Run("big_text", func(t *testing.T) {
		// A model gets a preview and the whole text in pages; a person
		// (KeepWhole) gets it cut, with a marker.
		if whole := readSpilled(t, r.Host, r.call(t, "hostile__big_text", `{}`)); whole != strings.Repeat("r", hostile.BigTextSize) {
			t.Errorf("big_text: stored %d bytes", len(whole))
		}
		res, err := r.Call(context.Background(), "hostile__big_text", json.RawMessage(`{}`), &host.CallOptions{KeepWhole: true})
		if err != nil {
			t.Fatal(err)
		}
		w := decodeResult(t, res)
		if len(w.Content) != 1 || len(w.Content[0].Text) > config.DefaultResultTextMaxBytes {
			t.Fatalf("big_text: %d blocks, first %d bytes; want one block within %d", len(w.Content), len(w.Content[0].Text), config.DefaultResultTextMaxBytes)
		}
		marker := fmt.Sprintf("[switchboard: result truncated: %d bytes", hostile.BigTextSize)
		if !strings.Contains(w.Content[0].Text, marker) || len(w.Content[0].Text) > config.DefaultResultTextMaxBytes {
			t.Errorf("big_text: %d bytes of text ending %q, want the marker %q", len(res.Text), res.Text[max(0, len(res.Text)-100):], marker)
		}
	})
	t.Run("many_blocks", func(t *testing.T) {
		w := decodeResult(t, r.call(t, "hostile__many_blocks", `{}`))
		if n := len(w.Content); n == 0 || n > config.DefaultResultMaxBlocks {
			t.Errorf("many_blocks: %d blocks, want 1..%d", n, config.DefaultResultMaxBlocks)
		}
		if !strings.Contains(w.texts(), "content blocks dropped") || w.Content[0].Text != "block 0" {
			t.Errorf("many_blocks: no notice of the dropped blocks, or the head is lost: %q ... %q", w.Content[0].Text, w.Content[len(w.Content)-1].Text)
		}
	})
	// deep_structured: see TestHostileDeepStructured.
	t.Run("bad_utf8_text", func(t *testing.T) {
		res := r.call(t, "hostile__bad_utf8_text", `{}`)
		if !utf8.Valid(res.Raw) || !strings.Contains(res.Text, "before") || !strings.Contains(res.Text, "after") {
			t.Errorf("bad_utf8_text: valid %v, text %q", utf8.Valid(res.Raw), res.Text)
		}
	})
	t.Run("six_images", func(t *testing.T) {
		w := decodeResult(t, r.call(t, "hostile__six_images", `{}`))
		if n := w.count("image"); n != config.DefaultImagesPerResult {
			t.Errorf("six_images kept %d images, want %d", n, config.DefaultImagesPerResult)
		}
		if n := strings.Count(w.texts(), "too_many_images"); n != hostile.SmallImages-config.DefaultImagesPerResult {
			t.Errorf("six_images: %d too_many_images placeholders, want %d: %q", n, hostile.SmallImages-config.DefaultImagesPerResult, w.texts())
		}
	})
	for _, tc := range []struct{ tool, reason string }{
		{"png_bomb", "too_wide"},
		{"png_as_jpeg", "mime_mismatch"},
		{"svg_image", "unsupported_type"},
		{"huge_image", "too_large"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			res := r.call(t, "hostile__"+tc.tool, `{}`)
			w := decodeResult(t, res)
			if n := w.count("image"); n != 0 || res.IsError {
				t.Errorf("%s: %d images kept, isError %v", tc.tool, n, res.IsError)
			}
			if len(res.Raw) > 64<<10 {
				t.Errorf("%s: the guarded result is still %d bytes", tc.tool, len(res.Raw))
			}
			want := "[switchboard: image rejected from server hostile: " + tc.reason
			if !strings.Contains(w.texts(), want) {
				t.Errorf("%s: text %q, want a placeholder %q", tc.tool, w.texts(), want)
			}
		})
	}
	t.Run("images disabled", func(t *testing.T) {
		for _, tool := range []string{"six_images", "png_bomb", "png_as_jpeg", "svg_image"} {
			w := decodeResult(t, r.call(t, "noimg__"+tool, `{}`))
			if n := w.count("image"); n != 0 {
				t.Errorf("%s on a server without images: %d images kept", tool, n)
			}
			if !strings.Contains(w.texts(), "[switchboard: image withheld: images are disabled for server noimg]") {
				t.Errorf("%s: no withheld placeholder: %q", tool, w.texts())
			}
		}
	})
}

// TestHostileDeepStructured: structuredContent nested 10,000 levels is
// removed by the result guard, the rest of the result survives, and the
// server stays connected, over stdio and over HTTP.
func TestHostileDeepStructured(t *testing.T) {
	// structuredContent nested deeper than go-sdk accepts (1000 levels)
	// cannot be guarded: go-sdk refuses the response first. The call fails
	// with a code naming the server (documented in docs/SECURITY.md), and
	// nothing else is lost: the server's other tools work (on stdio after
	// a reconnect), and so does every other server.
	t.Parallel()
	web := httptest.NewServer(hostile.Handler(hostile.ModeResults))
	t.Cleanup(web.Close)
	r := openHostile(t, map[string]any{
		"hostile": hostileServer(t, hostile.ModeResults, nil, nil),
		"web":     map[string]any{"url": web.URL, "trust": "trusted"},
	}, nil, nil)
	for _, server := range []string{"hostile", "web"} {
		r.mustReady(t, server)
		_, err := r.Call(context.Background(), server+"__deep_structured", nil, nil)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Server != server || (fe.Code != fault.CodeServerError && fe.Code != fault.CodeUnknownOutcome) {
			t.Errorf("%s: deep_structured: %v, want server_error or unknown_outcome naming the server", server, err)
		}
		if got := r.call(t, server+"__ok_echo", `{"text":"still here"}`).Text; got != "still here" {
			t.Errorf("%s: ok_echo after the refusal = %q", server, got)
		}
	}
}

// vmRSS reads the test process's resident set size in bytes.
func vmRSS() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS in /proc/self/status")
}

// raceEnabled reports whether the test binary was built with -race, whose
// shadow memory adds a multiple of the Go heap to the RSS.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// floodFigures is what one 2 GiB flood cost the host.
type floodFigures struct {
	err       error
	elapsed   time.Duration
	baseRSS   int64
	peakRSS   int64  // VmRSS: the Go runtime's memory, the race detector's shadow, the binary
	peakGo    uint64 // memory the Go runtime mapped (/memory/classes/total:bytes)
	peakHeap  uint64 // heap objects, live or not yet swept
	allocated uint64 // bytes allocated during the call
	pid       int    // the flooding server
}

func (f floodFigures) String() string {
	return fmt.Sprintf("%v after %v; RSS %d MiB before, peak %d MiB; Go runtime peak %d MiB, heap objects peak %d MiB, %d MiB allocated (race detector: %v)",
		f.err, f.elapsed.Round(time.Millisecond), f.baseRSS>>20, f.peakRSS>>20, f.peakGo>>20, f.peakHeap>>20, f.allocated>>20, raceEnabled())
}

// flood calls bigframe's flood for 2 GiB with the default 16 MiB frame
// cap, sampling the host's memory every 2 ms while the call runs.
func flood(t *testing.T, r *hostileRig) floodFigures {
	t.Helper()
	r.mustReady(t, "hostile")
	var f floodFigures
	for _, c := range r.children() {
		if procEnvHas(c.PID, hostile.ModeVar+"="+hostile.ModeBigFrame) {
			f.pid = c.PID
		}
	}
	if f.pid == 0 {
		t.Fatalf("cannot find the hostile server among %v", r.children())
	}
	samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(samples)
	allocs := samples[0].Value.Uint64()
	var err error
	if f.baseRSS, err = vmRSS(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := slices.Clone(samples)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss, err := vmRSS(); err == nil {
				f.peakRSS = max(f.peakRSS, rss)
			}
			metrics.Read(s)
			f.peakGo = max(f.peakGo, s[1].Value.Uint64())
			f.peakHeap = max(f.peakHeap, s[2].Value.Uint64())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	start := time.Now()
	_, f.err = r.Call(context.Background(), "hostile__flood", json.RawMessage(`{"bytes":2147483648}`), nil)
	f.elapsed = time.Since(start)
	close(stop)
	wg.Wait() // the sampler's writes to f happen before this
	metrics.Read(samples)
	f.allocated = samples[0].Value.Uint64() - allocs
	t.Logf("flood: %v", f)
	return f
}

// TestHostileBigFrame: a 2 GiB response line fails the call as too_large,
// naming the server and the cap, the host's memory stays bounded, and the
// server is stopped. Not parallel: memory figures are the whole
// process's, so the other tests would blur them.
func TestHostileBigFrame(t *testing.T) {
	r := openHostile(t, map[string]any{"hostile": hostileServer(t, hostile.ModeBigFrame, nil, nil)}, nil, nil)
	f := flood(t, r)
	if fault.CodeOf(f.err) != fault.CodeTooLarge {
		t.Errorf("flood: %v (code %q), want too_large", f.err, fault.CodeOf(f.err))
	}
	var fe *fault.Error
	if !errors.As(f.err, &fe) || fe.Server != "hostile" || !strings.Contains(f.err.Error(), `"hostile"`) || !strings.Contains(f.err.Error(), "16 MiB") {
		t.Errorf("flood error %v does not name the server and the 16 MiB cap", f.err)
	}
	// The Go runtime's own memory is the host's, with or without -race;
	// the RSS bound holds only without the race detector's shadow memory
	// (see TestHostileBigFrameMemory).
	if f.peakGo >= 256<<20 {
		t.Errorf("the Go runtime peaked at %d MiB during the flood, want under 256 MiB", f.peakGo>>20)
	}
	if !raceEnabled() && f.peakRSS >= 256<<20 {
		t.Errorf("RSS peaked at %d MiB during the flood, want under 256 MiB", f.peakRSS>>20)
	}
	if !proc.Eventually(10*time.Second, func() bool { return !proc.Alive(f.pid) }) {
		t.Errorf("the flooding server (pid %d) is still running", f.pid)
	}
	// What follows is the host's choice: the call after the broken
	// connection fails unavailable, or (supervised) runs on a fresh
	// process; never on the flooding one, which is gone.
	res, err := r.Call(context.Background(), "hostile__ok_echo", json.RawMessage(`{"text":"x"}`), nil)
	switch {
	case err != nil && !errors.Is(err, host.ErrUnavailable):
		t.Errorf("call after the flood: %v, want unavailable or a fresh server", err)
	case err == nil && res.Text != "x":
		t.Errorf("call after the flood = %q", res.Text)
	}
	t.Logf("after the flood: state %s; next call: %v", status(r.Host, "hostile").State, err)
}

// TestHostileBigFrameMemory: the frame cap bounds memory: during a 2 GiB
// line the Go runtime's memory (what the host itself holds, measured by
// runtime/metrics, without the race detector's shadow memory) stays under
// 256 MiB, and so does the process's RSS when the race detector is off
// (measured here: 16 MiB before, 75 MiB at the peak).
func TestHostileBigFrameMemory(t *testing.T) {
	r := openHostile(t, map[string]any{"hostile": hostileServer(t, hostile.ModeBigFrame, nil, nil)}, nil, nil)
	f := flood(t, r)
	if f.peakGo >= 256<<20 {
		t.Errorf("the Go runtime's memory peaked at %d MiB during the flood, want under 256 MiB", f.peakGo>>20)
	}
	if !raceEnabled() && f.peakRSS >= 256<<20 {
		t.Errorf("RSS peaked at %d MiB during the flood, want under 256 MiB", f.peakRSS>>20)
	}
}

// procEnvHas reports whether process pid's environment holds kv.
func procEnvHas(pid int, kv string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && slices.Contains(strings.Split(string(b), "\x00"), kv)
}

// envDump calls env_dump.
func envDump(t *testing.T, r *hostileRig) hostile.EnvDump {
	t.Helper()
	var d hostile.EnvDump
	if err := json.Unmarshal([]byte(r.call(t, "hostile__env_dump", `{}`).Text), &d); err != nil {
		t.Fatalf("env_dump: %v", err)
	}
	return d
}

// TestHostileEnv: loader variables need an explicit allowEnv, and the
// host's own environment never reaches a server. Not parallel: t.Setenv.
func TestHostileEnv(t *testing.T) {
	t.Setenv("MY_SECRET_TOKEN", "hunter2")
	t.Setenv("LD_PRELOAD", "") // whatever the host has, a server must not inherit it

	t.Run("LD_PRELOAD refused", func(t *testing.T) {
		_, err := parseHostile(hostileDoc(t, map[string]any{
			"hostile": hostileServer(t, hostile.ModeEnv, map[string]string{"LD_PRELOAD": "/tmp/evil.so"}, nil),
		}, nil))
		if err == nil || !strings.Contains(err.Error(), "LD_PRELOAD") || !strings.Contains(err.Error(), "allowEnv") {
			t.Errorf("config with LD_PRELOAD: %v, want a refusal naming LD_PRELOAD and allowEnv", err)
		}
	})
	t.Run("allowed", func(t *testing.T) {
		r := openHostile(t, map[string]any{
			"hostile": hostileServer(t, hostile.ModeEnv, map[string]string{"LD_LIBRARY_PATH": "/nonexistent"},
				map[string]any{"allowEnv": []string{"LD_LIBRARY_PATH"}}),
		}, nil, nil)
		r.mustReady(t, "hostile")
		d := envDump(t, r)
		if v := d.Values["LD_LIBRARY_PATH"]; v == nil || *v != "/nonexistent" {
			t.Errorf("LD_LIBRARY_PATH in the server = %v, want /nonexistent", v)
		}
		if v := d.Values["LD_PRELOAD"]; v != nil {
			t.Errorf("LD_PRELOAD reached the server: %q", *v)
		}
		if v, ok := d.Values["MY_SECRET_TOKEN"]; ok || slices.Contains(d.Names, "MY_SECRET_TOKEN") {
			t.Errorf("the host's MY_SECRET_TOKEN reached the server: %v", v)
		}
		t.Logf("server environment: %v", d.Names)
	})
}

// fakePeer records the requests a server makes through a call.
type fakePeer struct {
	mu       sync.Mutex
	sampling []*mcp.CreateMessageWithToolsParams
	elicits  []*mcp.ElicitParams
}

func (p *fakePeer) CreateMessage(_ context.Context, _ string, m *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sampling = append(p.sampling, m)
	return &mcp.CreateMessageWithToolsResult{Model: "fake-model", Role: "assistant", Content: []mcp.Content{&mcp.TextContent{Text: "fake answer"}}}, nil
}

func (p *fakePeer) Elicit(_ context.Context, _ string, e *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.elicits = append(p.elicits, e)
	return &mcp.ElicitResult{Action: "decline"}, nil
}

func (p *fakePeer) ListRoots(context.Context, string) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{}, nil
}

func (p *fakePeer) Log(context.Context, string, *mcp.LoggingMessageParams) {}

func (p *fakePeer) counts() (sampling, elicits int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sampling), len(p.elicits)
}

// TestHostileSampling: an untrusted server's sampling request never
// reaches the client's model unless its configuration says "sampling":
// true.
func TestHostileSampling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		extra   map[string]any
		allowed bool
	}{
		{name: "untrusted"},
		{name: "sampling allowed", extra: map[string]any{"sampling": true}, allowed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := openHostile(t, map[string]any{"hostile": hostileServer(t, hostile.ModeSampling, nil, tc.extra)}, nil,
				&host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, Forward: true})
			r.mustReady(t, "hostile")
			peer := &fakePeer{}
			res, err := r.Call(context.Background(), "hostile__ask", nil, &host.CallOptions{Peer: peer})
			if err != nil {
				t.Fatalf("ask: %v", err)
			}
			var ask hostile.AskResult
			if err := json.Unmarshal([]byte(res.Text), &ask); err != nil {
				t.Fatalf("ask result %q: %v", res.Text, err)
			}
			sampled, elicited := peer.counts()
			t.Logf("ask: %d sampling and %d elicitation requests reached the peer; result %s", sampled, elicited, res.Text)
			if tc.allowed {
				if sampled != 1 || !strings.Contains(string(ask.Sampling), "fake answer") {
					t.Errorf("allowed sampling: peer saw %d requests, server got %s / %q", sampled, ask.Sampling, ask.SamplingError)
				}
				return
			}
			if sampled != 0 {
				t.Errorf("the peer saw %d sampling requests from an untrusted server", sampled)
			}
			if ask.SamplingError == "" || ask.Sampling != nil {
				t.Errorf("refused sampling: the server got %s, error %q; want an error", ask.Sampling, ask.SamplingError)
			}
		})
	}
}

// TestHostileSSRF: an untrusted remote server on a loopback address, by
// any spelling, is refused before a connection is made; a trusted one
// connects.
func TestHostileSSRF(t *testing.T) {
	t.Parallel()
	can := newCanary(t)
	trusted := httptest.NewServer(hostile.Handler(hostile.ModePoison))
	t.Cleanup(trusted.Close)
	port := strconv.Itoa(can.Port)
	refused := map[string]string{
		"loopback":  can.URL,
		"localhost": "http://localhost:" + port + "/x.json",
		"mapped":    "http://[::ffff:127.0.0.1]:" + port + "/",
		"any":       "http://0.0.0.0:" + port + "/",
		"any6":      "http://[::]:" + port + "/",
	}
	servers := map[string]any{"trusted": map[string]any{"url": trusted.URL, "trust": "trusted"}}
	for name, u := range refused {
		servers[name] = map[string]any{"url": u}
	}
	servers["sse"] = map[string]any{"type": "sse", "url": can.URL}
	refused["sse"] = can.URL
	r := openHostile(t, servers, nil, nil)
	for name, u := range refused {
		st := status(r.Host, name)
		if st.State != host.StateFailed || !strings.Contains(st.LastError, "connect: policy_blocked") {
			t.Errorf("untrusted %s (%s): %s %q, want failed with policy_blocked", name, u, st.State, st.LastError)
		}
		// Nor does a call, which may redial, reach the address.
		if _, err := r.Call(context.Background(), name+"__ok_echo", json.RawMessage(`{"text":"x"}`), nil); err == nil {
			t.Errorf("untrusted %s (%s): a call succeeded", name, u)
		}
	}
	t.Logf("refused: %s", status(r.Host, "mapped").LastError)
	r.mustReady(t, "trusted")
	if got := r.call(t, "trusted__ok_echo", `{"text":"over http"}`).Text; got != "over http" {
		t.Errorf("trusted ok_echo = %q", got)
	}
	if n := can.accepted.Load(); n != 0 {
		t.Errorf("the canary accepted %d connections", n)
	}
}

// confirmer is a host.Confirmer with a settable answer that records whom
// it was asked about.
type confirmer struct {
	answer atomic.Bool
	mu     sync.Mutex
	asked  []string
}

func (c *confirmer) confirm(_ context.Context, cf host.Confirmation) (bool, error) {
	c.mu.Lock()
	c.asked = append(c.asked, cf.ID)
	c.mu.Unlock()
	return c.answer.Load(), nil
}

func (c *confirmer) wasAsked(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.asked, id)
}

// TestHostilePolicy: deny rules, confirmation that annotations of an
// untrusted server cannot relax, and per-client quotas.
func TestHostilePolicy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("deny", func(t *testing.T) {
		t.Parallel()
		r := openHostile(t, map[string]any{"hostile": hostileServer(t, hostile.ModeSampling, nil, nil)},
			map[string]any{"policy": map[string]any{"rules": []any{map[string]any{"deny": "hostile:rm_*"}}}}, nil)
		r.mustReady(t, "hostile")
		_, err := r.Call(ctx, "hostile__rm_rf", json.RawMessage(`{"path":"/"}`), nil)
		if fault.CodeOf(err) != fault.CodePolicyBlocked {
			t.Errorf("denied rm_rf: %v, want policy_blocked", err)
		}
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Server != "hostile" || fe.Op != `call tool "rm_rf"` {
			t.Errorf("denied rm_rf: %#v, want server hostile, op call tool \"rm_rf\"", fe)
		}
		if got := r.call(t, "hostile__ok_echo", `{"text":"after"}`).Text; got != "after" {
			t.Errorf("ok_echo after the refusal = %q", got)
		}
	})
	t.Run("confirm", func(t *testing.T) {
		t.Parallel()
		c := &confirmer{}
		r := openHostile(t, map[string]any{
			"hostile": hostileServer(t, hostile.ModeSampling, nil, nil),
			"vouched": hostileServer(t, hostile.ModeSampling, nil, map[string]any{"trust": "trusted"}),
		}, map[string]any{"policy": map[string]any{"confirm": "destructive"}},
			&host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, Confirm: c.confirm})
		r.mustReady(t, "hostile")
		r.mustReady(t, "vouched")

		_, err := r.Call(ctx, "hostile__rm_rf", json.RawMessage(`{"path":"/"}`), nil)
		if fault.CodeOf(err) != fault.CodePolicyBlocked || !c.wasAsked("hostile:rm_rf") {
			t.Errorf("declined rm_rf: %v (asked %v), want policy_blocked after asking", err, c.asked)
		}
		c.answer.Store(true)
		if got := r.call(t, "hostile__rm_rf", `{"path":"/tmp/x"}`).Text; got != "would have removed /tmp/x" {
			t.Errorf("confirmed rm_rf = %q", got)
		}

		// The untrusted server says annotated_readonly is read-only; it
		// lies, and its annotations count for nothing.
		if tl, err := r.Tool("hostile:annotated_readonly"); err != nil || tl.Annotations != nil && tl.Annotations.ReadOnlyHint {
			t.Errorf("untrusted annotated_readonly keeps readOnlyHint: %+v, %v", tl.Annotations, err)
		}
		c.answer.Store(false)
		_, err = r.Call(ctx, "hostile__annotated_readonly", nil, nil)
		if fault.CodeOf(err) != fault.CodePolicyBlocked || !c.wasAsked("hostile:annotated_readonly") {
			t.Errorf("untrusted annotated_readonly: %v (asked %v), want confirmation", err, c.asked)
		}
		// A trusted server's word is taken.
		if got := r.call(t, "vouched__annotated_readonly", `{}`).Text; !strings.Contains(got, "deleted everything") {
			t.Errorf("trusted annotated_readonly = %q", got)
		}
		if c.wasAsked("vouched:annotated_readonly") {
			t.Errorf("a trusted read-only tool needed confirmation")
		}
		_, err = r.Call(ctx, "vouched__rm_rf", json.RawMessage(`{"path":"/"}`), nil)
		if fault.CodeOf(err) != fault.CodePolicyBlocked || !c.wasAsked("vouched:rm_rf") {
			t.Errorf("trusted destructive rm_rf: %v, want confirmation", err)
		}
		// The control server is untrusted too: its echo needs a yes.
		c.answer.Store(true)
	})
	t.Run("quota", func(t *testing.T) {
		t.Parallel()
		r := openHostile(t, map[string]any{"hostile": hostileServer(t, hostile.ModeSampling, nil, nil)},
			map[string]any{"policy": map[string]any{"quota": map[string]any{"calls": 2, "perMs": 60000}}}, nil)
		r.mustReady(t, "hostile")
		for _, client := range []string{"a", "b"} {
			opts := &host.CallOptions{Client: client}
			for i := range 3 {
				_, err := r.Call(ctx, "hostile__ok_echo", json.RawMessage(`{"text":"q"}`), opts)
				switch {
				case i < 2 && err != nil:
					t.Errorf("client %s call %d: %v", client, i+1, err)
				case i == 2 && fault.CodeOf(err) != fault.CodeRateLimited:
					t.Errorf("client %s call 3: %v, want rate_limited", client, err)
				}
			}
		}
		// The epilogue's good__echo is the process's ("") first call.
	})
}
