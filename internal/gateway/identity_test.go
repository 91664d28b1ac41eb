package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/demo"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/jwtauth"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testkit/issuer"
)

// demoUpstream serves the demo server over Streamable HTTP on 127.0.0.1
// until the test ends, and returns its endpoint.
func demoUpstream(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- demo.ServeHTTP(ctx, "127.0.0.1:0", "test", func(a net.Addr) { addr <- a }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("demo server: %v", err)
		}
	})
	select {
	case a := <-addr:
		return "http://" + a.String() + "/mcp"
	case err := <-done:
		t.Fatalf("demo server: %v", err)
	}
	return ""
}

// authGateway is a gateway over the demo server, served over HTTP with
// AuthOptions.
type authGateway struct {
	base string // http://127.0.0.1:PORT
	host *host.Host
	g    *gateway.Gateway
	demo string // the demo server's endpoint
	env  map[string]string
}

// reload reloads the host with top, as `serve` does on a change of the
// configuration file, and syncs the gateway.
func (a *authGateway) reload(t *testing.T, top map[string]any) {
	t.Helper()
	doc := map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"url": a.demo, "trust": "trusted"}}}
	for k, v := range top {
		doc[k] = v
	}
	if err := a.host.Reload(context.Background(), parseDoc(t, doc, a.env)); err != nil {
		t.Fatal(err)
	}
	a.g.Sync()
}

// newAuthGateway serves the configuration top (with the demo server as
// "demo") behind auth, built once the address is known. env holds the
// clients' token variables.
func newAuthGateway(t *testing.T, top map[string]any, env map[string]string, st store.Store, auth func(base string) *gateway.AuthOptions) *authGateway {
	t.Helper()
	return newAuthGatewayWith(t, top, env, st, gateway.HTTPOptions{}, auth)
}

// newAuthGatewayFront is newAuthGateway with front door options.
func newAuthGatewayFront(t *testing.T, top map[string]any, env map[string]string, front frontdoor.Options, auth func(base string) *gateway.AuthOptions) *authGateway {
	t.Helper()
	return newAuthGatewayWith(t, top, env, nil, gateway.HTTPOptions{Front: front}, auth)
}

// newAuthGatewayWith is newAuthGateway with HTTP options (their Auth
// built by auth).
func newAuthGatewayWith(t *testing.T, top map[string]any, env map[string]string, st store.Store, hopts gateway.HTTPOptions, auth func(base string) *gateway.AuthOptions) *authGateway {
	t.Helper()
	demoURL := demoUpstream(t)
	doc := map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"url": demoURL, "trust": "trusted"}}}
	for k, v := range top {
		doc[k] = v
	}
	cfg := parseDoc(t, doc, env)
	opts := host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond}
	if st != nil {
		hostlink.WithStore(&opts, st)
	}
	h, syncs := openHost(t, cfg, opts)
	if err := h.Ready(context.Background(), "demo"); err != nil {
		t.Fatal(err)
	}
	g := gateway.New(h, &gateway.Options{Version: "test"})
	syncs(g)
	g.Sync()
	ln := listen(t)
	base := "http://" + ln.Addr().String()
	hopts.Auth = auth(base)
	serveOn(t, g, ln, hopts)
	return &authGateway{base: base, host: h, g: g, demo: demoURL, env: env}
}

type withToken struct{ tok string }

func (b withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.tok != "" {
		r.Header.Set("Authorization", "Bearer "+b.tok)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connectAs connects a real go-sdk client to endpoint with tok.
func connectAs(t *testing.T, endpoint, tok string) (*mcp.ClientSession, error) {
	t.Helper()
	return connectAsVersion(t, endpoint, tok, "")
}

// connectAsVersion is connectAs in the era of version ("" is the modern
// one).
func connectAsVersion(t *testing.T, endpoint, tok, version string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: withToken{tok}}}
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(context.Background(), tr, opts)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// initialize POSTs an initialize request with tok and returns the answer.
func initialize(t *testing.T, endpoint, tok string) *http.Response {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

const staticToken = "static-token-0123456789abcdef"

// TestJWTProtectedGateway: the gateway as an OAuth resource server, with
// a real issuer's keys and a real go-sdk client over HTTP, refuses a
// wrong audience, an expired token and a missing scope, accepts a good
// token and the static token, and serves its metadata.
func TestJWTProtectedGateway(t *testing.T) {
	t.Parallel()
	is := issuer.New(t)
	var aud string
	gw := newAuthGateway(t, nil, nil, nil, func(base string) *gateway.AuthOptions {
		aud = base + "/mcp"
		v, err := jwtauth.New(context.Background(), jwtauth.Options{Issuer: is.URL, Audience: aud})
		if err != nil {
			t.Fatal(err)
		}
		return &gateway.AuthOptions{Token: staticToken, JWT: v, Issuer: is.URL, Resource: aud, Scopes: []string{"mcp:tools"}}
	})
	endpoint := gw.base + "/mcp"
	metaURL := gw.base + "/.well-known/oauth-protected-resource/mcp"
	good := issuer.Token{Audience: []string{aud}, Scope: "mcp:tools other"}
	tests := []struct {
		name      string
		tok       string
		status    int
		challenge []string // in WWW-Authenticate
	}{
		{"good RS256", is.Mint(t, good), http.StatusOK, nil},
		{"good ES256", is.Mint(t, issuer.Token{Audience: []string{aud}, Scope: "mcp:tools", KeyID: issuer.ECKeyID}), http.StatusOK, nil},
		{"static token", staticToken, http.StatusOK, nil},
		{"no token", "", http.StatusUnauthorized, []string{`resource_metadata="` + metaURL + `"`}},
		{"wrong audience", is.Mint(t, issuer.Token{Audience: []string{"http://127.0.0.1:1/mcp"}, Scope: "mcp:tools"}), http.StatusUnauthorized,
			[]string{`error="invalid_token"`, `resource_metadata="` + metaURL + `"`}},
		{"expired", is.Mint(t, issuer.Token{Audience: []string{aud}, Scope: "mcp:tools", TTL: -time.Hour}), http.StatusUnauthorized,
			[]string{`error="invalid_token"`}},
		{"missing scope", is.Mint(t, issuer.Token{Audience: []string{aud}, Scope: "other"}), http.StatusForbidden,
			[]string{`error="insufficient_scope"`, `scope="mcp:tools"`}},
		{"foreign key", is.Mint(t, issuer.Token{Audience: []string{aud}, Scope: "mcp:tools", Foreign: true}), http.StatusUnauthorized,
			[]string{`error="invalid_token"`}},
		{"wrong static token", "static-token-0123456789abcdeX", http.StatusUnauthorized, []string{`error="invalid_token"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := initialize(t, endpoint, tt.tok)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			got := resp.Header.Get("WWW-Authenticate")
			for _, want := range tt.challenge {
				if !strings.Contains(got, want) {
					t.Errorf("WWW-Authenticate %q lacks %s", got, want)
				}
			}
			cs, err := connectAs(t, endpoint, tt.tok)
			if tt.status != http.StatusOK {
				if err == nil {
					t.Fatal("a go-sdk client connected with a refused token")
				}
				return
			}
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "hi"}})
			if err != nil || res.IsError {
				t.Fatalf("echo: %v %+v", err, res)
			}
		})
	}

	resp, err := http.Get(metaURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&meta); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("metadata: %d %v", resp.StatusCode, err)
	}
	if meta.Resource != aud || !slices.Equal(meta.AuthorizationServers, []string{is.URL}) || !slices.Equal(meta.ScopesSupported, []string{"mcp:tools"}) {
		t.Fatalf("metadata = %+v", meta)
	}
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		r, err := http.Get(gw.base + p)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", p, r.StatusCode)
		}
	}
	if r, err := http.Get(gw.base + "/.well-known/other"); err != nil || r.StatusCode != http.StatusNotFound {
		t.Errorf("GET /.well-known/other: %v %v, want 404", r.StatusCode, err)
	}
}

// TestNamedClientsAndProfiles: two named clients, one by its static
// token and one by a JWT's subject, each limited to a profile, see
// different tool lists of the real demo server, cannot call a tool
// outside their profile (-32602, as an unknown tool), cannot use another
// profile, get audit rows of their own, and meet the policy rules written
// for them; a reload changes a profile.
func TestNamedClientsAndProfiles(t *testing.T) {
	t.Parallel()
	is := issuer.New(t)
	st := openStore(t)
	const aliceToken = "alice-token-0123456789abcdef"
	top := map[string]any{
		"profiles": map[string]any{
			"math": map[string]any{"servers": []string{"demo"}, "tools": []string{"demo:add"}},
			"talk": map[string]any{"servers": []string{"demo"}, "tools": []string{"demo:echo", "demo:weather"}},
		},
		"clients": map[string]any{
			"alice": map[string]any{"tokenEnv": "ALICE_TOKEN", "profiles": []string{"math"}},
			"bob":   map[string]any{"subject": "bob-sub", "profiles": []string{"talk"}},
		},
		"policy": map[string]any{"rules": []any{map[string]any{"deny": "demo:weather", "clients": []string{"bob"}, "profiles": []string{"talk"}}}},
	}
	env := map[string]string{"ALICE_TOKEN": aliceToken}
	var aud string
	gw := newAuthGateway(t, top, env, st, func(base string) *gateway.AuthOptions {
		aud = base + "/mcp"
		v, err := jwtauth.New(context.Background(), jwtauth.Options{Issuer: is.URL, Audience: aud})
		if err != nil {
			t.Fatal(err)
		}
		return &gateway.AuthOptions{JWT: v, Issuer: is.URL, Resource: aud}
	})
	bobToken := is.Mint(t, issuer.Token{Subject: "bob-sub", Audience: []string{aud}})

	alice, err := connectAs(t, gw.base+"/mcp/math", aliceToken)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := connectAs(t, gw.base+"/mcp/talk", bobToken)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, alice); !slices.Equal(got, []string{"demo__add"}) {
		t.Errorf("alice sees %v, want [demo__add]", got)
	}
	if got := toolNames(t, bob); !slices.Equal(got, []string{"demo__echo", "demo__weather"}) {
		t.Errorf("bob sees %v, want [demo__echo demo__weather]", got)
	}

	ctx := context.Background()
	if res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "demo__add", Arguments: map[string]any{"a": 2, "b": 3}}); err != nil || res.IsError {
		t.Fatalf("alice add: %v %+v", err, res)
	}
	if res, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "hi"}}); err != nil || res.IsError {
		t.Fatalf("bob echo: %v %+v", err, res)
	}
	// Outside the profile: -32602, as an unknown tool.
	_, err = alice.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "hi"}})
	if rpc := (*jsonrpc.Error)(nil); !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("alice echo (outside her profile): %v, want -32602", err)
	}
	// The rule written for bob in talk.
	res, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "demo__weather", Arguments: map[string]any{"city": "Paris"}})
	if err != nil || !res.IsError || !strings.Contains(text(t, res), "policy_blocked") {
		t.Fatalf("bob weather: %v %+v, want a policy_blocked result", err, res)
	}

	// Profiles the clients may not use, and the whole aggregate.
	for _, c := range []struct{ path, tok string }{{"/mcp/talk", aliceToken}, {"/mcp", aliceToken}, {"/mcp/math", bobToken}} {
		if resp := initialize(t, gw.base+c.path, c.tok); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", c.path, resp.StatusCode)
		}
	}
	if resp := initialize(t, gw.base+"/mcp/nope", aliceToken); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown profile: status %d, want 404", resp.StatusCode)
	}

	// Separate audit rows, by name and profile.
	want := map[string]string{"alice demo:add ok": "math", "bob demo:echo ok": "talk", "bob demo:weather error": "talk"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		calls, err := st.Calls(ctx, store.CallFilter{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, c := range calls {
			got[c.Caller+" "+c.Tool+" "+c.Outcome] = c.Profile
		}
		missing := false
		for k, p := range want {
			if got[k] != p {
				missing = true
			}
		}
		if !missing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit rows %v, want %v among them", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range []string{"alice", "bob"} {
		calls, err := st.Calls(ctx, store.CallFilter{Caller: c})
		if err != nil || len(calls) == 0 {
			t.Fatalf("calls of %s: %v %v", c, calls, err)
		}
		// Beside who the caller is, what its client called itself.
		for _, call := range calls {
			if call.ClientName != "test-client" {
				t.Errorf("%s's call of %s: client name %q, want the clientInfo.name %q", c, call.Tool, call.ClientName, "test-client")
			}
		}
	}

	// A reload that widens math reaches alice's list.
	top["profiles"].(map[string]any)["math"] = map[string]any{"servers": []string{"demo"}, "tools": []string{"demo:add", "demo:echo"}}
	gw.reload(t, top)
	if got := toolNames(t, alice); !slices.Equal(got, []string{"demo__add", "demo__echo"}) {
		t.Errorf("after the reload alice sees %v, want [demo__add demo__echo]", got)
	}
	if res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "hi"}}); err != nil || res.IsError {
		t.Fatalf("alice echo after the reload: %v %+v", err, res)
	}
}

// TestProfileHidesOtherServers: a profile shows the tools, prompts and
// resources of its servers only, over HTTP at /mcp/<name> and on a
// gateway serving one profile (serve --stdio --profile), and a resource
// of a server outside it cannot be read.
func TestProfileHidesOtherServers(t *testing.T) {
	t.Parallel()
	const rootToken = "root-token-0123456789abcdef"
	top := map[string]any{
		"profiles": map[string]any{
			"onlya": map[string]any{"servers": []string{"demo"}},
			"none":  map[string]any{"servers": []string{}},
		},
		"clients": map[string]any{"root": map[string]any{"tokenEnv": "ROOT_TOKEN"}},
	}
	gw := newAuthGateway(t, top, map[string]string{"ROOT_TOKEN": rootToken}, nil, func(string) *gateway.AuthOptions {
		return &gateway.AuthOptions{}
	})
	// A second server beside "demo": the demo server again, as "b".
	doc := map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"url": gw.demo, "trust": "trusted"},
		"b":    map[string]any{"url": demoUpstream(t), "trust": "trusted"},
	}}
	for k, v := range top {
		doc[k] = v
	}
	if err := gw.host.Reload(context.Background(), parseDoc(t, doc, gw.env)); err != nil {
		t.Fatal(err)
	}
	if err := gw.host.Ready(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	gw.g.Sync()

	ctx := context.Background()
	stdio := inMemory(t, gateway.New(gw.host, &gateway.Options{Version: "test", Profile: "onlya"}), nil, "")

	whole, err := connectAs(t, gw.base+"/mcp", rootToken)
	if err != nil {
		t.Fatal(err)
	}
	onlya, err := connectAs(t, gw.base+"/mcp/onlya", rootToken)
	if err != nil {
		t.Fatal(err)
	}
	none, err := connectAs(t, gw.base+"/mcp/none", rootToken)
	if err != nil {
		t.Fatal(err)
	}
	prefixes := func(cs *mcp.ClientSession) (tools, prompts map[string]bool, resources int) {
		tools, prompts = map[string]bool{}, map[string]bool{}
		for _, n := range toolNames(t, cs) {
			tools[strings.SplitN(n, "__", 2)[0]] = true
		}
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			prompts[strings.SplitN(p.Name, "__", 2)[0]] = true
		}
		for _, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			resources++
		}
		return tools, prompts, resources
	}
	if tools, prompts, res := prefixes(whole); !tools["demo"] || !tools["b"] || !prompts["demo"] || !prompts["b"] || res == 0 {
		t.Fatalf("whole: tools %v prompts %v resources %d, want both servers", tools, prompts, res)
	}
	for name, cs := range map[string]*mcp.ClientSession{"onlya": onlya, "stdio --profile onlya": stdio} {
		if tools, prompts, res := prefixes(cs); tools["b"] || !tools["demo"] || prompts["b"] || !prompts["demo"] || res == 0 {
			t.Errorf("%s: tools %v prompts %v resources %d, want demo's only", name, tools, prompts, res)
		}
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "b__echo", Arguments: map[string]any{"text": "hi"}})
		if rpc := (*jsonrpc.Error)(nil); !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: b__echo: %v, want -32602", name, err)
		}
	}
	if tools, prompts, res := prefixes(none); len(tools) != 0 || len(prompts) != 0 || res != 0 {
		t.Errorf("none: tools %v prompts %v resources %d, want nothing", tools, prompts, res)
	}
	if _, err := none.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://readme"}); err == nil {
		t.Error("a profile without servers read a resource")
	}
	if _, err := whole.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://readme"}); err != nil {
		t.Errorf("whole: read: %v", err)
	}
	// Completions and subscriptions reach only what the profile holds.
	complete := &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "b__review"},
		Argument: mcp.CompleteParamsArgument{Name: "language", Value: "g"}}
	// (The demo server completes nothing: the whole aggregate passes the
	// request on, and b refuses it.)
	if _, err := onlya.Complete(ctx, complete); err == nil || !strings.Contains(err.Error(), `no prompt "b__review"`) {
		t.Errorf("onlya completed a prompt of b: %v", err)
	}
	if _, err := whole.Complete(ctx, complete); err == nil || strings.Contains(err.Error(), "no prompt") {
		t.Errorf("whole: complete: %v, want b's refusal", err)
	}
	legacyNone, err := connectAsVersion(t, gw.base+"/mcp/none", rootToken, "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	if err := legacyNone.Subscribe(ctx, &mcp.SubscribeParams{URI: "demo://readme"}); err == nil {
		t.Error("a profile without servers subscribed to a resource")
	}
}

// TestQuotaPerNamedClient: the call quota counts a named client's calls
// across its sessions, and each client apart.
func TestQuotaPerNamedClient(t *testing.T) {
	t.Parallel()
	const aliceToken, bobToken = "alice-token-0123456789abcdef", "bob-token-0123456789abcdefgh"
	top := map[string]any{
		"clients": map[string]any{
			"alice": map[string]any{"tokenEnv": "ALICE_TOKEN"},
			"bob":   map[string]any{"token": "${BOB_TOKEN}"},
		},
		"policy": map[string]any{"quota": map[string]any{"calls": 2, "perMs": 60000}},
	}
	gw := newAuthGateway(t, top, map[string]string{"ALICE_TOKEN": aliceToken, "BOB_TOKEN": bobToken}, nil, func(string) *gateway.AuthOptions {
		return &gateway.AuthOptions{}
	})
	ctx := context.Background()
	echo := func(cs *mcp.ClientSession) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	var alice [2]*mcp.ClientSession
	for i := range alice {
		cs, err := connectAsVersion(t, gw.base+"/mcp", aliceToken, "2025-11-25")
		if err != nil {
			t.Fatal(err)
		}
		alice[i] = cs
	}
	if echo(alice[0]).IsError || echo(alice[1]).IsError {
		t.Fatal("alice's first two calls refused")
	}
	if res := echo(alice[0]); !res.IsError || !strings.Contains(text(t, res), "rate_limited") {
		t.Fatalf("alice's third call, from her first session: %+v, want rate_limited", res)
	}
	bob, err := connectAs(t, gw.base+"/mcp", bobToken)
	if err != nil {
		t.Fatal(err)
	}
	if res := echo(bob); res.IsError {
		t.Fatalf("bob's first call: %s", text(t, res))
	}
}

// TestMetricsForTheOperator: with named clients, /metrics answers the
// static token and a client limited to no profile, and refuses a client
// kept to a profile and a JWT that names no client; the control API and
// the status page's login take the static token alone.
func TestMetricsForTheOperator(t *testing.T) {
	t.Parallel()
	is := issuer.New(t)
	const opsToken, ciToken = "ops-token-0123456789abcdef", "ci-token-0123456789abcdefgh"
	top := map[string]any{
		"profiles": map[string]any{"p": map[string]any{}},
		"clients": map[string]any{
			"ops": map[string]any{"tokenEnv": "OPS"},
			"ci":  map[string]any{"tokenEnv": "CI", "profiles": []string{"p"}},
		},
	}
	var aud string
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "metrics\n") })
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{}") })
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if frontdoor.CheckToken(r.Context(), r.FormValue("token")) {
			io.WriteString(w, "in")
			return
		}
		io.WriteString(w, "out")
	})
	gw := newAuthGatewayFront(t, top, map[string]string{"OPS": opsToken, "CI": ciToken}, frontdoor.Options{Metrics: metrics, API: api, UI: page},
		func(base string) *gateway.AuthOptions {
			aud = base + "/mcp"
			v, err := jwtauth.New(context.Background(), jwtauth.Options{Issuer: is.URL, Audience: aud})
			if err != nil {
				t.Fatal(err)
			}
			return &gateway.AuthOptions{Token: staticToken, JWT: v, Issuer: is.URL}
		})
	for _, c := range []struct {
		name, tok string
		want      int // /metrics
		wantAPI   int // /api/: the static token's alone
	}{
		{"static token", staticToken, http.StatusOK, http.StatusOK},
		{"unlimited client", opsToken, http.StatusOK, http.StatusForbidden},
		{"client kept to a profile", ciToken, http.StatusForbidden, http.StatusForbidden},
		{"JWT of no client", is.Mint(t, issuer.Token{Audience: []string{aud}}), http.StatusForbidden, http.StatusForbidden},
		{"no token", "", http.StatusUnauthorized, http.StatusUnauthorized},
	} {
		for path, want := range map[string]int{"/metrics": c.want, "/api/status": c.wantAPI} {
			req, _ := http.NewRequest(http.MethodGet, gw.base+path, nil)
			if c.tok != "" {
				req.Header.Set("Authorization", "Bearer "+c.tok)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("%s: %s %d, want %d", c.name, path, resp.StatusCode, want)
			}
		}
	}
	for _, c := range []struct {
		name, tok, want string
	}{
		{"static token", staticToken, "in"},
		{"unlimited client", opsToken, "out"},
		{"empty", "", "out"},
	} {
		resp, err := http.PostForm(gw.base+"/ui/login", url.Values{"token": {c.tok}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != c.want {
			t.Errorf("page login with the %s: %q, want %q", c.name, b, c.want)
		}
	}
}
