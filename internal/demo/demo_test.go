package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/server"
)

const testVersion = "v1.2.3-test"

// versions are the protocol versions every in-memory test runs at: what the
// default go-sdk client negotiates (2026-07-28, via server/discover) and the
// latest session-based one (via initialize).
var versions = []struct {
	name    string
	request string // ClientSessionOptions.ProtocolVersion; "" is the client's default
	want    string // the negotiated version
}{
	{name: "default", request: "", want: "2026-07-28"},
	{name: "2025-11-25", request: "2025-11-25", want: "2025-11-25"},
}

// progressLog collects the progress notifications a client receives.
type progressLog struct {
	ch chan *mcp.ProgressNotificationParams
}

func newProgressLog() *progressLog {
	return &progressLog{ch: make(chan *mcp.ProgressNotificationParams, 100)}
}

func (p *progressLog) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	select {
	case p.ch <- req.Params:
	default: // a test that wants this many has failed already
	}
}

// next returns the next notification, failing t if none comes in time.
func (p *progressLog) next(t *testing.T) *mcp.ProgressNotificationParams {
	t.Helper()
	select {
	case n := <-p.ch:
		return n
	case <-time.After(5 * time.Second):
		t.Fatal("no progress notification within 5s")
		return nil
	}
}

// toolCalls observes, from the server side, when tools/call handlers start and
// return, so tests can tell that a cancelled tool really stopped.
type toolCalls struct {
	started  chan string
	returned chan *mcp.CallToolResult
}

func observeToolCalls(s *server.Server) *toolCalls {
	c := &toolCalls{started: make(chan string, 10), returned: make(chan *mcp.CallToolResult, 10)}
	s.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			c.started <- req.(*mcp.CallToolRequest).Params.Name
			res, err := next(ctx, method, req)
			r, _ := res.(*mcp.CallToolResult)
			if err != nil {
				r = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
			}
			c.returned <- r
			return res, err
		}
	})
	return c
}

func (c *toolCalls) waitStarted(t *testing.T, name string) {
	t.Helper()
	select {
	case got := <-c.started:
		if got != name {
			t.Fatalf("started tool %q, want %q", got, name)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("tool %q did not start within 5s", name)
	}
}

func (c *toolCalls) waitReturned(t *testing.T, within time.Duration) *mcp.CallToolResult {
	t.Helper()
	select {
	case res := <-c.returned:
		return res
	case <-time.After(within):
		t.Fatalf("tool handler did not return within %v", within)
		return nil
	}
}

// connectInMemory connects a go-sdk client to server over in-memory
// transports at the given protocol version ("" for the client's default).
func connectInMemory(t *testing.T, srv *server.Server, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "0"}, opts)
	cs, err := client.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		ss.Close()
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// forEachVersion runs f in a subtest per protocol version, each with a fresh
// server and client.
func forEachVersion(t *testing.T, opts *mcp.ClientOptions, f func(t *testing.T, cs *mcp.ClientSession)) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			cs := connectInMemory(t, New(testVersion, nil), v.request, opts)
			if got := cs.InitializeResult().ProtocolVersion; got != v.want {
				t.Fatalf("negotiated protocol version %q, want %q", got, v.want)
			}
			f(t, cs)
		})
	}
}

func TestInitializeResult(t *testing.T) {
	forEachVersion(t, nil, func(t *testing.T, cs *mcp.ClientSession) {
		res := cs.InitializeResult()
		if res.ServerInfo == nil {
			t.Fatal("no serverInfo")
		}
		if res.ServerInfo.Name != ImplementationName || res.ServerInfo.Version != testVersion {
			t.Errorf("serverInfo = %s %s, want %s %s", res.ServerInfo.Name, res.ServerInfo.Version, ImplementationName, testVersion)
		}
		if res.Instructions != instructions {
			t.Errorf("instructions = %q, want %q", res.Instructions, instructions)
		}
		caps := res.Capabilities
		if caps == nil || caps.Tools == nil || caps.Resources == nil || caps.Prompts == nil {
			t.Errorf("capabilities = %+v, want tools, resources and prompts", caps)
		}
	})
}

// schemaShape is the part of a JSON schema the tests pin down.
type schemaShape struct {
	Properties []string // sorted
	Required   []string // sorted
}

// shapeOf extracts a schemaShape from a schema as a client sees it (decoded
// JSON), and checks that every property has a description, since hosts show
// them to models and people.
func shapeOf(t *testing.T, tool string, schema any) *schemaShape {
	t.Helper()
	if schema == nil {
		return nil
	}
	m, ok := schema.(map[string]any)
	if !ok {
		t.Fatalf("tool %s: schema is %T, want an object", tool, schema)
	}
	if m["type"] != "object" {
		t.Errorf("tool %s: schema type %v, want object", tool, m["type"])
	}
	shape := &schemaShape{Properties: []string{}, Required: []string{}}
	props, _ := m["properties"].(map[string]any)
	for name, p := range props {
		shape.Properties = append(shape.Properties, name)
		if d, _ := p.(map[string]any)["description"].(string); d == "" {
			t.Errorf("tool %s: property %s has no description", tool, name)
		}
	}
	req, _ := m["required"].([]any)
	for _, r := range req {
		shape.Required = append(shape.Required, r.(string))
	}
	slices.Sort(shape.Properties)
	slices.Sort(shape.Required)
	return shape
}

func TestListTools(t *testing.T) {
	type toolShape struct {
		Input, Output *schemaShape
		ReadOnly      bool
	}
	none := []string{}
	want := map[string]toolShape{
		"add": {
			Input:  &schemaShape{Properties: []string{"a", "b"}, Required: []string{"a", "b"}},
			Output: &schemaShape{Properties: []string{"sum"}, Required: []string{"sum"}},
		},
		"echo":  {Input: &schemaShape{Properties: []string{"text"}, Required: []string{"text"}}},
		"fail":  {Input: &schemaShape{Properties: []string{"message"}, Required: none}},
		"image": {Input: &schemaShape{Properties: none, Required: none}},
		"slow":  {Input: &schemaShape{Properties: []string{"delay_ms", "steps"}, Required: none}},
		"weather": {
			Input: &schemaShape{Properties: []string{"city", "units"}, Required: []string{"city"}},
			Output: &schemaShape{
				Properties: []string{"city", "conditions", "humidity_percent", "temperature", "units", "wind_kph"},
				Required:   []string{"city", "conditions", "humidity_percent", "temperature", "units", "wind_kph"},
			},
		},
	}
	for name, w := range want {
		w.ReadOnly = true
		want[name] = w
	}

	forEachVersion(t, nil, func(t *testing.T, cs *mcp.ClientSession) {
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]toolShape{}
		for _, tool := range res.Tools {
			if tool.Description == "" || tool.Title == "" {
				t.Errorf("tool %s: missing title or description", tool.Name)
			}
			got[tool.Name] = toolShape{
				Input:    shapeOf(t, tool.Name, tool.InputSchema),
				Output:   shapeOf(t, tool.Name, tool.OutputSchema),
				ReadOnly: tool.Annotations != nil && tool.Annotations.ReadOnlyHint,
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
	})
}

func TestListResourcesTemplatesPrompts(t *testing.T) {
	forEachVersion(t, nil, func(t *testing.T, cs *mcp.ClientSession) {
		ctx := t.Context()

		resources, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		type res struct{ URI, Name, MIMEType string }
		var gotRes []res
		for _, r := range resources.Resources {
			gotRes = append(gotRes, res{r.URI, r.Name, r.MIMEType})
		}
		wantRes := []res{
			{"demo://logo.png", "logo", "image/png"},
			{"demo://readme", "readme", "text/markdown"},
		}
		sortBy := func(a, b res) int { return strings.Compare(a.URI, b.URI) }
		slices.SortFunc(gotRes, sortBy)
		if diff := cmp.Diff(wantRes, gotRes); diff != "" {
			t.Errorf("resources (-want +got):\n%s", diff)
		}

		templates, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var gotTmpl []res
		for _, r := range templates.ResourceTemplates {
			gotTmpl = append(gotTmpl, res{r.URITemplate, r.Name, r.MIMEType})
		}
		if diff := cmp.Diff([]res{{"demo://notes/{id}", "note", "text/plain"}}, gotTmpl); diff != "" {
			t.Errorf("resource templates (-want +got):\n%s", diff)
		}

		prompts, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(prompts.Prompts) != 1 {
			t.Fatalf("got %d prompts, want 1", len(prompts.Prompts))
		}
		p := prompts.Prompts[0]
		type arg struct {
			Name     string
			Required bool
		}
		var gotArgs []arg
		for _, a := range p.Arguments {
			gotArgs = append(gotArgs, arg{a.Name, a.Required})
		}
		if diff := cmp.Diff([]arg{{"code", true}, {"language", false}}, gotArgs); diff != "" || p.Name != "review" {
			t.Errorf("prompt %q arguments (-want +got):\n%s", p.Name, diff)
		}
	})
}

// callCheck checks a tools/call result.
type callCheck func(t *testing.T, res *mcp.CallToolResult)

// text wants exactly one text content with the given text and no error.
func text(want string) callCheck {
	return func(t *testing.T, res *mcp.CallToolResult) {
		t.Helper()
		if res.IsError {
			t.Errorf("IsError = true, want false (content %v)", contentText(res))
		}
		if diff := cmp.Diff([]mcp.Content{&mcp.TextContent{Text: want}}, res.Content); diff != "" {
			t.Errorf("content (-want +got):\n%s", diff)
		}
	}
}

// toolError wants a tool error whose text contains substr.
func toolError(substr string) callCheck {
	return func(t *testing.T, res *mcp.CallToolResult) {
		t.Helper()
		if !res.IsError {
			t.Errorf("IsError = false, want true (content %v)", contentText(res))
		}
		if got := contentText(res); !strings.Contains(got, substr) {
			t.Errorf("error text %q does not contain %q", got, substr)
		}
	}
}

// structured wants no error, structured content equal to want (as JSON), and
// the same JSON as the text content, for clients that only read text.
func structured(want map[string]any) callCheck {
	return func(t *testing.T, res *mcp.CallToolResult) {
		t.Helper()
		if res.IsError {
			t.Fatalf("IsError = true: %s", contentText(res))
		}
		if diff := cmp.Diff(want, res.StructuredContent); diff != "" {
			t.Errorf("structured content (-want +got):\n%s", diff)
		}
		var fromText map[string]any
		if err := json.Unmarshal([]byte(contentText(res)), &fromText); err != nil {
			t.Fatalf("text content is not the structured JSON: %v", err)
		}
		if diff := cmp.Diff(want, fromText); diff != "" {
			t.Errorf("text content JSON (-want +got):\n%s", diff)
		}
	}
}

func contentText(res *mcp.CallToolResult) string {
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func checkGradient(t *testing.T, data []byte, size int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != size || b.Dy() != size {
		t.Fatalf("image is %dx%d, want %dx%d", b.Dx(), b.Dy(), size, size)
	}
	// Red grows to the right, green downwards.
	r0, g0, _, _ := img.At(0, 0).RGBA()
	r1, g1, _, _ := img.At(size-1, size-1).RGBA()
	if r0 != 0 || g0 != 0 || r1 != 0xffff || g1 != 0xffff {
		t.Errorf("corners (r,g) = (%#x,%#x) and (%#x,%#x), want a full gradient", r0, g0, r1, g1)
	}
}

func TestCallTool(t *testing.T) {
	tests := []struct {
		name  string
		tool  string
		args  any
		check callCheck
	}{
		{"echo", "echo", map[string]any{"text": "hello, wörld"}, text("hello, wörld")},
		{"echo empty", "echo", map[string]any{"text": ""}, text("")},
		{"echo missing text", "echo", map[string]any{}, toolError("text")},
		{"add", "add", map[string]any{"a": 2, "b": 3.5}, structured(map[string]any{"sum": 5.5})},
		{"add negative", "add", map[string]any{"a": -2, "b": 1}, structured(map[string]any{"sum": -1.0})},
		{"add wrong type", "add", map[string]any{"a": "two", "b": 1}, toolError("a")},
		{"add overflow", "add", map[string]any{"a": 1e308, "b": 1e308}, toolError("overflows")},
		{"weather", "weather", map[string]any{"city": "Lisbon"}, structured(weatherFor(t, "Lisbon", "celsius"))},
		{"weather fahrenheit", "weather", map[string]any{"city": "Lisbon", "units": "fahrenheit"}, structured(weatherFor(t, "Lisbon", "fahrenheit"))},
		{"weather empty city", "weather", map[string]any{"city": " "}, toolError("city must not be empty")},
		{"weather bad units", "weather", map[string]any{"city": "Oslo", "units": "kelvin"}, toolError("kelvin")},
		{"fail", "fail", nil, toolError("always fails")},
		{"fail with message", "fail", map[string]any{"message": "boom"}, toolError("boom")},
		{"slow too many steps", "slow", map[string]any{"steps": 21}, toolError("steps must be between 1 and 20")},
		{"slow negative delay", "slow", map[string]any{"delay_ms": -1}, toolError("delay_ms must be between 1 and 2000")},
		{"slow without token", "slow", map[string]any{"steps": 2, "delay_ms": 1}, text("completed 2 steps of 1 ms")},
		{"image", "image", nil, func(t *testing.T, res *mcp.CallToolResult) {
			if res.IsError || len(res.Content) != 2 {
				t.Fatalf("got IsError=%v with %d contents, want a caption and an image", res.IsError, len(res.Content))
			}
			img, ok := res.Content[1].(*mcp.ImageContent)
			if !ok {
				t.Fatalf("content[1] is %T, want *mcp.ImageContent", res.Content[1])
			}
			if img.MIMEType != "image/png" {
				t.Errorf("mimeType %q, want image/png", img.MIMEType)
			}
			checkGradient(t, img.Data, 16)
		}},
	}
	forEachVersion(t, nil, func(t *testing.T, cs *mcp.ClientSession) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
				if err != nil {
					t.Fatalf("CallTool: %v (a tool failure must be a result, not a protocol error)", err)
				}
				tc.check(t, res)
			})
		}
	})
}

func TestCallUnknownToolIsProtocolError(t *testing.T) {
	forEachVersion(t, nil, func(t *testing.T, cs *mcp.ClientSession) {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "no-such-tool"})
		if err == nil {
			t.Fatal("CallTool of an unknown tool succeeded")
		}
	})
}

// weatherFor returns the report the weather tool gives, computed
// independently: from the same hash, but checked for its documented ranges.
func weatherFor(t *testing.T, city, units string) map[string]any {
	t.Helper()
	r, err := weather(context.Background(), weatherInput{City: city, Units: units})
	if err != nil {
		t.Fatal(err)
	}
	if r.Temperature < -14 || r.Temperature > 95 || r.HumidityPercent < 20 || r.HumidityPercent > 100 ||
		!slices.Contains(conditions, r.Conditions) || r.WindKPH < 0 || r.Units != units || r.City != city {
		t.Fatalf("weather(%q, %q) = %+v: out of range", city, units, r)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestWeatherDeterministic(t *testing.T) {
	c, err := weather(context.Background(), weatherInput{City: "Lisbon"})
	if err != nil {
		t.Fatal(err)
	}
	lower, err := weather(context.Background(), weatherInput{City: "  lisbon "})
	if err != nil {
		t.Fatal(err)
	}
	f, err := weather(context.Background(), weatherInput{City: "Lisbon", Units: "Fahrenheit"})
	if err != nil {
		t.Fatal(err)
	}
	if lower.Temperature != c.Temperature || lower.Conditions != c.Conditions {
		t.Errorf("case or spaces changed the report: %+v vs %+v", lower, c)
	}
	if want := c.Temperature*9/5 + 32; math.Abs(f.Temperature-want) > 0.051 {
		t.Errorf("fahrenheit = %v, want %v (from %v °C)", f.Temperature, want, c.Temperature)
	}
}

func TestSlowReportsProgress(t *testing.T) {
	progress := newProgressLog()
	opts := &mcp.ClientOptions{ProgressNotificationHandler: progress.handle}
	forEachVersion(t, opts, func(t *testing.T, cs *mcp.ClientSession) {
		testSlowProgress(t, cs, progress)
	})
}

// testSlowProgress calls slow with a progress token and checks the
// notifications that progress receives.
func testSlowProgress(t *testing.T, cs *mcp.ClientSession, progress *progressLog) {
	t.Helper()
	const steps = 3
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": steps, "delay_ms": 1}}
	params.SetProgressToken("tok-" + t.Name())
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	text("completed 3 steps of 1 ms")(t, res)
	for i := 1; i <= steps; i++ {
		got := progress.next(t)
		want := &mcp.ProgressNotificationParams{
			ProgressToken: "tok-" + t.Name(),
			Progress:      float64(i),
			Total:         steps,
			Message:       strings.Replace("step N of 3", "N", string(rune('0'+i)), 1),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("progress notification %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestSlowHonoursCancellation(t *testing.T) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			server := New(testVersion, nil)
			calls := observeToolCalls(server)
			cs := connectInMemory(t, server, v.request, nil)
			testSlowCancel(t, cs, calls)
		})
	}
}

// testSlowCancel starts a slow call that would take 40s, cancels it once the
// server runs it, and checks that both the client call and the server
// handler return promptly, the handler with a cancellation tool error.
func testSlowCancel(t *testing.T, cs *mcp.ClientSession, calls *toolCalls) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{
			Name:      "slow",
			Arguments: map[string]any{"steps": 20, "delay_ms": 2000},
		})
		errc <- err
	}()
	calls.waitStarted(t, "slow")
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("CallTool error = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("CallTool did not return within 5s of cancellation")
	}
	res := calls.waitReturned(t, 5*time.Second)
	toolError("cancelled after 0 of 20 steps")(t, res)
}

func TestReadResource(t *testing.T) {
	tests := []struct {
		uri      string
		mimeType string
		check    func(t *testing.T, c *mcp.ResourceContents)
	}{
		{"demo://readme", "text/markdown", func(t *testing.T, c *mcp.ResourceContents) {
			for _, want := range []string{"# Switchboard demo server", "demo://notes/{id}", "welcome", "review"} {
				if !strings.Contains(c.Text, want) {
					t.Errorf("readme does not mention %q", want)
				}
			}
		}},
		{"demo://logo.png", "image/png", func(t *testing.T, c *mcp.ResourceContents) {
			if c.Text != "" {
				t.Errorf("logo has text %q, want a blob only", c.Text)
			}
			checkGradient(t, c.Blob, 32)
		}},
		{"demo://notes/welcome", "text/plain", func(t *testing.T, c *mcp.ResourceContents) {
			if !strings.HasPrefix(c.Text, `Note "welcome"`) || !strings.Contains(c.Text, "resource template") {
				t.Errorf("note text = %q, want the welcome note with its id", c.Text)
			}
		}},
		{"demo://notes/prot%6Fcol", "text/plain", func(t *testing.T, c *mcp.ResourceContents) {
			if !strings.HasPrefix(c.Text, `Note "protocol"`) {
				t.Errorf("note text = %q, want the protocol note", c.Text)
			}
		}},
	}
	forEachVersion(t, nil, func(t *testing.T, cs *mcp.ClientSession) {
		for _, tc := range tests {
			t.Run(tc.uri, func(t *testing.T) {
				res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: tc.uri})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Contents) != 1 {
					t.Fatalf("got %d contents, want 1", len(res.Contents))
				}
				c := res.Contents[0]
				if c.URI != tc.uri || c.MIMEType != tc.mimeType {
					t.Errorf("got %s (%s), want %s (%s)", c.URI, c.MIMEType, tc.uri, tc.mimeType)
				}
				tc.check(t, c)
			})
		}
	})
}

func TestReadResourceNotFound(t *testing.T) {
	uris := []string{
		"demo://notes/nope",      // matches the template, unknown id
		"demo://notes/%zz",       // matches the template, undecodable id
		"demo://notes/welcome/x", // does not match the template
		"demo://elsewhere",
	}
	forEachVersion(t, nil, func(t *testing.T, cs *mcp.ClientSession) {
		for _, uri := range uris {
			t.Run(uri, func(t *testing.T) {
				_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				var werr *jsonrpc.Error
				if !errors.As(err, &werr) {
					t.Fatalf("ReadResource error = %v, want a JSON-RPC error", err)
				}
				if werr.Code != jsonrpc.CodeInvalidParams {
					t.Errorf("error code = %d, want %d (resource not found, SEP-2164)", werr.Code, jsonrpc.CodeInvalidParams)
				}
				var data struct{ URI string }
				if err := json.Unmarshal(werr.Data, &data); err != nil || data.URI != uri {
					t.Errorf("error data = %s, want the URI %q", werr.Data, uri)
				}
			})
		}
	})
}

func TestGetPrompt(t *testing.T) {
	tests := []struct {
		name     string
		args     map[string]string
		contains []string
	}{
		{"with language", map[string]string{"code": "func f() {}", "language": "Go"},
			[]string{"review this Go code", "```go\nfunc f() {}\n```"}},
		{"without language", map[string]string{"code": "x = 1\n"},
			[]string{"review this code", "```\nx = 1\n```"}},
		{"backticks in code", map[string]string{"code": "s := `a```b`", "language": "two words"},
			[]string{"review this two words code", "````\ns := `a```b`\n````"}},
	}
	forEachVersion(t, nil, func(t *testing.T, cs *mcp.ClientSession) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "review", Arguments: tc.args})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
					t.Fatalf("messages = %+v, want one user message", res.Messages)
				}
				tc2, ok := res.Messages[0].Content.(*mcp.TextContent)
				if !ok {
					t.Fatalf("content is %T, want text", res.Messages[0].Content)
				}
				for _, want := range tc.contains {
					if !strings.Contains(tc2.Text, want) {
						t.Errorf("prompt text %q does not contain %q", tc2.Text, want)
					}
				}
			})
		}
		t.Run("missing code", func(t *testing.T) {
			_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"language": "go"}})
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("GetPrompt without code: error %v, want invalid params", err)
			}
		})
	})
}

// TestConcurrentCalls runs many calls at once on one session, for -race.
func TestConcurrentCalls(t *testing.T) {
	calls := []*mcp.CallToolParams{
		{Name: "echo", Arguments: map[string]any{"text": "x"}},
		{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}},
		{Name: "weather", Arguments: map[string]any{"city": "Rome"}},
		{Name: "image"},
		{Name: "slow", Arguments: map[string]any{"steps": 2, "delay_ms": 1}},
	}
	forEachVersion(t, nil, func(t *testing.T, cs *mcp.ClientSession) {
		var wg sync.WaitGroup
		for i := range 8 * len(calls) {
			wg.Go(func() {
				params := *calls[i%len(calls)] // CallTool sets fields of its params
				res, err := cs.CallTool(t.Context(), &params)
				if err != nil {
					t.Errorf("%s: %v", params.Name, err)
				} else if res.IsError {
					t.Errorf("%s: tool error %s", params.Name, contentText(res))
				}
			})
		}
		wg.Wait()
	})
}
