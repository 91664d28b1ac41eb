package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/server"
)

type AddIn struct {
	A int `json:"a" jsonschema:"the first number"`
	B int `json:"b" description:"the second number"`
}

type Sum struct {
	Sum int `json:"sum"`
}

// AddNumbers becomes the tool add_numbers.
func AddNumbers(_ context.Context, in AddIn) (Sum, error) {
	return Sum{in.A + in.B}, nil
}

// connect returns a client session connected to s in memory.
func connect(s *server.Server, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.MCP().Connect(ctx, st, nil); err != nil {
		panic(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example-client", Version: "1"}, nil).Connect(ctx, ct, opts)
	if err != nil {
		panic(err)
	}
	return cs
}

func show(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

// A tool with a typed result: the result is validated and sent both as
// structured content and as JSON text.
func Example() {
	s := server.New("calculator", "1.0.0", nil)
	server.MustAddTool(s, server.Tool{Description: "Adds two numbers."}, AddNumbers)

	cs := connect(s, nil)
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
		Name:      "add_numbers",
		Arguments: map[string]any{"a": 2, "b": 3},
	})
	if err != nil {
		panic(err)
	}
	show(res.StructuredContent)
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// {"sum":5}
	// {"sum":5}
}

// A result that is not an object is advertised as {"result": schema} and
// answered as {"result": value}; the text carries the value itself.
func ExampleAddTool_nonObjectResult() {
	s := server.New("counter", "1.0.0", nil)
	server.MustAddTool(s, server.Tool{Name: "count_words", Description: "Counts words."},
		func(_ context.Context, in struct {
			Text string `json:"text"`
		}) (int, error) {
			n := 0
			inWord := false
			for _, r := range in.Text {
				if r == ' ' {
					inWord = false
				} else if !inWord {
					inWord, n = true, n+1
				}
			}
			return n, nil
		})

	cs := connect(s, nil)
	defer cs.Close()
	list, _ := cs.ListTools(context.Background(), nil)
	show(list.Tools[0].OutputSchema)
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "count_words", Arguments: map[string]any{"text": "one two three"}})
	show(res.StructuredContent)
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// {"properties":{"result":{"type":"integer"}},"required":["result"],"type":"object"}
	// {"result":3}
	// 3
}

// An ordinary error is a tool execution error the model can read; a typed
// error is a JSON-RPC error with its code.
func ExampleForbidden() {
	s := server.New("vault", "1.0.0", nil)
	server.MustAddTool(s, server.Tool{Name: "open", Description: "Opens the vault."},
		func(_ context.Context, in struct {
			Code string `json:"code"`
		}) (server.Content, error) {
			if in.Code == "" {
				return nil, fmt.Errorf("code is empty: ask the user for it")
			}
			return nil, server.Forbidden("wrong code")
		})

	cs := connect(s, nil)
	defer cs.Close()
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "open", Arguments: map[string]any{"code": ""}})
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "open", Arguments: map[string]any{"code": "1234"}})
	fmt.Println(err)
	// Output:
	// true code is empty: ask the user for it
	// calling "tools/call": wrong code
}

type UserVars struct {
	ID int `json:"id"`
}

// A concrete resource wins over a template that matches the same URI;
// template variables are validated against a struct.
func ExampleAddTemplate() {
	s := server.New("users", "1.0.0", nil)
	s.AddResource(server.Resource{URI: "db://users/me", Name: "me"},
		func(context.Context) (*server.Contents, error) {
			return &server.Contents{Text: "you"}, nil
		})
	err := server.AddTemplate(s, server.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"},
		func(_ context.Context, uri string, v UserVars) (*server.Contents, error) {
			if v.ID > 1000 {
				return nil, nil // not found
			}
			return &server.Contents{Text: fmt.Sprintf("user %d", v.ID)}, nil
		})
	if err != nil {
		panic(err)
	}
	// Other RFC 6570 forms are refused when registered.
	fmt.Println(server.AddTemplate(s, server.ResourceTemplate{URITemplate: "db://search{?q}", Name: "search"},
		func(context.Context, string, map[string]string) (*server.Contents, error) { return nil, nil }))

	cs := connect(s, nil)
	defer cs.Close()
	for _, uri := range []string{"db://users/me", "db://users/42", "db://users/bob", "db://users/5000"} {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			fmt.Println(uri, "error:", err)
			continue
		}
		fmt.Println(uri, res.Contents[0].MIMEType, res.Contents[0].Text)
	}
	// Output:
	// uri template "db://search{?q}": operator "?" is not supported (only {var} and {+var})
	// db://users/me text/plain you
	// db://users/42 text/plain user 42
	// db://users/bob error: calling "resources/read": invalid URI "db://users/bob" for template "db://users/{id}": id: "bob" is not an integer
	// db://users/5000 error: calling "resources/read": Resource not found
}

// A prompt's arguments come from a struct.
func ExampleAddPrompt() {
	s := server.New("prompts", "1.0.0", nil)
	server.MustAddPrompt(s, server.Prompt{Name: "review", Description: "Asks for a code review."},
		func(_ context.Context, a struct {
			Code     string `json:"code" description:"the code to review"`
			Language string `json:"language,omitempty"`
		}) ([]*mcp.PromptMessage, error) {
			return []*mcp.PromptMessage{server.UserText("Please review this " + a.Language + " code: " + a.Code)}, nil
		})

	cs := connect(s, nil)
	defer cs.Close()
	list, _ := cs.ListPrompts(context.Background(), nil)
	for _, a := range list.Prompts[0].Arguments {
		fmt.Printf("%s required=%v %q\n", a.Name, a.Required, a.Description)
	}
	res, _ := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"code": "x := 1", "language": "Go"}})
	fmt.Println(res.Messages[0].Role, res.Messages[0].Content.(*mcp.TextContent).Text)
	// Output:
	// code required=true "the code to review"
	// language required=false ""
	// user Please review this Go code: x := 1
}

// One HTTP endpoint serves both eras: a modern client gets 2026-07-28,
// a client pinned to the legacy era gets a session.
func ExampleServer_Handler() {
	s := server.New("both", "1.0.0", nil)
	server.MustAddTool(s, server.Tool{Description: "Adds two numbers."}, AddNumbers)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	for _, version := range []string{"", "2025-11-25"} {
		c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			panic(err)
		}
		res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_numbers", Arguments: map[string]any{"a": 1, "b": 1}})
		fmt.Println(cs.InitializeResult().ProtocolVersion, cs.ID() != "", res.Content[0].(*mcp.TextContent).Text)
		cs.Close()
	}
	// Output:
	// 2026-07-28 false {"sum":2}
	// 2025-11-25 true {"sum":2}
}
