package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawStdoutRedirected: ServeStdio redirects writes to file descriptor 1
// itself, not only os.Stdout, on this platform.
const rawStdoutRedirected = runtime.GOOS == "linux"

// childVar makes the test binary serve testServer on stdio (see TestStdio).
const childVar = "SERVER_TEST_STDIO_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childVar) != "" {
		s := testServer(nil)
		if err := s.ServeStdio(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		fmt.Println("stdout restored") // goes to the real stdout after serving
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Types of the test server's features.
type (
	echoIn struct {
		Text string `json:"text" jsonschema:"the text to echo"`
	}
	addIn struct {
		A int `json:"a" description:"first"`
		B int `json:"b" description:"second"`
	}
	sumOut struct {
		Sum int `json:"sum"`
	}
	docOut struct {
		// Content is a field of the declared result, not raw blocks.
		Content string `json:"content"`
	}
	failIn struct {
		Kind string `json:"kind"`
	}
	userVars struct {
		ID int `json:"id"`
	}
	fileVars struct {
		Path string `json:"path"`
	}
	greetArgs struct {
		Name  string `json:"name" description:"who to greet"`
		Times int    `json:"times,omitempty"`
	}
	noArgs struct{}
)

// AddNumbers is a named function, so its tool is called add_numbers.
func AddNumbers(_ context.Context, in addIn) (sumOut, error) { return sumOut{in.A + in.B}, nil }

// testServer returns a server with one of each feature the tests use.
func testServer(opts *Options) *Server {
	s := New("test-server", "1.2.3", opts)
	MustAddTool(s, Tool{Description: "adds"}, AddNumbers)
	MustAddTool(s, Tool{Name: "echo", Description: "echoes"}, func(_ context.Context, in echoIn) (Content, error) {
		return Text(in.Text), nil
	})
	MustAddTool(s, Tool{Name: "count", Description: "non-object result"}, func(_ context.Context, in echoIn) (int, error) {
		return len(in.Text), nil
	})
	MustAddTool(s, Tool{Name: "words", Description: "list result"}, func(_ context.Context, in echoIn) ([]string, error) {
		return strings.Fields(in.Text), nil
	})
	MustAddTool(s, Tool{Name: "doc", Description: "result with a content field"}, func(_ context.Context, in echoIn) (docOut, error) {
		return docOut{Content: in.Text}, nil
	})
	MustAddTool(s, Tool{Name: "image", Description: "raw blocks"}, func(context.Context, noArgs) (Content, error) {
		return Content{
			&mcp.TextContent{Text: "a picture"},
			&mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"},
			&mcp.ResourceLink{URI: "test://users/1", Name: "user"},
		}, nil
	})
	MustAddTool(s, Tool{Name: "fail", Description: "fails as asked"}, func(_ context.Context, in failIn) (Content, error) {
		switch in.Kind {
		case "unauthorized":
			return nil, Unauthorized("log in first")
		case "forbidden":
			return nil, Forbidden("not yours")
		case "invalid":
			return nil, InvalidParams("bad kind")
		case "notfound":
			return nil, NotFound("no such thing")
		case "internal":
			return nil, Internal(fmt.Errorf("disk on fire"), "storage failed")
		case "panic":
			panic("boom")
		}
		return nil, fmt.Errorf("wrapped: %w", fmt.Errorf("plain failure"))
	})
	MustAddTool(s, Tool{Name: "liar", Description: "breaks its schema", OutputSchema: map[string]any{"type": "integer", "minimum": 10}},
		func(context.Context, noArgs) (any, error) { return 3, nil })
	MustAddTool(s, Tool{Name: "stray", Description: "prints to stdout"}, func(_ context.Context, in echoIn) (Content, error) {
		fmt.Println("stray output from a handler", in.Text)
		fmt.Fprintln(os.Stdout, `{"jsonrpc":"2.0","id":999,"result":{}}`)
		if rawStdoutRedirected {
			// What cgo or a dependency holding fd 1 does, bypassing os.Stdout.
			syscall.Write(1, []byte("raw write to fd 1 "+in.Text+"\n"))
			syscall.Write(1, []byte(`{"jsonrpc":"2.0","id":998,"result":{}}`+"\n"))
		}
		return Text("clean " + in.Text), nil
	})
	MustAddTool(s, Tool{Name: "whoami", Description: "reports the request context"}, whoami)
	MustAddTool(s, Tool{Name: "progress", Description: "reports progress"}, func(ctx context.Context, _ noArgs) (Content, error) {
		p := ProgressReporter(ctx)
		if p == nil {
			return Text("no token"), nil
		}
		for i := 1; i <= 3; i++ {
			if err := p.Report(float64(i), 3, fmt.Sprintf("step %d", i)); err != nil {
				return nil, err
			}
		}
		return Text("reported"), nil
	})
	MustAddTool(s, Tool{Name: "block", Description: "waits for cancellation"}, func(ctx context.Context, _ noArgs) (Content, error) {
		blockStarted <- struct{}{}
		select {
		case <-ctx.Done():
			blockCancelled <- struct{}{}
			return nil, ctx.Err()
		case <-time.After(30 * time.Second):
			return Text("not cancelled"), nil
		}
	})
	MustAddTool(s, Tool{Name: "ask", Description: "elicits a name"}, func(ctx context.Context, _ noArgs) (Content, error) {
		if r, ok := InputResponses(ctx)["name"].(*mcp.ElicitResult); ok && r.Action == "accept" {
			return Text(fmt.Sprintf("hello %v (state %s)", r.Content["name"], RequestState(ctx))), nil
		}
		return nil, NeedInput(mcp.InputRequestMap{"name": &mcp.ElicitParams{
			Message: "name?",
			RequestedSchema: map[string]any{
				"type":       "object",
				"properties": map[string]any{"name": map[string]any{"type": "string"}},
			},
		}}, "s1")
	})

	must(s.AddResource(Resource{URI: "test://readme", Name: "readme"}, func(context.Context) (*Contents, error) {
		return &Contents{Text: "read me"}, nil
	}))
	must(s.AddResource(Resource{URI: "test://logo", Name: "logo", MIMEType: "image/png", Cache: &Cache{TTL: time.Minute}},
		func(context.Context) (*Contents, error) { return &Contents{Blob: []byte{0x89, 'P', 'N', 'G'}}, nil }))
	must(s.AddResource(Resource{URI: "test://users/me", Name: "me"}, func(context.Context) (*Contents, error) {
		return &Contents{Text: "the current user"}, nil
	}))
	must(AddTemplate(s, ResourceTemplate{URITemplate: "test://users/{id}", Name: "user", MIMEType: "application/json"},
		func(_ context.Context, uri string, v userVars) (*Contents, error) {
			if v.ID > 100 {
				return nil, nil // nothing there
			}
			return &Contents{Text: fmt.Sprintf(`{"id":%d}`, v.ID)}, nil
		}))
	must(AddTemplate(s, ResourceTemplate{URITemplate: "test://files/{+path}", Name: "file"},
		func(_ context.Context, uri string, v fileVars) (*Contents, error) {
			return &Contents{Text: "path=" + v.Path}, nil
		}))
	must(AddTemplate(s, ResourceTemplate{URITemplate: "test://tags/{tag}", Name: "tag"},
		func(_ context.Context, uri string, v map[string]string) (*Contents, error) {
			return &Contents{Text: "tag=" + v["tag"]}, nil
		}))
	must(AddPrompt(s, Prompt{Name: "greet", Description: "greets"}, func(_ context.Context, a greetArgs) ([]*mcp.PromptMessage, error) {
		n := max(a.Times, 1)
		return []*mcp.PromptMessage{UserText(strings.Repeat("hello "+a.Name+" ", n))}, nil
	}))
	return s
}

var (
	blockStarted   = make(chan struct{}, 1)
	blockCancelled = make(chan struct{}, 1)
)

type whoamiOut struct {
	Version    string `json:"version"`
	Modern     bool   `json:"modern"`
	Client     string `json:"client"`
	HasCaps    bool   `json:"has_caps"`
	Sampling   bool   `json:"sampling"`
	Header     string `json:"header"`
	HasSession bool   `json:"has_session"`
}

func whoami(ctx context.Context, _ noArgs) (whoamiOut, error) {
	out := whoamiOut{Version: ProtocolVersion(ctx), Modern: IsModern(ctx), HasSession: Session(ctx) != nil}
	if ci := ClientInfo(ctx); ci != nil {
		out.Client = ci.Name
	}
	if c := ClientCapabilities(ctx); c != nil {
		out.HasCaps = true
		out.Sampling = c.Sampling != nil
	}
	out.Header = Headers(ctx).Get("X-Test")
	return out, nil
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// eras are the two ways a go-sdk client connects.
var eras = []struct {
	name    string
	version string // ClientSessionOptions.ProtocolVersion
	want    string // negotiated
}{
	{"modern", "", "2026-07-28"},
	{"legacy", "2025-11-25", "2025-11-25"},
}

// headerTransport adds X-Test to every request.
type headerTransport struct{}

func (headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test", "from-header")
	return http.DefaultTransport.RoundTrip(r)
}

// serveHTTP serves s on 127.0.0.1:0 for the test's duration.
func serveHTTP(t *testing.T, s *Server) string {
	t.Helper()
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts.URL
}

// connect connects a go-sdk client to url at the given version ("" for the
// default, modern).
func connect(t *testing.T, url, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0.1"}, opts)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: headerTransport{}},
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect (%q): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
