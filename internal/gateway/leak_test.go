package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
)

// marker is in every name, description, URI, instruction and error of
// the server a profile leaves out; it must reach no client of the
// profile. It is matched without regard to case.
const marker = "leakmark"

// twin names what a marked request would name if nothing had the marker:
// the same request with the marker replaced by a word of the same length
// that nothing has.
var twin = strings.NewReplacer("leakmark", "nosuchxx", "LEAKMARK", "NOSUCHXX")

// leakUpstream serves over Streamable HTTP, until the test ends, an MCP
// server named after what it is: "alpha" has clean entries; a marked one
// has the marker everywhere (only tools, with toolsOnly). It returns the
// endpoint and the server, to change its lists later.
func leakUpstream(t *testing.T, marked, toolsOnly bool) (string, *mcp.Server) {
	t.Helper()
	word, upper := "alpha", "Alpha"
	if marked {
		word, upper = marker, strings.ToUpper(marker)
	}
	opts := &mcp.ServerOptions{}
	if !toolsOnly {
		opts.Instructions = upper + " answers questions about " + word + "."
		opts.CompletionHandler = func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{word + "-value"}}}, nil
		}
		opts.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
		opts.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: word + "-server", Version: "1"}, opts)
	schema := json.RawMessage(`{"type":"object","properties":{"` + word + `_arg":{"type":"string","description":"The ` + upper + ` argument."}}}`)
	toolNames := []string{"a_get_x", "a_put_y"}
	if marked {
		toolNames = []string{"get_" + word, "put_" + word}
	}
	for _, name := range toolNames {
		srv.AddTool(&mcp.Tool{Name: name, Title: upper + " " + name, Description: "Gets things from " + upper + ".", InputSchema: schema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if marked {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: upper + " failed"}}}, nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
	}
	if !toolsOnly {
		read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: upper + " contents"}}}, nil
		}
		srv.AddResource(&mcp.Resource{URI: word + "://" + word + "/readme", Name: word + "_readme", Description: "The " + upper + " readme."}, read)
		srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: word + "://" + word + "/{id}", Name: word + "_item", Description: "An " + upper + " item."}, read)
		srv.AddPrompt(&mcp.Prompt{Name: word + "_prompt", Description: "The " + upper + " prompt.", Arguments: []*mcp.PromptArgument{{Name: word + "_lang", Description: upper}}},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Description: upper, Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: upper}}}}, nil
			})
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL, srv
}

// wire records every message a client session reads, and the marked
// words of each request it sent (which its response may echo).
type wire struct {
	mu   sync.Mutex
	msgs []jsonrpc.Message
	sent map[string][]string // by request ID
	ids  []string            // of the requests sent since the last take
}

// echoes returns the marked strings of a request's params, and of each
// one that is an ID ("<server>:<rest>") its rest too, longest first.
func echoes(params json.RawMessage) []string {
	var v any
	json.Unmarshal(params, &v)
	var out []string
	var walk func(any)
	add := func(s string) {
		if strings.Contains(strings.ToLower(s), marker) {
			out = append(out, s)
			if _, rest, ok := strings.Cut(s, ":"); ok {
				out = append(out, rest)
			}
		}
	}
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			add(x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				add(k)
				walk(e)
			}
		}
	}
	walk(v)
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// take returns the messages read and the IDs of the requests sent since
// the last take.
func (w *wire) take() ([]jsonrpc.Message, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	msgs, ids := w.msgs, w.ids
	w.msgs, w.ids = nil, nil
	return msgs, ids
}

type captured struct {
	mcp.Transport
	w *wire
}

func (c captured) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := c.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &capturedConn{Connection: conn, w: c.w}, nil
}

type capturedConn struct {
	mcp.Connection
	w *wire
}

func (c *capturedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		c.w.mu.Lock()
		c.w.sent[fmt.Sprint(req.ID.Raw())] = echoes(req.Params)
		c.w.ids = append(c.w.ids, fmt.Sprint(req.ID.Raw()))
		c.w.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *capturedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.w.mu.Lock()
		c.w.msgs = append(c.w.msgs, msg)
		c.w.mu.Unlock()
	}
	return msg, err
}

// leakClient is one client session of a profile and what it read.
type leakClient struct {
	name string
	cs   *mcp.ClientSession
	w    *wire
	// changed counts the list_changed notifications it was sent.
	changed chan string
}

// scan fails the test if a message read since the last scan holds the
// marker: a response once the marked words of its own request (which it
// may echo) are taken out, a notification or request as it is. It
// returns the responses read to the requests sent since the last scan,
// as read but for their IDs.
func (c *leakClient) scan(t *testing.T, what string) (responses string) {
	t.Helper()
	msgs, ids := c.w.take()
	for _, msg := range msgs {
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			t.Fatalf("%s: %s: encode: %v", c.name, what, err)
		}
		s := string(b)
		if res, ok := msg.(*jsonrpc.Response); ok {
			if slices.Contains(ids, fmt.Sprint(res.ID.Raw())) {
				responses += responseID.ReplaceAllString(s, "") + "\n"
			}
			c.w.mu.Lock()
			sent := c.w.sent[fmt.Sprint(res.ID.Raw())]
			c.w.mu.Unlock()
			for _, e := range sent {
				s = strings.ReplaceAll(s, e, "")
			}
		}
		if strings.Contains(strings.ToLower(s), marker) {
			t.Errorf("%s: %s: the marker reached the client: %s", c.name, what, b)
		}
	}
	return responses
}

// responseID matches a response's ID member.
var responseID = regexp.MustCompile(`"id":[0-9]+,?`)

// outcome is what a request came to, for comparison with its twin's.
func outcome(res any, err error) string {
	b, _ := json.Marshal(res)
	if err != nil {
		return string(b) + " error: " + err.Error()
	}
	return string(b)
}

// probe makes a request that names something marked and its twin, which
// names nothing; both must come to the same answer, byte for byte but
// for the name.
func (c *leakClient) probe(t *testing.T, what string, do func(marked bool) string) {
	t.Helper()
	c.compare(t, what, do, true)
}

// compare is probe; without bytes only what the client made of the
// answers is compared (a 2026-07-28 subscription is answered on a stream
// of its own, whenever the gateway refuses it; its bytes are scanned
// when they come).
func (c *leakClient) compare(t *testing.T, what string, do func(marked bool) string, bytes bool) {
	t.Helper()
	c.scan(t, "before "+what)
	got := do(true)
	if r := c.scan(t, what); bytes {
		got += r
	}
	want := do(false)
	if r := c.scan(t, what+" (twin)"); bytes {
		want += r
	}
	if twin.Replace(got) != want {
		t.Errorf("%s: %s: answered otherwise than the same request for nothing:\n got %s\nwant %s", c.name, what, twin.Replace(got), want)
	}
}

// name returns s, or its twin when !marked.
func name(s string, marked bool) string {
	if marked {
		return s
	}
	return twin.Replace(s)
}

// TestNothingLeaksOutOfAView: a client of a profile learns nothing of
// what the profile leaves out, whatever it asks (server/discover and
// initialize, every list, tools/call by model-facing name, canonical ID
// and bare name, every built-in tool, resources/read, prompts/get,
// completion/complete, resources/subscribe) in either era, over HTTP and
// stdio, and whatever reaches it unasked (list_changed, resource
// updates): the marker of the left-out server's entries is in no byte it
// reads, and a left-out tool, prompt or resource answers exactly as one
// that does not exist. What the profile holds works, deferred tools by
// their exact names and through the profile's own tool_search.
func TestNothingLeaksOutOfAView(t *testing.T) {
	t.Parallel()
	profiles := map[string]any{
		"byservers": map[string]any{"servers": []string{"alpha"}},
		"byglob":    map[string]any{"servers": []string{"alpha"}, "tools": []string{"alpha:a_get_*"}},
		"exclude":   map[string]any{"exclude": []string{"gamma:*"}},
	}
	cases := []struct {
		profile string
		// out is the left-out server: "leakmark" (marked everywhere) or
		// "gamma" (its tools only, for a profile that excludes tools).
		out      string
		deferred bool
	}{
		{"byservers", marker, false},
		{"byservers", marker, true},
		{"byglob", marker, false},
		{"byglob", marker, true},
		{"exclude", "gamma", false},
		{"exclude", "gamma", true},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/deferTools=%v", tc.profile, tc.deferred), func(t *testing.T) {
			alphaURL, _ := leakUpstream(t, false, false)
			outURL, outSrv := leakUpstream(t, true, tc.out == "gamma")
			doc := map[string]any{
				"mcpServers": map[string]any{
					// Sessions of the legacy era, which carry the
					// upstreams' notifications.
					"alpha": map[string]any{"url": alphaURL, "trust": "trusted", "protocolVersion": "2025-11-25"},
					tc.out:  map[string]any{"url": outURL, "trust": "trusted", "protocolVersion": "2025-11-25"},
				},
				"profiles": profiles,
				"context":  map[string]any{"deferTools": tc.deferred},
			}
			cfg := parseDoc(t, doc, nil)
			var gws []*gateway.Gateway
			var gwMu sync.Mutex
			h, err := host.Open(context.Background(), cfg, &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, OnChange: func() {
				gwMu.Lock()
				defer gwMu.Unlock()
				for _, g := range gws {
					g.Sync()
				}
			}, OnResourceUpdated: func(server, uri string) {
				gwMu.Lock()
				defer gwMu.Unlock()
				for _, g := range gws {
					g.ResourceUpdated(server, uri)
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			ctx := context.Background()
			for _, s := range []string{"alpha", tc.out} {
				if err := h.Ready(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			whole := gateway.New(h, &gateway.Options{Version: "test"})
			stdio := gateway.New(h, &gateway.Options{Version: "test", Profile: tc.profile})
			gwMu.Lock()
			gws = append(gws, whole, stdio)
			gwMu.Unlock()
			whole.Sync()
			stdio.Sync()
			base := serveHTTP(t, whole, gateway.HTTPOptions{Front: frontdoor.Options{Token: token}})

			connect := func(label string, tr mcp.Transport, version string, scanned bool) *leakClient {
				t.Helper()
				c := &leakClient{name: label, w: &wire{sent: map[string][]string{}}, changed: make(chan string, 100)}
				notify := func(kind string) { c.changed <- kind }
				client := mcp.NewClient(&mcp.Implementation{Name: "leak-client", Version: "1"}, &mcp.ClientOptions{
					ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { notify("tools") },
					ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { notify("resources") },
					PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { notify("prompts") },
					ResourceUpdatedHandler:     func(context.Context, *mcp.ResourceUpdatedNotificationRequest) { notify("updated") },
				})
				var opts *mcp.ClientSessionOptions
				if version != "" {
					opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
				}
				cs, err := client.Connect(ctx, captured{Transport: tr, w: c.w}, opts)
				if err != nil {
					t.Fatalf("%s: connect: %v", label, err)
				}
				t.Cleanup(func() { cs.Close() })
				c.cs = cs
				if scanned {
					c.scan(t, "connect ("+cs.InitializeResult().ProtocolVersion+")")
					// The instructions name the built-ins the profile has.
					in := cs.InitializeResult().Instructions
					if capability := tc.profile == "exclude"; strings.Contains(in, "mcp_list_") != capability {
						t.Errorf("%s: instructions name the capability tools: %v, want %v:\n%s", label, !capability, capability, in)
					}
					if strings.Contains(in, host.ToolSearch) != tc.deferred {
						t.Errorf("%s: instructions name %s: %v, want %v:\n%s", label, host.ToolSearch, !tc.deferred, tc.deferred, in)
					}
				}
				return c
			}
			httpTransport := func(path string) mcp.Transport {
				return &mcp.StreamableClientTransport{Endpoint: base + path, HTTPClient: &http.Client{Transport: bearer{http.DefaultTransport}}}
			}
			stdioTransport := func(g *gateway.Gateway) mcp.Transport {
				ct, st := mcp.NewInMemoryTransports()
				ss, err := g.Server().Connect(ctx, st, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { ss.Close() })
				return ct
			}
			var clients []*leakClient
			for _, era := range []struct{ label, version string }{{"legacy", "2025-11-25"}, {"2026-07-28", ""}} {
				clients = append(clients,
					connect("http "+era.label, httpTransport("/mcp/"+tc.profile), era.version, true),
					connect("stdio "+era.label, stdioTransport(stdio), era.version, true))
			}
			// The operator, on the whole aggregate, subscribes to the
			// left-out server's resource, so that its updates reach the
			// gateway.
			operator := connect("operator", stdioTransport(whole), "2025-11-25", false)
			outRes := marker + "://" + marker + "/readme"
			if tc.out == marker {
				if err := operator.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: outRes}); err != nil {
					t.Fatalf("operator subscribe: %v", err)
				}
			}

			prefix := tc.out + "__"
			outTool := "get_" + marker
			for _, c := range clients {
				probeAll(t, c, tc.out, prefix, outTool, tc.deferred)
				if tc.profile == "byglob" {
					// alpha's tool outside the glob answers as one alpha
					// does not have.
					for _, n := range []string{"alpha__a_put_y", "alpha:a_put_y"} {
						res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: n, Arguments: map[string]any{}})
						got := outcome(res, err)
						res, err = c.cs.CallTool(ctx, &mcp.CallToolParams{Name: strings.Replace(n, "put", "zzz", 1), Arguments: map[string]any{}})
						if want := outcome(res, err); strings.Replace(got, "put", "zzz", 1) != want {
							t.Errorf("%s: %s outside the glob: %s, want as for a tool alpha does not have: %s", c.name, n, got, want)
						}
					}
					c.scan(t, "alpha's tools outside the glob")
				}
			}

			// Unasked: the left-out server's lists change and its
			// resource is updated. The operator hears of it; the
			// profile's clients learn nothing of it.
			outSrv.AddTool(&mcp.Tool{Name: "new_" + marker, Description: "New " + marker + " tool.", InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
			if tc.out == marker {
				if err := outSrv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: outRes}); err != nil {
					t.Fatal(err)
				}
			}
			// (A deferred tool changes no list.)
			want := map[string]bool{"tools": !tc.deferred, "updated": tc.out == marker}
			deadline := time.After(10 * time.Second)
			for want["tools"] || want["updated"] {
				select {
				case kind := <-operator.changed:
					want[kind] = false
				case <-deadline:
					t.Fatalf("the operator was not told of the changes: %v still awaited", want)
				}
			}
			if tools := toolNames(t, operator.cs); !slices.Contains(tools, prefix+"new_"+marker) && !tc.deferred {
				t.Errorf("operator: the new tool is not listed: %v", tools)
			}
			for _, c := range clients {
				// A request after the changes, so that what they sent is in.
				if err := c.cs.Ping(ctx, nil); err != nil {
					t.Fatalf("%s: ping: %v", c.name, err)
				}
				c.scan(t, "after the left-out server changed")
				toolNames(t, c.cs)
				c.scan(t, "tools/list after the left-out server changed")
				// Nothing the profile holds changed: nothing to tell, but
				// that its own tool_search listed what it found.
				for len(c.changed) > 0 {
					if kind := <-c.changed; kind != "tools" || !tc.deferred {
						t.Errorf("%s: told of a change of the left-out server (%s)", c.name, kind)
					}
				}
			}
		})
	}
}

// probeAll asks c everything it could ask about the left-out server out
// (model-facing names begin with prefix; outTool is a tool of its), and
// checks that what the profile holds works.
func probeAll(t *testing.T, c *leakClient, out, prefix, outTool string, deferred bool) {
	t.Helper()
	ctx := context.Background()
	cs := c.cs
	call := func(tool string, args any) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		return outcome(res, err)
	}

	// The lists.
	tools := toolNames(t, cs)
	c.scan(t, "tools/list")
	if deferred && !slices.Contains(tools, host.ToolSearch) {
		t.Errorf("%s: deferred tools, but no %s in %v", c.name, host.ToolSearch, tools)
	}
	if !deferred && !slices.Contains(tools, "alpha__a_get_x") {
		t.Errorf("%s: alpha__a_get_x is not listed: %v", c.name, tools)
	}
	for _, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Errorf("%s: resources/list: %v", c.name, err)
		}
	}
	c.scan(t, "resources/list")
	for _, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Errorf("%s: resources/templates/list: %v", c.name, err)
		}
	}
	c.scan(t, "resources/templates/list")
	for _, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Errorf("%s: prompts/list: %v", c.name, err)
		}
	}
	c.scan(t, "prompts/list")

	// What the profile holds is callable, deferred or not.
	if got := call("alpha__a_get_x", map[string]any{}); !strings.Contains(got, `"ok"`) {
		t.Errorf("%s: alpha__a_get_x: %s", c.name, got)
	}
	c.scan(t, "alpha__a_get_x")

	// The left-out tool by model-facing name, canonical ID and bare name.
	for _, n := range []string{prefix + outTool, out + ":" + outTool, outTool, prefix + "put_" + marker} {
		c.probe(t, "tools/call "+n, func(marked bool) string {
			return call(name(n, marked), map[string]any{marker + "_arg": "x"})
		})
	}

	// Every built-in, listed or not.
	c.probe(t, host.ToolSearch, func(bool) string {
		return call(host.ToolSearch, map[string]any{"query": "gets things", "k": 20})
	})
	c.probe(t, host.ToolSearch+" by parameter", func(bool) string {
		return call(host.ToolSearch, map[string]any{"query": "argument", "k": 20})
	})
	if deferred {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: host.ToolSearch, Arguments: map[string]any{"query": "gets things", "k": 20}})
		if err != nil || res.IsError || !strings.Contains(text(t, res), "alpha__a_get_x") {
			t.Errorf("%s: the profile's %s does not find its own tool: %v %v", c.name, host.ToolSearch, res, err)
		}
		c.scan(t, host.ToolSearch)
	}
	for _, b := range []string{host.ListResources, host.ListTemplates, host.ListPrompts} {
		c.probe(t, b, func(bool) string { return call(b, map[string]any{}) })
		c.probe(t, b+" of the left-out server", func(marked bool) string {
			return call(b, map[string]any{"server": name(out, marked)})
		})
	}
	resURI := marker + "://" + marker + "/readme"
	itemURI := marker + "://" + marker + "/42"
	for _, id := range []string{out + ":" + resURI, resURI, out + ":" + itemURI, itemURI} {
		c.probe(t, host.ReadResourceTool+" "+id, func(marked bool) string {
			return call(host.ReadResourceTool, map[string]any{"id": name(id, marked)})
		})
	}
	prompt := marker + "_prompt"
	for _, id := range []string{out + ":" + prompt, prefix + prompt} {
		c.probe(t, host.GetPromptTool+" "+id, func(marked bool) string {
			return call(host.GetPromptTool, map[string]any{"id": name(id, marked)})
		})
	}

	// Resources, prompts, completions and subscriptions.
	for _, uri := range []string{resURI, itemURI} {
		c.probe(t, "resources/read "+uri, func(marked bool) string {
			return outcome(cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: name(uri, marked)}))
		})
		c.compare(t, "resources/subscribe "+uri, func(marked bool) string {
			return outcome(nil, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: name(uri, marked)}))
		}, cs.InitializeResult().ProtocolVersion != "2026-07-28")
	}
	c.probe(t, "prompts/get", func(marked bool) string {
		return outcome(cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name(prefix+prompt, marked)}))
	})
	c.probe(t, "completion/complete of a prompt", func(marked bool) string {
		return outcome(cs.Complete(ctx, &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: name(prefix+prompt, marked)},
			Argument: mcp.CompleteParamsArgument{Name: name(marker+"_lang", marked), Value: "g"},
		}))
	})
	tmpl := marker + "://" + marker + "/{id}"
	c.probe(t, "completion/complete of a template", func(marked bool) string {
		return outcome(cs.Complete(ctx, &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: name(tmpl, marked)},
			Argument: mcp.CompleteParamsArgument{Name: "id", Value: "4"},
		}))
	})
}
