// Package tsclient tests the gateway end to end with the official
// TypeScript SDK clients from npm, run by node: the v1 client
// (@modelcontextprotocol/sdk, the 2025 era) and the v2 client
// (@modelcontextprotocol/client, which speaks 2026-07-28). Each client
// script (legacy.mjs, modern.mjs, sharing scenario.mjs) reaches two
// upstreams through the gateway, a stdio one (this test binary re-executed
// as the testkit server) and a Streamable HTTP one served in this process,
// and prints a JSON report of what it saw, which the tests check.
//
// The npm packages are pinned and installed by scripts/peers-install.sh
// into $SWITCHBOARD_PEERS/tsclient; without them the tests skip, or fail
// under SWITCHBOARD_REQUIRE_PEERS=1 (see package peers).
package tsclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/peers"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

func TestMain(m *testing.M) {
	testkit.MaybeRunChild()
	os.Exit(m.Run())
}

const token = "tsclient-token-0123456789abcdef"

// scriptTimeout bounds one client script run; a run takes two to four
// seconds (two cancelled ten-minute calls included).
const scriptTimeout = 3 * time.Minute

// The pinned packages (scripts/peers-install.sh), relative to the peers
// directory.
const (
	modulesDir = "tsclient/node_modules"
	sdkV1      = modulesDir + "/@modelcontextprotocol/sdk/package.json"
	sdkV2      = modulesDir + "/@modelcontextprotocol/client/package.json"
)

// fixture is a gateway over HTTP (with a bearer token) in front of "s", a
// stdio upstream (this binary), and "web", a Streamable HTTP upstream
// served in this process, whose handlers testkit.SlowCancelled observes.
// Both speak 2026-07-28 ("s" is pinned to it, so that a fallback fails the
// test): the scripts ask from concurrent calls, which only the modern era
// ties to their calls (a legacy stdio server's question is refused when
// several calls are in flight); internal/gateway's own tests cover legacy
// stdio upstreams.
type fixture struct {
	url   string
	probe string // answers testkit.SlowCancelled, for the scripts
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testkit.NewServer() },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}))
	t.Cleanup(web.Close)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		// A minute to start and list, as a busy machine under the race
		// detector needs.
		"s": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer), "trust": "trusted", "protocolVersion": "2026-07-28", "startupTimeoutMs": 60000},
		// Ten minutes for a call, so that only the client's cancellation,
		// not the call timeout, can end the slow call the scripts cancel.
		"web": map[string]any{"url": web.URL, "trust": "trusted", "callTimeoutMs": 600000, "startupTimeoutMs": 60000},
	}})
	cfg, err := config.Parse(data, "tsclient.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Open(context.Background(), cfg, &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, Forward: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	for _, s := range h.Servers() {
		if s.State != host.StateReady || s.ProtocolVersion != "2026-07-28" {
			t.Fatalf("upstream %q is %v on %q: %v", s.Name, s.State, s.ProtocolVersion, s.LastError)
		}
	}

	// A small page size, so that the clients have to page through tools/list.
	g := gateway.New(h, &gateway.Options{Version: "tsclient", PageSize: 3})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- g.ServeHTTP(ctx, ln, gateway.HTTPOptions{Front: frontdoor.Options{Token: token}})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, testkit.SlowCancelled.Load())
	}))
	t.Cleanup(probe.Close)
	return &fixture{url: "http://" + ln.Addr().String() + "/mcp", probe: probe.URL}
}

// callOutcome is one tools/call as a client script saw it: a result (text,
// isError) or a thrown error (error, code).
type callOutcome struct {
	Text                string          `json:"text"`
	IsError             bool            `json:"isError"`
	Error               string          `json:"error"`
	Code                json.RawMessage `json:"code"`
	ElapsedMs           int64           `json:"elapsedMs"`
	ProgressBeforeAbort int             `json:"progressBeforeAbort"`
	UpstreamSawCancel   bool            `json:"upstreamSawCancel"`
	UpstreamCancelMs    int64           `json:"upstreamCancelMs"`
}

// exchange is one HTTP exchange of a client with the gateway (see
// tracingFetch in peer.mjs).
type exchange struct {
	HTTP           string   `json:"http"`
	Protocol       string   `json:"protocol"`
	Session        bool     `json:"session"`
	RPC            []string `json:"rpc"`
	Tool           string   `json:"tool"`
	InputResponses []string `json:"inputResponses"`
	RequestState   string   `json:"requestState"`
	Status         int      `json:"status"`
}

type progressEvent struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total"`
	Message  string  `json:"message"`
}

// report is what a client script prints (see scenario.mjs).
type report struct {
	SDK             string                     `json:"sdk"`
	SDKVersion      string                     `json:"sdkVersion"`
	Mode            string                     `json:"mode"`
	ProtocolVersion string                     `json:"protocolVersion"`
	Era             string                     `json:"era"`
	SessionID       bool                       `json:"sessionId"`
	ServerInfo      *mcp.Implementation        `json:"serverInfo"`
	ServerCaps      []string                   `json:"serverCapabilities"`
	Instructions    string                     `json:"instructions"`
	Tools           []string                   `json:"tools"`
	ToolPages       int                        `json:"toolPages"`
	Calls           map[string]callOutcome     `json:"calls"`
	Progress        map[string][]progressEvent `json:"progress"`
	Cancel          map[string]callOutcome     `json:"cancel"`
	Elicitations    []string                   `json:"elicitations"`
	Sampling        []string                   `json:"sampling"`
	RootsAsked      int                        `json:"rootsAsked"`
	Wire            []exchange                 `json:"wire"`
	Concurrent      struct {
		Calls    map[string]callOutcome `json:"calls"`
		Progress map[string][]float64   `json:"progress"`
	} `json:"concurrent"`
	Other struct {
		Ping     bool   `json:"ping"`
		Resource string `json:"resource"`
		Template string `json:"template"`
		Prompt   string `json:"prompt"`
	} `json:"other"`
	Errors []string `json:"errors"`
}

// runScript runs a client script with node against f and decodes its
// report; peersDir is the install directory (scripts/peers-install.sh).
func runScript(t *testing.T, node, peersDir string, f *fixture, script string, args ...string) *report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(),
		"TSCLIENT_MODULES="+filepath.Join(peersDir, modulesDir),
		"GATEWAY_URL="+f.url,
		"GATEWAY_TOKEN="+token,
		"CANCEL_PROBE_URL="+f.probe,
		"NODE_NO_WARNINGS=1",
	)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s %s: %v in %v", filepath.Base(script), strings.Join(args, " "), err, time.Since(start).Round(time.Millisecond))
	if stderr.Len() > 0 {
		t.Logf("stderr:\n%s", stderr.String())
	}
	if err != nil {
		t.Fatalf("%s: %v (ctx: %v)\nstdout:\n%s", script, err, ctx.Err(), stdout.String())
	}
	var r report
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &r); err != nil {
		t.Fatalf("%s: report is not JSON: %v\n%s", script, err, stdout.String())
	}
	if testing.Verbose() {
		t.Logf("report: %s", bytes.TrimSpace(stdout.Bytes()))
	}
	return &r
}

// clients locates node, the peers directory and the two client packages,
// skipping (or failing, with SWITCHBOARD_REQUIRE_PEERS=1) when missing.
func clients(t *testing.T) (node, peersDir string) {
	t.Helper()
	node, v1 := peers.Script(t, sdkV1)
	peers.Script(t, sdkV2)
	dir, err := filepath.Abs(strings.TrimSuffix(v1, string(filepath.Separator)+filepath.FromSlash(sdkV1)))
	if err != nil {
		t.Fatal(err)
	}
	return node, dir
}

func script(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(name) // go test runs in the package directory
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLegacyEraV1Client: the TS SDK v1 client negotiates 2025-11-25 with
// the gateway and gets everything through it: the tools of both upstreams
// (paged), calls, progress, sampling, elicitation and roots requests the
// upstreams make mid-call (server-to-client requests on the call's
// stream), and cancellation that reaches the upstream.
func TestLegacyEraV1Client(t *testing.T) {
	node, dir := clients(t)
	f := newFixture(t)
	before := testkit.SlowCancelled.Load()
	r := runScript(t, node, dir, f, script(t, "legacy.mjs"))
	checkReport(t, r, expect{protocol: "2025-11-25", session: true, root: "file:///tsclient-legacy"})
	checkLegacyWire(t, r)
	checkUpstreamCancelled(t, before)
	if r.ToolPages < 2 {
		t.Errorf("tools/list took %d pages; the gateway pages three at a time", r.ToolPages)
	}
}

// TestModernEraV2Client: the TS SDK v2 client pinned to 2026-07-28
// (versionNegotiation: { mode: { pin } }, which probes with
// server/discover and has no fallback) gets the same through the gateway;
// the upstreams' questions come back as input_required results that the
// client fulfils with the same handlers and retries. Mode "auto" (probe,
// with fallback to initialize) must pick 2026-07-28 too.
func TestModernEraV2Client(t *testing.T) {
	node, dir := clients(t)
	f := newFixture(t)
	for _, mode := range []string{"pin", "auto"} {
		t.Run(mode, func(t *testing.T) {
			before := testkit.SlowCancelled.Load()
			r := runScript(t, node, dir, f, script(t, "modern.mjs"), mode)
			checkReport(t, r, expect{protocol: "2026-07-28", era: "modern", root: "file:///tsclient-modern-" + mode})
			checkModernWire(t, r)
			checkUpstreamCancelled(t, before)
		})
	}
}

// TestV2ClientLegacyMode: the v2 client in its default negotiation mode
// ('legacy': plain initialize) negotiates 2025-11-25 with the gateway.
func TestV2ClientLegacyMode(t *testing.T) {
	node, dir := clients(t)
	f := newFixture(t)
	before := testkit.SlowCancelled.Load()
	r := runScript(t, node, dir, f, script(t, "modern.mjs"), "legacy")
	checkReport(t, r, expect{protocol: "2025-11-25", era: "legacy", session: true, root: "file:///tsclient-modern-legacy"})
	checkLegacyWire(t, r)
	checkUpstreamCancelled(t, before)
}

type expect struct {
	protocol string
	era      string // "" when the SDK does not report one
	session  bool   // a legacy session (Mcp-Session-Id)
	root     string // the root the client's roots/list handler returns
}

// checkUpstreamCancelled waits for the in-process upstream's slow handler
// to have seen the script's cancellation of web__slow.
func checkUpstreamCancelled(t *testing.T, before int64) {
	t.Helper()
	if !proc.Eventually(time.Minute, func() bool { return testkit.SlowCancelled.Load() > before }) {
		t.Errorf("web__slow: the upstream handler never saw the client's cancellation")
	}
}

func checkReport(t *testing.T, r *report, want expect) {
	t.Helper()
	for _, e := range r.Errors {
		t.Errorf("client error: %s", e)
	}
	if r.ProtocolVersion != want.protocol {
		t.Errorf("negotiated protocol %q, want %q", r.ProtocolVersion, want.protocol)
	}
	if want.era != "" && r.Era != want.era {
		t.Errorf("era %q, want %q", r.Era, want.era)
	}
	if r.SessionID != want.session {
		t.Errorf("session id present: %v, want %v", r.SessionID, want.session)
	}
	if r.ServerInfo == nil || r.ServerInfo.Name != "switchboard" || r.ServerInfo.Version != "tsclient" {
		t.Errorf("serverInfo = %+v", r.ServerInfo)
	}
	for _, c := range []string{"tools", "resources", "prompts", "logging"} {
		if !slices.Contains(r.ServerCaps, c) {
			t.Errorf("server capabilities %v lack %q", r.ServerCaps, c)
		}
	}
	if !strings.Contains(r.Instructions, `Server "s"`) || !strings.Contains(r.Instructions, `Server "web"`) {
		t.Errorf("instructions do not name both servers: %q", r.Instructions)
	}
	if r.Other.Ping != (r.ProtocolVersion != "2026-07-28") || r.Other.Resource != "static text" || r.Other.Template != "item 7" || r.Other.Prompt != "Hello, Ada" {
		t.Errorf("ping (legacy era only), resources and prompts: %+v", r.Other)
	}

	// The tools of both upstreams, each once, and the capability tools
	// (both upstreams offer resources and prompts).
	wantTools := []string{host.GetPromptTool, host.ListPrompts, host.ListTemplates, host.ListResources, host.ReadResourceTool}
	for _, server := range []string{"s", "web"} {
		for _, tool := range testkitTools(t) {
			wantTools = append(wantTools, server+"__"+tool)
		}
	}
	got := slices.Clone(r.Tools)
	slices.Sort(got)
	slices.Sort(wantTools)
	if !slices.Equal(got, wantTools) {
		t.Errorf("tools = %v, want %v", r.Tools, wantTools)
	}

	result := func(name, wantText string) {
		t.Helper()
		c, ok := r.Calls[name]
		switch {
		case !ok:
			t.Errorf("%s: not called", name)
		case c.Error != "":
			t.Errorf("%s: error %s", name, c.Error)
		case c.IsError || c.Text != wantText:
			t.Errorf("%s: %q (isError %v), want %q", name, c.Text, c.IsError, wantText)
		}
	}
	for _, server := range []string{"s", "web"} {
		p := server + "__"
		result(p+"echo", "hi "+p+"echo")
		if c := r.Calls[p+"fail"]; !c.IsError || !strings.Contains(c.Text, "on purpose") {
			t.Errorf("%sfail: %+v, want an isError result", p, c)
		}
		result(p+"slow", "done")
		if got := r.Progress[p+"slow"]; len(got) != 3 {
			t.Errorf("%sslow: progress %+v, want 3 reports", p, got)
		} else {
			for i, ev := range got {
				if ev.Progress != float64(i+1) || ev.Total != 3 || ev.Message != fmt.Sprintf("step %d", i+1) {
					t.Errorf("%sslow: progress report %d = %+v", p, i, ev)
				}
			}
		}
		result(p+"ask", "accept: Ada")
		result(p+"sample", "model said: Paris")
		result(p+"roots", "roots: "+want.root)

		c, ok := r.Cancel[p+"slow"]
		switch {
		case !ok:
			t.Errorf("%sslow: not cancelled", p)
		case c.Error == "" || c.Text != "":
			t.Errorf("%sslow: cancelled call ended with %+v, want the abort error", p, c)
		case c.ElapsedMs > 30000:
			t.Errorf("%sslow: the cancelled call took %d ms after the abort to end", p, c.ElapsedMs)
		}
		if c.ProgressBeforeAbort == 0 {
			t.Errorf("%sslow: no progress reached the client within 30 s of the call", p)
		}
		if server == "web" && !c.UpstreamSawCancel {
			t.Errorf("web__slow: the upstream handler did not see the cancellation within 30 s while the client was connected")
		}
		result(p+"echo#after-cancel", "still here")
	}
	if c := r.Calls["s__nope"]; string(c.Code) != "-32602" {
		t.Errorf("unknown tool: %+v, want JSON-RPC -32602", c)
	}

	// Concurrent calls on the one connection each got their own answers
	// and their own progress.
	for _, server := range []string{"s", "web"} {
		p := server + "__"
		for tool, want := range map[string]string{"ask": "accept: Ada", "sample": "model said: Paris", "roots": "roots: " + want.root, "slow": "done"} {
			if c := r.Concurrent.Calls[p+tool]; c.Error != "" || c.IsError || c.Text != want {
				t.Errorf("concurrent %s%s: %+v, want %q", p, tool, c, want)
			}
		}
		if got := r.Concurrent.Progress[p+"slow"]; !slices.Equal(got, []float64{1, 2, 3, 4}) {
			t.Errorf("concurrent %sslow: progress %v, want [1 2 3 4]", p, got)
		}
	}

	// The client's handlers were asked once per upstream in the sequential
	// part and once more in the concurrent one; every elicitation names
	// the server that asks.
	if len(r.Elicitations) != 4 {
		t.Errorf("elicitations: %q, want two per upstream", r.Elicitations)
	}
	for i, server := range []string{"s", "web"} {
		if i < len(r.Elicitations) {
			msg := r.Elicitations[i]
			if msg != fmt.Sprintf("[MCP server %q asks] What is your name?", server) {
				t.Errorf("elicitation %d %q does not name server %q", i, msg, server)
			}
		}
	}
	named := map[string]int{}
	for _, msg := range r.Elicitations {
		for _, server := range []string{"s", "web"} {
			if strings.HasPrefix(msg, fmt.Sprintf("[MCP server %q asks] ", server)) {
				named[server]++
			}
		}
	}
	if named["s"] != 2 || named["web"] != 2 {
		t.Errorf("elicitations by server %v, want two each: %q", named, r.Elicitations)
	}
	if len(r.Sampling) != 4 {
		t.Errorf("sampling requests: %q, want two per upstream", r.Sampling)
	}
	for _, q := range r.Sampling {
		if q != "What is the capital of France?" {
			t.Errorf("sampling request %q", q)
		}
	}
	if r.RootsAsked != 4 {
		t.Errorf("roots asked %d times, want 4", r.RootsAsked)
	}
}

// checkLegacyWire: the client opened a session with initialize and then
// sent its session id, and ended it with DELETE.
func checkLegacyWire(t *testing.T, r *report) {
	t.Helper()
	if len(r.Wire) == 0 || r.Wire[0].HTTP != "POST" || !slices.Equal(r.Wire[0].RPC, []string{"initialize"}) {
		t.Fatalf("first exchange %+v, want POST initialize", first(r.Wire))
	}
	deleted := false
	for i, x := range r.Wire[1:] {
		if !x.Session {
			t.Errorf("exchange %d %+v carries no session id", i+1, x)
		}
		if x.HTTP == "DELETE" {
			deleted = true
			if x.Status/100 != 2 {
				t.Errorf("DELETE of the session: status %d", x.Status)
			}
		}
		if x.HTTP == "POST" && x.Status/100 != 2 {
			t.Errorf("exchange %d %+v failed", i+1, x)
		}
	}
	if !deleted {
		t.Errorf("the session was never deleted: %+v", r.Wire)
	}
}

// checkModernWire: no initialize and no session; the client probed with
// server/discover, every POST said 2026-07-28 in Mcp-Protocol-Version, and
// the calls that needed input were retried with the input and the
// gateway's sealed requestState ("sb1." ...).
func checkModernWire(t *testing.T, r *report) {
	t.Helper()
	if len(r.Wire) == 0 || !slices.Equal(r.Wire[0].RPC, []string{"server/discover"}) {
		t.Fatalf("first exchange %+v, want server/discover", first(r.Wire))
	}
	retries := map[string]int{}
	for i, x := range r.Wire {
		if x.HTTP != "POST" {
			t.Errorf("exchange %d: %s %+v; the 2026-07-28 era has only POSTs here", i, x.HTTP, x)
			continue
		}
		if slices.Contains(x.RPC, "initialize") || x.Session {
			t.Errorf("exchange %d %+v: initialize or a session in the 2026-07-28 era", i, x)
		}
		if x.Protocol != "2026-07-28" {
			t.Errorf("exchange %d %+v: Mcp-Protocol-Version %q", i, x, x.Protocol)
		}
		if x.Tool != "" && len(x.InputResponses) > 0 {
			if x.RequestState != "sb1." {
				t.Errorf("exchange %d %+v: a retry without the gateway's requestState", i, x)
			}
			retries[x.Tool]++
		}
	}
	for _, tool := range []string{"s__ask", "s__sample", "s__roots", "web__ask", "web__sample", "web__roots"} {
		if retries[tool] != 2 { // sequential and concurrent
			t.Errorf("%s retried with input %d times, want twice", tool, retries[tool])
		}
	}
}

// testkitTools lists the tools of testkit.NewServer, each upstream's.
func testkitTools(t *testing.T) []string {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := testkit.NewServer().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "lister", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func first(w []exchange) any {
	if len(w) == 0 {
		return nil
	}
	return w[0]
}
