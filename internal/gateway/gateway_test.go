package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

func TestMain(m *testing.M) {
	testkit.MaybeRunChild()
	hostile.MaybeRunChild()
	maybeRunBenchRole()
	maybeRunAsker()
	testkit.WaitingParallel()
	os.Exit(pgtest.Main(m))
}

const token = "test-token-0123456789abcdef"

// fixture is a gateway over HTTP in front of two upstreams: "s", a stdio
// server (the test binary), and "web", a Streamable HTTP server served in
// this process (so its handlers can be observed).
type fixture struct {
	url  string
	host *host.Host
}

func newFixture(t *testing.T, extra map[string]any) *fixture {
	t.Helper()
	return newFixtureWith(t, extra, nil)
}

// newFixtureWith is newFixture with top-level configuration members
// (security, policy) added.
func newFixtureWith(t *testing.T, extra, top map[string]any) *fixture {
	t.Helper()
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testkit.NewServer() },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}))
	t.Cleanup(web.Close)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	servers := map[string]any{
		// Pinned to the legacy era, so that the gateway's tests meet a
		// legacy stdio upstream ("sm", modernStdio, is the other era).
		"s":   map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer), "trust": "trusted", "protocolVersion": "2025-11-25"},
		"web": map[string]any{"url": web.URL, "trust": "trusted"},
	}
	for k, v := range extra {
		servers[k] = v
	}
	doc := map[string]any{"mcpServers": servers}
	for k, v := range top {
		doc[k] = v
	}
	cfg := parseDoc(t, doc, nil)
	h, syncs := openHost(t, cfg, host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, Forward: true})
	g := gateway.New(h, &gateway.Options{Version: "test", PageSize: 3, OnConfirm: cfg.Policy.OnConfirm})
	syncs(g)
	base := serveHTTP(t, g, gateway.HTTPOptions{Front: frontdoor.Options{Token: token}})
	return &fixture{url: base + "/mcp", host: h}
}

// parseDoc parses the configuration doc with the environment env. Each
// server gets a minute to start and list unless the test sets its own
// startupTimeoutMs: a machine busy with other test packages under the
// race detector needs it even for an in-process server.
func parseDoc(t testing.TB, doc map[string]any, env map[string]string) *config.Config {
	t.Helper()
	if servers, ok := doc["mcpServers"].(map[string]any); ok {
		for _, s := range servers {
			if m, ok := s.(map[string]any); ok && m["startupTimeoutMs"] == nil {
				m["startupTimeoutMs"] = 60000
			}
		}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data, "test.json", &config.LoadOptions{LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// modernStdio is the stdio test server on 2026-07-28, the era a stdio
// upstream is probed for first (pinned here, so that a test fails rather
// than fall back), for the tests of a modern stdio upstream; the fixture's
// "s" is pinned to the legacy era.
func modernStdio(t *testing.T) map[string]any {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer), "trust": "trusted", "protocolVersion": "2026-07-28"}
}

// upstreamVersions fails the test unless each named upstream speaks the
// given protocol version.
func upstreamVersions(t *testing.T, h *host.Host, want map[string]string) {
	t.Helper()
	for _, s := range h.Servers() {
		if v, ok := want[s.Name]; ok && s.ProtocolVersion != v {
			t.Fatalf("upstream %s speaks %q, want %s", s.Name, s.ProtocolVersion, v)
		}
	}
}

type bearer struct{ next http.RoundTripper }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	return b.next.RoundTrip(r)
}

// progressLog collects progress notifications by token.
type progressLog struct {
	mu   sync.Mutex
	seen map[any][]float64
}

func (p *progressLog) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen[req.Params.ProgressToken] = append(p.seen[req.Params.ProgressToken], req.Params.Progress)
}

func (p *progressLog) get(tok any) []float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[tok]
}

// connect opens a go-sdk client session; version "" is the modern era.
func (f *fixture) connect(t *testing.T, version string) (*mcp.ClientSession, *progressLog) {
	t.Helper()
	log := &progressLog{seen: map[any][]float64{}}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{ProgressNotificationHandler: log.handler})
	return f.connectWith(t, c, version), log
}

// connectWith connects client c to the gateway; version "" is the modern
// era.
func (f *fixture) connectWith(t testing.TB, c *mcp.Client, version string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: &http.Client{Transport: bearer{http.DefaultTransport}}}
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(context.Background(), tr, opts)
	if err != nil {
		t.Fatalf("connect (%q): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// answering connects a client (version "" is the modern era) that answers
// every request a server makes: elicitations accepted with name (the
// messages shown are recorded), sampling with model, roots with root.
func (f *fixture) answering(t *testing.T, version, name, model, root string) (*mcp.ClientSession, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	c := mcp.NewClient(&mcp.Implementation{Name: "answering-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: model}}, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: root})
	return f.connectWith(t, c, version), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

func TestBothErasThroughTheGateway(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	for _, era := range []struct{ name, version, want string }{
		{"modern", "", "2026-07-28"},
		{"legacy", "2025-11-25", "2025-11-25"},
		{"legacy-2025-06-18", "2025-06-18", "2025-06-18"},
	} {
		t.Run(era.name, func(t *testing.T) {
			cs, progress := f.connect(t, era.version)
			ctx := context.Background()
			if got := cs.InitializeResult().ProtocolVersion; got != era.want {
				t.Errorf("negotiated %s, want %s", got, era.want)
			}
			if info := cs.InitializeResult().ServerInfo; info == nil || info.Name != "switchboard" {
				t.Errorf("serverInfo = %+v", info)
			}
			// Every tool of both upstreams and the five capability
			// tools, paged three at a time.
			var names []string
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, tool.Name)
			}
			if len(names) != 27 || !contains(names, "s__echo") || !contains(names, "web__stubborn") || !contains(names, host.ReadResourceTool) {
				t.Errorf("tools = %v", names)
			}
			for _, name := range []string{"s__echo", "web__echo"} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "hi " + name}})
				if err != nil || res.IsError || text(t, res) != "hi "+name {
					t.Errorf("%s: %v, %v", name, res, err)
				}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s__fail", Arguments: map[string]any{}})
			if err != nil || !res.IsError || !strings.Contains(text(t, res), "on purpose") {
				t.Errorf("fail: %+v, %v; want an isError result", res, err)
			}
			// Progress is forwarded to the request that asked for it.
			for _, name := range []string{"s__slow", "web__slow"} {
				params := &mcp.CallToolParams{Name: name, Arguments: map[string]any{"steps": 3, "delay_ms": 5}}
				tok := era.name + name
				params.SetProgressToken(tok)
				if _, err := cs.CallTool(ctx, params); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				ok := proc.Eventually(5*time.Second, func() bool { return len(progress.get(tok)) == 3 })
				if !ok {
					t.Errorf("%s: progress %v, want 3 reports", name, progress.get(tok))
				}
			}
			// Unknown names are JSON-RPC invalid params, never code 0.
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "s__nope", Arguments: map[string]any{}})
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("unknown tool: %v, want -32602", err)
			}
			// Resources keep their URIs; two servers offer test://static and
			// the first in server-name order ("s") serves it.
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static"})
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "static text" {
				t.Errorf("read static: %+v, %v", rr, err)
			}
			rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://items/7"})
			if err != nil || rr.Contents[0].Text != "item 7" {
				t.Errorf("read template instance: %+v, %v", rr, err)
			}
			pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "web__greet", Arguments: map[string]string{"name": "Ada"}})
			if err != nil || len(pr.Messages) != 1 {
				t.Fatalf("prompt: %+v, %v", pr, err)
			}
			if tc, _ := pr.Messages[0].Content.(*mcp.TextContent); tc == nil || tc.Text != "Hello, Ada" {
				t.Errorf("prompt message = %+v", pr.Messages[0].Content)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestCancellationReachesUpstream: a client cancelling a call cancels the
// upstream handler. The call is cancelled once its first progress shows
// the upstream is running it, and would otherwise take ten minutes.
func TestCancellationReachesUpstream(t *testing.T) {
	t.Parallel()
	// "far" has ten minutes for a call, so that only the cancellation,
	// not the call timeout, can end the slow call.
	far := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testkit.NewServer() },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}))
	t.Cleanup(far.Close)
	f := newFixture(t, map[string]any{"far": map[string]any{"url": far.URL, "trust": "trusted", "callTimeoutMs": 600000}})
	for _, version := range []string{"", "2025-11-25"} {
		cs, progress := f.connect(t, version)
		before := testkit.SlowCancelled.Load()
		ctx, cancel := context.WithCancel(context.Background())
		params := &mcp.CallToolParams{Name: "far__slow", Arguments: map[string]any{"steps": 6000, "delay_ms": 100}}
		tok := "cancel" + version
		params.SetProgressToken(tok)
		called := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, params)
			called <- err
		}()
		if !proc.Eventually(time.Minute, func() bool { return len(progress.get(tok)) > 0 || len(called) > 0 }) {
			cancel()
			t.Fatalf("era %q: no progress from the slow call within a minute", version)
		}
		if len(called) > 0 {
			cancel()
			t.Fatalf("era %q: the slow call ended before any progress: %v", version, <-called)
		}
		cancel()
		select {
		case err := <-called:
			if err == nil {
				t.Fatalf("era %q: cancelled call succeeded", version)
			}
		case <-time.After(time.Minute):
			t.Fatalf("era %q: the cancelled call had not returned a minute later", version)
		}
		if !proc.Eventually(time.Minute, func() bool { return testkit.SlowCancelled.Load() > before }) {
			t.Errorf("era %q: the upstream handler never saw the cancellation", version)
		}
	}
}

// TestUpstreamFailureIsAToolResult: a call whose upstream breaks is a tool
// result with isError naming the server and the stable code in _meta.
func TestUpstreamFailureIsAToolResult(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	f := newFixture(t, map[string]any{"c": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer)}})
	cs, _ := f.connect(t, "")
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "c__crash", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(text(t, res), `server "c"`) {
		t.Fatalf("crash: %+v, %v", res, err)
	}
	if code := errorCode(res); code != "unknown_outcome" {
		t.Errorf("crash: code %q, want unknown_outcome", code)
	}
	// The next call reconnects (the crash is not retried; this is a new
	// call).
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "c__echo", Arguments: map[string]any{"text": "x"}})
	if err != nil || res.IsError || text(t, res) != "x" {
		t.Errorf("after the crash: %+v, %v; want the next call to reconnect", res, err)
	}
	// The other servers are untouched.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "s__echo", Arguments: map[string]any{"text": "fine"}})
	if err != nil || text(t, res) != "fine" {
		t.Errorf("s__echo: %v, %v", res, err)
	}
}

func errorCode(res *mcp.CallToolResult) string {
	m, _ := res.Meta[gateway.ErrorMetaKey].(map[string]any)
	code, _ := m["code"].(string)
	return code
}

func TestFrontDoor(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	resp, err := http.Post(f.url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	resp, err = http.Get(strings.TrimSuffix(f.url, "/mcp") + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("healthz: %d", resp.StatusCode)
	}
}

// TestInMemoryGateway serves the gateway to an in-memory client, the way
// `serve --stdio` does over real pipes (go-sdk's stdio transport is the same
// connection type).
func TestInMemoryGateway(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()
	cs := inMemory(t, gateway.New(f.host, nil), nil, "")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "web__echo", Arguments: map[string]any{"text": "mem"}})
	if err != nil || text(t, res) != "mem" {
		t.Errorf("echo: %v, %v", res, err)
	}
	if !strings.Contains(cs.InitializeResult().Instructions, `Server "s"`) {
		t.Errorf("instructions do not name the servers: %q", cs.InitializeResult().Instructions)
	}
}

// TestForwardingToLegacyClients: requests an upstream makes mid-call
// (elicitation, sampling, roots) reach the downstream client that made the
// call, with the server named in the elicitation, and the answers go back:
// from a legacy stdio upstream (server-to-client requests) and from
// 2026-07-28 stdio and HTTP upstreams (input-required results).
func TestForwardingToLegacyClients(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]any{"sm": modernStdio(t)})
	upstreamVersions(t, f.host, map[string]string{"s": "2025-11-25", "sm": "2026-07-28", "web": "2026-07-28"})
	cs, asked := f.answering(t, "2025-11-25", "Ada", "Paris", "file:///work")
	ctx := context.Background()
	for _, server := range []string{"s", "sm", "web"} {
		for tool, want := range map[string]string{"ask": "accept: Ada", "sample": "model said: Paris", "roots": "roots: file:///work"} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: server + "__" + tool, Arguments: map[string]any{}})
			if err != nil || res.IsError || text(t, res) != want {
				t.Errorf("%s__%s: %q (isError %v), %v; want %q", server, tool, text(t, res), res != nil && res.IsError, err, want)
			}
		}
	}
	if shown := asked(); len(shown) != 3 || !strings.Contains(shown[0], `"s"`) && !strings.Contains(shown[0], `"sm"`) && !strings.Contains(shown[0], `"web"`) {
		t.Errorf("elicitations shown: %q; each must name the server that asked", shown)
	}
}

// TestInputRequiredForModernClients: a 2026-07-28 client is asked through
// an input-required result of the gateway's own, whose requestState the
// gateway signs: the upstream's questions reach the client (naming the
// server), the answers reach the upstream, and a tampered state is refused.
func TestInputRequiredForModernClients(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]any{"sm": modernStdio(t)})
	upstreamVersions(t, f.host, map[string]string{"sm": "2026-07-28", "web": "2026-07-28"})
	cs, asked := f.answering(t, "", "Ada", "Paris", "file:///modern")
	ctx := context.Background()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	for _, server := range []string{"sm", "web"} {
		for tool, want := range map[string]string{"ask": "accept: Ada", "sample": "model said: Paris", "roots": "roots: file:///modern"} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: server + "__" + tool, Arguments: map[string]any{}})
			if err != nil || res.IsError || text(t, res) != want {
				t.Errorf("%s__%s: %q, %v; want %q", server, tool, text(t, res), err, want)
			}
		}
	}
	if shown := asked(); len(shown) != 2 || !strings.HasPrefix(shown[0], "[MCP server ") {
		t.Errorf("elicitations shown: %q; each must name the server that asked", shown)
	}
	// A forged retry: go-sdk's client sends what it is given.
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sm__ask", Arguments: map[string]any{},
		InputResponses: mcp.InputResponseMap{"name": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Eve"}}},
		RequestState:   "sb1.forged.state"})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("tampered requestState: %v, want -32602", err)
	}
}

// TestListChangedReachesClients: an upstream that adds a tool announces it;
// the host re-lists, the gateway reconciles, and clients of both eras are
// told and can call the new tool.
func TestListChangedReachesClients(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-11-25", ""} {
		f := newFixture(t, nil)
		changed := make(chan struct{}, 8)
		c := mcp.NewClient(&mcp.Implementation{Name: "watcher", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		})
		ctx := context.Background()
		cs := f.connectWith(t, c, version)
		server := "s" // the HTTP upstream makes a server per request: nothing to grow
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: server + "__grow", Arguments: map[string]any{}}); err != nil {
			t.Fatalf("grow: %v", err)
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("era %q: no tools/list_changed reached the client", version)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: server + "__grown", Arguments: map[string]any{"text": "hi"}})
		if err != nil || text(t, res) != "grown: hi" {
			t.Errorf("era %q: new tool: %v, %v", version, res, err)
		}
		cs.Close()
	}
}

// TestParkingForModernClients: a legacy upstream (stdio, and Streamable
// HTTP with sessions) asks
// mid-call with a server-to-client request; a 2026-07-28 client, which has
// none, gets an input-required result naming a parked call, answers it on
// retry, and the upstream receives the answer and finishes. A retry with a
// forged requestState is refused.
func TestParkingForModernClients(t *testing.T) {
	t.Parallel()
	old := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testkit.NewServer() }, nil))
	t.Cleanup(old.Close)
	f := newFixture(t, map[string]any{"old": map[string]any{"url": old.URL, "trust": "trusted"}})
	upstreamVersions(t, f.host, map[string]string{"old": "2025-11-25", "s": "2025-11-25"})
	cs, asked := f.answering(t, "", "Grace", "Rome", "file:///parked")
	ctx := context.Background()
	for _, server := range []string{"old", "s"} {
		for tool, want := range map[string]string{"ask": "accept: Grace", "sample": "model said: Rome", "roots": "roots: file:///parked"} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: server + "__" + tool, Arguments: map[string]any{}})
			if err != nil || res.IsError || text(t, res) != want {
				t.Errorf("%s__%s: %q, %v; want %q", server, tool, text(t, res), err, want)
			}
		}
		// The upstream and the gateway are free for the next call.
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: server + "__echo", Arguments: map[string]any{"text": "still fine"}})
		if err != nil || text(t, res) != "still fine" {
			t.Errorf("%s: echo after parking: %v, %v", server, res, err)
		}
	}
	if shown := asked(); len(shown) != 2 || !strings.Contains(shown[0], `"old"`) || !strings.Contains(shown[1], `"s"`) {
		t.Errorf("elicitations shown: %q; each must name its server", shown)
	}
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s__ask", Arguments: map[string]any{},
		InputResponses: mcp.InputResponseMap{"name": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Eve"}}},
		RequestState:   "sb1.forged.state"})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("tampered requestState on a parked call: %v, want -32602", err)
	}
}

// TestSeveralQuestionsAtOnce: an upstream asks three questions in one
// round (a legacy stdio upstream sends three server-to-client requests at
// once). Every client gets them all and the upstream its answers: a legacy
// client as requests, a 2026-07-28 client as parked questions, one
// input-required result after another; and likewise from a 2026-07-28
// upstream.
func TestSeveralQuestionsAtOnce(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	survey := func(pin string) map[string]any {
		s := map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeSurvey), "trust": "trusted"}
		if pin != "" {
			s["protocolVersion"] = pin
		}
		return s
	}
	f := newFixture(t, map[string]any{"old": survey("2025-11-25"), "new": survey("2026-07-28")})
	upstreamVersions(t, f.host, map[string]string{"old": "2025-11-25", "new": "2026-07-28"})
	for _, client := range []string{"2025-11-25", ""} {
		cs, asked := f.answering(t, client, "Ada", "Paris", "file:///survey")
		for _, server := range []string{"old", "new"} {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: server + "__survey", Arguments: map[string]any{}})
			if want := "Ada / Paris / file:///survey"; err != nil || res.IsError || text(t, res) != want {
				t.Errorf("client %q, %s__survey: %q, %v; want %q", client, server, text(t, res), err, want)
			}
		}
		if shown := asked(); len(shown) != 2 {
			t.Errorf("client %q: elicitations shown %q, want one per upstream", client, shown)
		}
	}
}

// TestUnreachableUpstreamIsAToolResult: a known server that can no longer
// be reached answers with an isError result naming it, so the model can
// adapt; the other servers work.
func TestUnreachableUpstreamIsAToolResult(t *testing.T) {
	t.Parallel()
	gone := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testkit.NewServer() },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	f := newFixture(t, map[string]any{"gone": map[string]any{"url": gone.URL, "trust": "trusted", "startupAttempts": 1}})
	// Unreachable from now on: no listener, no connections. (Close would
	// wait for connections the client keeps reopening.)
	gone.Listener.Close()
	gone.CloseClientConnections()
	cs, _ := f.connect(t, "")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gone__echo", Arguments: map[string]any{"text": "x"}})
	if err != nil || !res.IsError || !strings.Contains(text(t, res), `server "gone"`) {
		t.Fatalf("call to the unreachable server: %+v, %v", res, err)
	}
	t.Logf("code %s: %s", errorCode(res), text(t, res))
	if code := errorCode(res); code != "unavailable" {
		t.Errorf("code %q, want unavailable", code)
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "s__echo", Arguments: map[string]any{"text": "fine"}}); err != nil || text(t, res) != "fine" {
		t.Errorf("s__echo: %v, %v", res, err)
	}
}
