package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// text returns the concatenated text blocks of a result.
func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func rpcCode(err error) int64 {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Code
	}
	return 0
}

// TestTools checks every tool rule over real HTTP, in both eras.
func TestTools(t *testing.T) {
	url := serveHTTP(t, testServer(nil))
	tests := []struct {
		name       string
		tool       string
		args       any
		wantText   string
		structured any // JSON of structuredContent; nil: none
		isError    bool
		code       int64 // JSON-RPC error code; 0: none
	}{
		{"object result", "add_numbers", map[string]any{"a": 2, "b": 3}, `{"sum":5}`, map[string]any{"sum": 5.0}, false, 0},
		{"number wrapped", "count", map[string]any{"text": "four"}, `4`, map[string]any{"result": 4.0}, false, 0},
		{"list wrapped", "words", map[string]any{"text": "a b"}, `["a","b"]`, map[string]any{"result": []any{"a", "b"}}, false, 0},
		{"content field is structured", "doc", map[string]any{"text": "x<y"}, `{"content":"x<y"}`, map[string]any{"content": "x<y"}, false, 0},
		{"raw text", "echo", map[string]any{"text": "hi"}, "hi", nil, false, 0},
		{"plain error is tool error", "fail", map[string]any{"kind": ""}, "wrapped: plain failure", nil, true, 0},
		{"invalid arguments are tool error", "add_numbers", map[string]any{"a": "x"}, "", nil, true, 0},
		{"unknown argument is tool error", "add_numbers", map[string]any{"a": 1, "b": 2, "c": 3}, "", nil, true, 0},
		{"unauthorized", "fail", map[string]any{"kind": "unauthorized"}, "", nil, false, CodeUnauthorized},
		{"forbidden", "fail", map[string]any{"kind": "forbidden"}, "", nil, false, CodeForbidden},
		{"invalid params", "fail", map[string]any{"kind": "invalid"}, "", nil, false, jsonrpc.CodeInvalidParams},
		{"not found", "fail", map[string]any{"kind": "notfound"}, "", nil, false, jsonrpc.CodeInvalidParams},
		{"internal", "fail", map[string]any{"kind": "internal"}, "", nil, false, jsonrpc.CodeInternalError},
		{"panic", "fail", map[string]any{"kind": "panic"}, "", nil, false, jsonrpc.CodeInternalError},
		{"broken result schema", "liar", nil, "", nil, false, jsonrpc.CodeInternalError},
		{"unknown tool", "nope", nil, "", nil, false, jsonrpc.CodeInvalidParams},
	}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cs := connect(t, url, era.version, nil)
			if got := cs.InitializeResult().ProtocolVersion; got != era.want {
				t.Fatalf("negotiated %q, want %q", got, era.want)
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
					if tt.code != 0 {
						if got := rpcCode(err); got != tt.code {
							t.Fatalf("error %v (code %d), want code %d", err, got, tt.code)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if res.IsError != tt.isError {
						t.Fatalf("isError = %v, want %v (%s)", res.IsError, tt.isError, text(res))
					}
					if tt.wantText != "" && text(res) != tt.wantText {
						t.Errorf("text = %q, want %q", text(res), tt.wantText)
					}
					var got any
					if res.StructuredContent != nil {
						b, _ := json.Marshal(res.StructuredContent)
						json.Unmarshal(b, &got)
					}
					if diff := cmp.Diff(tt.structured, got); diff != "" {
						t.Errorf("structuredContent (-want +got):\n%s", diff)
					}
				})
			}
		})
	}
}

// TestToolList checks names, schemas and descriptions as advertised.
func TestToolList(t *testing.T) {
	cs := connect(t, serveHTTP(t, testServer(nil)), "", nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		tools[tl.Name] = tl
	}
	schema := func(name string, out bool) map[string]any {
		t.Helper()
		tl := tools[name]
		if tl == nil {
			t.Fatalf("no tool %q in %v", name, tools)
		}
		s := tl.InputSchema
		if out {
			s = tl.OutputSchema
		}
		if s == nil {
			return nil
		}
		var m map[string]any
		b, _ := json.Marshal(s)
		json.Unmarshal(b, &m)
		return m
	}
	if d := schema("add_numbers", false)["properties"].(map[string]any)["a"].(map[string]any)["description"]; d != "first" {
		t.Errorf("description tag: got %v", d)
	}
	if d := schema("echo", false)["properties"].(map[string]any)["text"].(map[string]any)["description"]; d != "the text to echo" {
		t.Errorf("jsonschema tag: got %v", d)
	}
	if s := schema("echo", true); s != nil {
		t.Errorf("raw tool has output schema %v", s)
	}
	count := schema("count", true)
	if count["type"] != "object" || count["properties"].(map[string]any)["result"].(map[string]any)["type"] != "integer" {
		t.Errorf("count output schema not wrapped: %v", count)
	}
	if s := schema("add_numbers", true); s["properties"].(map[string]any)["sum"] == nil {
		t.Errorf("add_numbers output schema: %v", s)
	}
}

func TestResources(t *testing.T) {
	url := serveHTTP(t, testServer(nil))
	tests := []struct {
		uri, text, mime string
		blob            bool
		code            int64
	}{
		{uri: "test://readme", text: "read me", mime: "text/plain"},
		{uri: "test://logo", blob: true, mime: "image/png"},
		{uri: "test://users/me", text: "the current user", mime: "text/plain"}, // concrete beats template
		{uri: "test://users/42", text: `{"id":42}`, mime: "application/json"},
		{uri: "test://users/%34%32", text: `{"id":42}`, mime: "application/json"}, // decoded
		{uri: "test://users/abc", code: jsonrpc.CodeInvalidParams},                // typed validation
		{uri: "test://users/101", code: jsonrpc.CodeInvalidParams},                // nothing there: not found
		{uri: "test://users/1/2", code: jsonrpc.CodeInvalidParams},                // {id} never spans /
		{uri: "test://files/a/b%20c.txt", text: "path=a/b%20c.txt", mime: "text/plain"},
		{uri: "test://tags/go%2Flang", text: "tag=go/lang", mime: "text/plain"},
		{uri: "test://nothing", code: jsonrpc.CodeInvalidParams},
	}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cs := connect(t, url, era.version, nil)
			for _, tt := range tests {
				t.Run(tt.uri, func(t *testing.T) {
					res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: tt.uri})
					if tt.code != 0 {
						if got := rpcCode(err); got != tt.code {
							t.Fatalf("error %v (code %d), want %d", err, got, tt.code)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					c := res.Contents[0]
					if c.URI != tt.uri || c.MIMEType != tt.mime || c.Text != tt.text || (c.Blob != nil) != tt.blob {
						t.Errorf("got %+v", c)
					}
				})
			}
		})
	}
}

func TestPrompts(t *testing.T) {
	url := serveHTTP(t, testServer(nil))
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cs := connect(t, url, era.version, nil)
			lp, err := cs.ListPrompts(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			args := lp.Prompts[0].Arguments
			if len(args) != 2 || args[0].Name != "name" || !args[0].Required || args[0].Description != "who to greet" || args[1].Required {
				t.Errorf("arguments: %+v %+v", args[0], args[1])
			}
			res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada", "times": "2", "extra": "ignored"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Messages[0].Content.(*mcp.TextContent).Text; got != "hello Ada hello Ada " || res.Messages[0].Role != "user" {
				t.Errorf("got %q", got)
			}
			for name, args := range map[string]map[string]string{
				"missing required": {},
				"bad type":         {"name": "x", "times": "many"},
			} {
				_, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "greet", Arguments: args})
				if rpcCode(err) != jsonrpc.CodeInvalidParams {
					t.Errorf("%s: got %v, want -32602", name, err)
				}
			}
			if _, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "nope"}); rpcCode(err) != jsonrpc.CodeInvalidParams {
				t.Errorf("unknown prompt: %v", err)
			}
		})
	}
}

// TestContext checks the context helpers in both eras.
func TestContext(t *testing.T) {
	url := serveHTTP(t, testServer(nil))
	call := func(t *testing.T, cs *mcp.ClientSession) whoamiOut {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami"})
		if err != nil || res.IsError {
			t.Fatal(err, res)
		}
		var out whoamiOut
		json.Unmarshal([]byte(text(res)), &out)
		return out
	}
	t.Run("modern", func(t *testing.T) {
		got := call(t, connect(t, url, "", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}))
		want := whoamiOut{Version: "2026-07-28", Modern: true, Client: "test-client", HasCaps: true, Header: "from-header", HasSession: true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("legacy", func(t *testing.T) {
		got := call(t, connect(t, url, "2025-11-25", nil))
		want := whoamiOut{Header: "from-header", HasSession: true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// TestProgressAndCancel checks the progress reporter and cancellation in
// both eras.
func TestProgressAndCancel(t *testing.T) {
	url := serveHTTP(t, testServer(nil))
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			got := make(chan string, 10)
			cs := connect(t, url, era.version, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					got <- r.Params.Message
				},
			})
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "progress"})
			if err != nil || text(res) != "no token" {
				t.Fatalf("without token: %v %v", err, res)
			}
			p := &mcp.CallToolParams{Name: "progress"}
			p.SetProgressToken("tok")
			if res, err = cs.CallTool(context.Background(), p); err != nil || text(res) != "reported" {
				t.Fatalf("with token: %v %v", err, res)
			}
			for i := 1; i <= 3; i++ {
				select {
				case m := <-got:
					if m != "step "+string(rune('0'+i)) {
						t.Errorf("progress %d: %q", i, m)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("progress %d not received", i)
				}
			}

			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "block"})
				done <- err
			}()
			<-blockStarted
			cancel()
			select {
			case <-blockCancelled:
			case <-time.After(10 * time.Second):
				t.Fatal("handler not cancelled")
			}
			<-done
		})
	}
}

// TestInputRequired checks the multi-round-trip flow in both eras: the
// modern client answers the input request itself, and for a legacy
// session go-sdk sends elicitation/create and calls the tool again.
func TestInputRequired(t *testing.T) {
	url := serveHTTP(t, testServer(nil))
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cs := connect(t, url, era.version, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				},
			})
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask"})
			if err != nil {
				t.Fatal(err)
			}
			// Legacy: go-sdk's middleware elicits over the session and calls
			// the tool again with the responses and the state.
			want := "hello Ada (state s1)"
			if got := text(res); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// TestRegistrationErrors checks that bad registrations fail loudly.
func TestRegistrationErrors(t *testing.T) {
	s := New("x", "1", nil)
	h := func(context.Context, string, map[string]string) (*Contents, error) { return nil, nil }
	for _, tmpl := range []string{"x://{?q}", "x://a{#f}", "x://{/p*}", "x://{.ext}", "x://{;p}", "x://{&q}", "x://{a,b}", "x://{a*}", "x://{a:3}", "x://{}", "x://{a", "x://a}", "x://fixed", "x://{a}/{a}", "x://{a-b}"} {
		if err := AddTemplate(s, ResourceTemplate{URITemplate: tmpl, Name: "t"}, h); err == nil {
			t.Errorf("template %q accepted", tmpl)
		}
	}
	if err := AddTemplate(s, ResourceTemplate{URITemplate: "x://{id}/{other}", Name: "t"},
		func(context.Context, string, userVars) (*Contents, error) { return nil, nil }); err == nil {
		t.Error("template with a variable without field accepted")
	}
	if err := AddTool(s, Tool{Description: "closure"}, func(context.Context, noArgs) (Content, error) { return nil, nil }); err == nil {
		t.Error("unnamed closure accepted")
	}
	if err := AddTool(s, Tool{Name: "bad name!", Description: "A tool."}, func(context.Context, noArgs) (Content, error) { return nil, nil }); err == nil {
		t.Error("bad name accepted")
	}
	if err := AddTool(s, Tool{Name: "mute", Description: " "}, func(context.Context, noArgs) (Content, error) { return nil, nil }); err == nil || !strings.Contains(err.Error(), "no description") {
		t.Errorf("a tool without a description: %v", err)
	}
	if err := AddTool(s, Tool{Name: "union", Description: "A union."}, func(context.Context, noArgs) (any, error) { return nil, nil }); err == nil {
		t.Error("interface result without OutputSchema accepted")
	}
	if err := AddTool(s, Tool{Name: "arr", Description: "An array.", InputSchema: map[string]any{"type": "array"}}, func(context.Context, any) (Content, error) { return nil, nil }); err == nil {
		t.Error("non-object input schema accepted")
	}
	if err := s.AddResource(Resource{URI: "relative", Name: "r"}, func(context.Context) (*Contents, error) { return nil, nil }); err == nil {
		t.Error("relative URI accepted")
	}
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"GetWeather": "get_weather", "getWeather": "get_weather", "HTTPServer": "http_server",
		"UserID": "user_id", "add": "add", "AddNumbers": "add_numbers", "ParseURLNow": "parse_url_now", "V2Thing": "v2_thing",
	} {
		if got := SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTemplateMatch(t *testing.T) {
	tests := []struct {
		tmpl, uri string
		want      map[string]string // nil: no match
	}{
		{"db://users/{id}", "db://users/42", map[string]string{"id": "42"}},
		{"db://users/{id}", "db://users/a%2Fb", map[string]string{"id": "a/b"}},
		{"db://users/{id}", "db://users/a/b", nil},
		{"db://users/{id}", "db://users/", nil},
		{"db://users/{id}", "db://users/%zz", nil},
		{"db://users/{id}/posts/{post}", "db://users/1/posts/2", map[string]string{"id": "1", "post": "2"}},
		{"file:///{+path}", "file:///a/b/c%20d", map[string]string{"path": "a/b/c%20d"}},
		{"file:///{+path}.txt", "file:///a/b.txt", map[string]string{"path": "a/b"}},
		{"x://{a}.{b}", "x://one.two", map[string]string{"a": "one", "b": "two"}},
		{"x://lit(eral)/{a}", "x://lit(eral)/v", map[string]string{"a": "v"}},
		{"x://lit(eral)/{a}", "x://litteral/v", nil},
	}
	for _, tt := range tests {
		tm, err := parseTemplate(tt.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", tt.tmpl, err)
		}
		got, ok := tm.match(tt.uri)
		if !ok {
			got = nil
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s ~ %s (-want +got):\n%s", tt.tmpl, tt.uri, diff)
		}
	}
	// Specificity: fewer greedy variables, then more literal text.
	a, _ := parseTemplate("x://a/{b}")
	b, _ := parseTemplate("x://{+p}")
	c, _ := parseTemplate("x://{p}/{q}")
	if !moreSpecific(a, b) || moreSpecific(b, a) || !moreSpecific(a, c) {
		t.Error("specificity order wrong")
	}
}

func FuzzTemplate(f *testing.F) {
	f.Add("db://users/{id}", "db://users/42")
	f.Add("file:///{+path}", "file:///a/b")
	f.Add("x://{a}{b}", "x://ab")
	f.Fuzz(func(t *testing.T, tmpl, uri string) {
		tm, err := parseTemplate(tmpl)
		if err != nil {
			return
		}
		vars, ok := tm.match(uri)
		if !ok {
			return
		}
		for i, v := range tm.vars {
			if _, ok := vars[v]; !ok {
				t.Fatalf("matched without variable %q", v)
			}
			if !tm.greedy[i] && vars[v] == "" {
				t.Fatalf("{%s} matched empty", v)
			}
		}
	})
}

// TestProgressTokenAndPromptDescription: a handler reaches the client's
// progress token, and a prompt handler sets its result's description.
func TestProgressTokenAndPromptDescription(t *testing.T) {
	s := New("t", "1", nil)
	MustAddTool(s, Tool{Name: "token", Description: "says the progress token"}, func(ctx context.Context, _ noArgs) (Content, error) {
		return Text(fmt.Sprintf("%v", ProgressReporter(ctx).Token())), nil
	})
	MustAddPrompt(s, Prompt{Name: "greet", Description: "a greeting"}, func(ctx context.Context, a struct {
		Name string `json:"name"`
	}) ([]*mcp.PromptMessage, error) {
		if a.Name != "" {
			SetPromptDescription(ctx, "a greeting for "+a.Name)
		}
		return []*mcp.PromptMessage{UserText("hello " + a.Name)}, nil
	})
	for _, version := range []string{"", "2025-11-25"} {
		cs := connect(t, serveHTTP(t, s), version, nil)
		p := &mcp.CallToolParams{Name: "token"}
		p.SetProgressToken("tok-7")
		for want, params := range map[string]*mcp.CallToolParams{"tok-7": p, "<nil>": {Name: "token"}} {
			res, err := cs.CallTool(context.Background(), params)
			if err != nil || res.Content[0].(*mcp.TextContent).Text != want {
				t.Errorf("%q: token: %v %v, want %q", version, res, err, want)
			}
		}
		for args, want := range map[string]string{"Ada": "a greeting for Ada", "": "a greeting"} {
			res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": args}})
			if err != nil || res.Description != want {
				t.Errorf("%q: prompt(%q): %+v %v, want description %q", version, args, res, err, want)
			}
		}
	}
}
