package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// parseDoc builds a configuration from a whole document through the real
// parser.
func parseDoc(t testing.TB, doc map[string]any) *config.Config {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data, "test.json", &config.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func modelToolNames(h *host.Host) []string {
	var out []string
	for _, t := range h.ModelTools() {
		out = append(out, t.Name)
	}
	return out
}

var capabilityTools = []string{host.GetPromptTool, host.ListPrompts, host.ListTemplates, host.ListResources, host.ReadResourceTool}

// searched reads tool_search's answer: the names of the tools it found,
// best first, and the held tools it names, as "NAME (server SERVER)".
func searched(t *testing.T, res *host.Result) (found, held []string) {
	t.Helper()
	lines := strings.Split(res.Text, "\n")
	if len(lines) == 0 || !strings.Contains(lines[0], " for ") {
		t.Fatalf("%s: not a search answer:\n%s", res.Tool, res.Text)
	}
	for _, l := range lines[1:] {
		if rest, ok := strings.CutPrefix(l, "Held for review, not callable for now: "); ok {
			held = strings.Split(rest, ", ")
			continue
		}
		if strings.HasPrefix(l, "Little of the request is in any tool here.") {
			continue
		}
		if l != "" && !strings.HasPrefix(l, " ") {
			name, _, ok := strings.Cut(l, "(")
			if !ok {
				t.Fatalf("%s: a tool line without a signature: %q", res.Tool, l)
			}
			found = append(found, name)
		}
	}
	return found, held
}

// structured decodes a built-in tool's structuredContent.
func structured(t *testing.T, res *host.Result, v any) {
	t.Helper()
	var r struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(res.Raw, &r); err != nil || json.Unmarshal(r.StructuredContent, v) != nil {
		t.Fatalf("%s: result %s does not decode", res.Tool, res.Raw)
	}
}

// readSpilled checks that res is a spilled result (a preview and a notice)
// and returns the whole stored text, read page by page with
// mcp_read_resource.
func readSpilled(t *testing.T, h *host.Host, res *host.Result) string {
	t.Helper()
	var r struct {
		Content []struct{ Text string } `json:"content"`
		Meta    map[string]struct {
			ID    string `json:"id"`
			Bytes int    `json:"bytes"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(res.Raw, &r); err != nil {
		t.Fatal(err)
	}
	spill, ok := r.Meta[host.SpillMetaKey]
	if !ok || len(r.Content) != 2 || !strings.Contains(r.Content[1].Text, spill.ID) || !strings.Contains(r.Content[1].Text, host.ReadResourceTool) {
		t.Fatalf("%s: not a spilled result: %.300s", res.Tool, res.Raw)
	}
	var whole strings.Builder
	cursor := ""
	for pages := 0; ; pages++ {
		args, _ := json.Marshal(map[string]string{"id": spill.ID, "cursor": cursor})
		page, err := h.Call(context.Background(), host.ReadResourceTool, args, nil)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		var p struct {
			Content []struct{ Text string } `json:"content"`
			Meta    map[string]struct {
				NextCursor string `json:"nextCursor"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal(page.Raw, &p); err != nil || len(p.Content) != 2 {
			t.Fatalf("page %d: %.300s", pages, page.Raw)
		}
		if pages == 0 && !strings.HasPrefix(p.Content[0].Text, r.Content[0].Text) {
			t.Errorf("the preview is not the start of the stored text")
		}
		whole.WriteString(p.Content[0].Text)
		if cursor = p.Meta[host.PageMetaKey].NextCursor; cursor == "" {
			break
		}
	}
	if whole.Len() != spill.Bytes {
		t.Errorf("read %d bytes, the result said %d", whole.Len(), spill.Bytes)
	}
	return whole.String()
}

// TestCapabilityTools: the capability tools appear while a healthy server
// offers resources or prompts and go away with it; their IDs round-trip,
// colon server names included; naming a server that cannot take requests
// fails without a request.
func TestCapabilityTools(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(dead.Close)
	servers := map[string]any{
		"a":     child(t, testkit.ModeServer, map[string]any{"prefix": "a"}),
		"a:b":   child(t, testkit.ModeServer, map[string]any{"prefix": "ab"}),
		"dead":  map[string]any{"url": dead.URL, "trust": "trusted", "startupAttempts": 1},
		"never": child(t, testkit.ModeServer, map[string]any{"enabled": false}),
	}
	var changes atomic.Int64
	h := openWith(t, parseDoc(t, map[string]any{"mcpServers": servers}),
		&host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, OnChange: func() { changes.Add(1) }})

	names := modelToolNames(h)
	for _, want := range capabilityTools {
		if !slices.Contains(names, want) {
			t.Errorf("ModelTools lacks %s: %v", want, names)
		}
	}
	if slices.Contains(names, host.ToolSearch) {
		t.Errorf("tool_search listed with nothing deferred")
	}

	t.Run("resources round trip", func(t *testing.T) {
		var list struct {
			Resources []host.Resource `json:"resources"`
		}
		structured(t, call(t, h, host.ListResources, `{}`), &list)
		var ids []string
		for _, r := range list.Resources {
			ids = append(ids, r.ID)
		}
		if !slices.Equal(ids, []string{"a:b:test://static", "a:test://static"}) {
			t.Fatalf("resource IDs = %v", ids)
		}
		for _, id := range ids {
			res := call(t, h, host.ReadResourceTool, `{"id":`+strconvQuote(id)+`}`)
			if res.IsError || !strings.Contains(res.Text, "static") {
				t.Errorf("read %s = %q", id, res.Text)
			}
		}
		structured(t, call(t, h, host.ListResources, `{"server":"a:b"}`), &list)
		if len(list.Resources) != 1 || list.Resources[0].Server != "a:b" {
			t.Errorf("server filter: %+v", list.Resources)
		}
	})
	t.Run("template filled in its ID", func(t *testing.T) {
		var list struct {
			Templates []host.Template `json:"resourceTemplates"`
		}
		structured(t, call(t, h, host.ListTemplates, `{"server":"a:b"}`), &list)
		if len(list.Templates) != 1 || list.Templates[0].ID != "a:b:test://items/{id}" || list.Templates[0].URITemplate != "test://items/{id}" {
			t.Fatalf("templates = %+v", list.Templates)
		}
		id := strings.Replace(list.Templates[0].ID, "{id}", "42", 1)
		if res := call(t, h, host.ReadResourceTool, `{"id":`+strconvQuote(id)+`}`); !strings.Contains(res.Text, "42") {
			t.Errorf("read %s = %q", id, res.Text)
		}
	})
	t.Run("prompts round trip", func(t *testing.T) {
		var list struct {
			Prompts []struct{ ID, Server string } `json:"prompts"`
		}
		structured(t, call(t, h, host.ListPrompts, `{}`), &list)
		if len(list.Prompts) != 2 || list.Prompts[0].ID != "a:b:greet" {
			t.Fatalf("prompts = %+v", list.Prompts)
		}
		res := call(t, h, host.GetPromptTool, `{"id":"a:b:greet","arguments":{"name":"Ada"}}`)
		if !strings.Contains(res.Text, "Ada") {
			t.Errorf("prompt = %q", res.Text)
		}
	})
	t.Run("errors", func(t *testing.T) {
		before := hits.Load()
		tests := []struct {
			tool, args string
			code       fault.Code
		}{
			{host.ReadResourceTool, `{"id":"dead:test://static"}`, fault.CodeUnavailable},
			{host.ReadResourceTool, `{"id":"never:test://static"}`, fault.CodeUnavailable},
			{host.GetPromptTool, `{"id":"dead:greet"}`, fault.CodeUnavailable},
			{host.ReadResourceTool, `{"id":"nosuch:test://static"}`, fault.CodeNotFound},
			{host.ReadResourceTool, `{}`, fault.CodeInvalidInput},
			{host.ReadResourceTool, `{"id":"a:test://static","extra":1}`, fault.CodeInvalidInput},
			{host.ListResources, `{"server":"nosuch"}`, fault.CodeInvalidInput},
			{host.ListResources, `{"cursor":"not-a-cursor"}`, fault.CodeInvalidInput},
			{host.ListResources, `{"server":"dead"}`, fault.CodeUnavailable},
			{host.ListPrompts, `{"server":"never"}`, fault.CodeUnavailable},
			{host.ReadResourceTool, `{"id":"switchboard:spill/00000000000000000000000000000000"}`, fault.CodeNotFound},
		}
		for _, tt := range tests {
			_, err := h.Call(context.Background(), tt.tool, json.RawMessage(tt.args), nil)
			if got := fault.CodeOf(err); got != tt.code {
				t.Errorf("%s %s: %v (code %q), want %s", tt.tool, tt.args, err, got, tt.code)
			}
		}
		if n := hits.Load() - before; n != 0 {
			t.Errorf("the unavailable server got %d requests", n)
		}
	})
	t.Run("gone with the servers", func(t *testing.T) {
		next := parseDoc(t, map[string]any{"mcpServers": map[string]any{
			"a": child(t, testkit.ModeServer, map[string]any{"prefix": "a", "enabled": false}),
		}})
		before := changes.Load()
		if err := h.Reload(context.Background(), next); err != nil {
			t.Fatal(err)
		}
		for _, name := range modelToolNames(h) {
			if slices.Contains(capabilityTools, name) {
				t.Errorf("%s still listed with no healthy server", name)
			}
		}
		if _, err := h.Call(context.Background(), host.ListResources, json.RawMessage(`{}`), nil); !errors.Is(err, host.ErrNotFound) {
			t.Errorf("calling a removed capability tool: %v", err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for changes.Load() == before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if changes.Load() == before {
			t.Error("OnChange was not called")
		}
	})
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCapabilityToolsOff: "capabilityTools": false lists none.
func TestCapabilityToolsOff(t *testing.T) {
	t.Parallel()
	h := open(t, parseDoc(t, map[string]any{
		"context":    map[string]any{"capabilityTools": false},
		"mcpServers": map[string]any{"s": child(t, testkit.ModeServer, nil)},
	}))
	for _, name := range modelToolNames(h) {
		if slices.Contains(capabilityTools, name) {
			t.Errorf("%s listed with capabilityTools off", name)
		}
	}
}

// TestDeferredTools: deferred tools are not listed but for alwaysInclude;
// tool_search returns full definitions and lists what it found.
func TestDeferredTools(t *testing.T) {
	t.Parallel()
	var changes atomic.Int64
	h := openWith(t, parseDoc(t, map[string]any{
		"context": map[string]any{"deferTools": true, "alwaysInclude": []string{"s__echo"}, "capabilityTools": false},
		"mcpServers": map[string]any{
			"s":    child(t, testkit.ModeServer, nil),
			"keep": child(t, testkit.ModeServer, map[string]any{"deferTools": false}),
		},
	}), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, OnChange: func() { changes.Add(1) }})

	names := modelToolNames(h)
	if !slices.Contains(names, "s__echo") || !slices.Contains(names, host.ToolSearch) || !slices.Contains(names, "keep__big") || slices.Contains(names, "s__big") {
		t.Fatalf("ModelTools = %v", names)
	}
	deferred := 0
	for _, tool := range h.Tools() {
		if tool.Deferred {
			deferred++
			if !strings.HasPrefix(tool.Name, "s__") || tool.Name == "s__echo" {
				t.Errorf("%s marked deferred", tool.Name)
			}
		}
	}
	if deferred == 0 {
		t.Fatal("no tool marked deferred")
	}
	// A deferred tool is callable through the Go API all along.
	if res := call(t, h, "s__big", `{"bytes":3}`); res.Text != "bbb" {
		t.Errorf("deferred call = %q", res.Text)
	}

	before := changes.Load()
	got, _ := searched(t, call(t, h, host.ToolSearch, `{"query":"large text result","k":3}`))
	if len(got) == 0 || len(got) > 3 {
		t.Fatalf("search found %d tools", len(got))
	}
	if !slices.Contains(got, "s__big") {
		t.Errorf("search for a large text result found %v", got)
	}
	// Its whole definition, by tool_describe.
	var def struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal([]byte(call(t, h, host.DescribeTool, `{"name":"s__big"}`).Text), &def); err != nil || def.Name != "s__big" || def.Description == "" || !strings.Contains(string(def.InputSchema), `"bytes"`) {
		t.Errorf("tool_describe s__big: %+v %v", def, err)
	}
	// One server's tools only.
	only, _ := searched(t, call(t, h, host.ToolSearch, `{"query":"large text result","server":"keep"}`))
	for _, n := range only {
		if !strings.HasPrefix(n, "keep__") {
			t.Errorf("a search of server keep found %s", n)
		}
	}
	if _, err := h.Call(context.Background(), host.ToolSearch, json.RawMessage(`{"query":"x","server":"kep"}`), nil); fault.CodeOf(err) != fault.CodeInvalidInput || !strings.Contains(err.Error(), `did you mean "keep"`) {
		t.Errorf("a search of an unknown server: %v", err)
	}
	if !slices.Contains(modelToolNames(h), "s__big") {
		t.Error("a found tool is not listed")
	}
	deadline := time.Now().Add(5 * time.Second)
	for changes.Load() == before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if changes.Load() == before {
		t.Error("OnChange was not called after tools were found")
	}
	if _, err := h.Call(context.Background(), host.ToolSearch, json.RawMessage(`{"query":"  "}`), nil); fault.CodeOf(err) != fault.CodeInvalidInput {
		t.Errorf("empty query: %v", err)
	}
}

// TestSpill: a result longer than spillBytes becomes a preview and an ID
// whose pages together are the whole text; KeepWhole and "spill": false
// keep the old behaviour (cut at resultTextMaxBytes, with a marker).
func TestSpill(t *testing.T) {
	t.Parallel()
	h := open(t, parseDoc(t, map[string]any{
		"context":    map[string]any{"spillBytes": 50000},
		"mcpServers": map[string]any{"s": child(t, testkit.ModeServer, nil)},
	}))
	if res := call(t, h, "s__big", `{"bytes":40000}`); res.Text != strings.Repeat("b", 40000) {
		t.Errorf("a result under the threshold changed: %d bytes", len(res.Text))
	}
	res := call(t, h, "s__big", `{"bytes":300000}`)
	if len(res.Raw) > 50000 {
		t.Errorf("spilled result is %d bytes", len(res.Raw))
	}
	if whole := readSpilled(t, h, res); whole != strings.Repeat("b", 300000) {
		t.Errorf("stored text: %d bytes", len(whole))
	}
	res, err := h.Call(context.Background(), "s__big", json.RawMessage(`{"bytes":300000}`), &host.CallOptions{KeepWhole: true})
	if err != nil || !strings.HasSuffix(res.Text, "[switchboard: result truncated: 300000 bytes, showing the first 102328]") {
		t.Errorf("KeepWhole: %v, %d bytes", err, len(res.Text))
	}

	// Whatever the guard would cut is spilled instead: the threshold is
	// at most security.resultTextMaxBytes.
	small := open(t, parseDoc(t, map[string]any{
		"security":   map[string]any{"resultTextMaxBytes": 8192},
		"mcpServers": map[string]any{"s": child(t, testkit.ModeServer, nil)},
	}))
	if whole := readSpilled(t, small, call(t, small, "s__big", `{"bytes":50000}`)); len(whole) != 50000 {
		t.Errorf("resultTextMaxBytes 8192: stored %d bytes", len(whole))
	}

	off := open(t, parseDoc(t, map[string]any{
		"context":    map[string]any{"spill": false},
		"mcpServers": map[string]any{"s": child(t, testkit.ModeServer, nil)},
	}))
	if res := call(t, off, "s__big", `{"bytes":300000}`); !strings.HasSuffix(res.Text, "showing the first 102328]") {
		t.Errorf("spill off: %d bytes", len(res.Text))
	}
}

// TestInstructions: published per server once discovered, not for a
// disabled one.
func TestInstructions(t *testing.T) {
	t.Parallel()
	h := open(t, parse(t, map[string]any{
		"s":   child(t, testkit.ModeServer, nil),
		"off": child(t, testkit.ModeServer, map[string]any{"enabled": false}),
	}, nil))
	got := h.Instructions()
	for _, in := range got {
		if in.Server == "off" {
			t.Errorf("a disabled server's instructions: %+v", in)
		}
	}
	want := []host.ServerInstructions{{Server: "s", Text: "Test server. Use echo to echo."}}
	if !slices.Equal(got, want) {
		t.Errorf("Instructions = %+v, want %+v", got, want)
	}
}

// TestProviderTools: the model's tools converted for each provider, and a
// provider-side call mapped back to the original tool and arguments (a
// name Gemini rejects, with a leading digit, included).
func TestProviderTools(t *testing.T) {
	t.Parallel()
	h := open(t, parse(t, map[string]any{"s": child(t, testkit.ModeServer, map[string]any{"prefix": "9s"})}, nil))
	for _, format := range host.Formats() {
		t.Run(format, func(t *testing.T) {
			p, err := h.ProviderTools(format)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Tools) != len(h.ModelTools()) || !json.Valid(p.JSON()) {
				t.Fatalf("%d tools for %d", len(p.Tools), len(h.ModelTools()))
			}
			// Find echo under whatever name the provider got.
			name := ""
			for _, raw := range p.Tools {
				var d struct {
					Name     string `json:"name"`
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				}
				json.Unmarshal(raw, &d)
				if n := d.Name + d.Function.Name; strings.Contains(n, "echo") {
					name = n
				}
			}
			if name == "" {
				t.Fatalf("no echo tool in %s", p.JSON())
			}
			if format == "gemini" && name == "9s__echo" {
				t.Errorf("gemini kept a name with a leading digit")
			}
			res, err := p.Call(context.Background(), name, json.RawMessage(`{"text":"via `+format+`"}`), nil)
			if err != nil || res.Text != "via "+format {
				t.Errorf("call %s: %v %v", name, res, err)
			}
		})
	}
	if _, err := h.ProviderTools("openia"); !errors.Is(err, host.ErrInvalidParams) {
		t.Errorf("unknown format: %v", err)
	}
	p, _ := h.ProviderTools("openai")
	if _, err := p.Call(context.Background(), "nosuch", nil, nil); !errors.Is(err, host.ErrNotFound) {
		t.Errorf("unknown provider-side name: %v", err)
	}
	for _, tool := range h.ModelTools() {
		if n := tool.Tokens(); n <= 0 || n > 2000 {
			t.Errorf("%s: %d tokens", tool.Name, n)
		}
	}
}

// TestSpillWithoutResources: with no server offering resources, or the
// capability tools off, a spilled result can still be read:
// mcp_read_resource is listed from the first spill on.
func TestSpillWithoutResources(t *testing.T) {
	t.Parallel()
	var changes atomic.Int64
	h := openWith(t, parseDoc(t, map[string]any{
		"context":    map[string]any{"capabilityTools": false},
		"mcpServers": map[string]any{"s": child(t, testkit.ModeServer, nil)},
	}), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, OnChange: func() { changes.Add(1) }})
	if slices.Contains(modelToolNames(h), host.ReadResourceTool) {
		t.Fatal("mcp_read_resource listed with capabilityTools off and nothing spilled")
	}
	res := call(t, h, "s__big", `{"bytes":200000}`)
	if !slices.Contains(modelToolNames(h), host.ReadResourceTool) {
		t.Fatal("mcp_read_resource not listed after a spill")
	}
	if whole := readSpilled(t, h, res); len(whole) != 200000 {
		t.Errorf("stored %d bytes", len(whole))
	}
	if slices.Contains(modelToolNames(h), host.ListResources) {
		t.Error("the other capability tools came with it")
	}
}

// structuredServer serves one tool with an output schema whose result is
// large, as Streamable HTTP on loopback.
func structuredServer(t *testing.T) string {
	t.Helper()
	type item struct {
		N    int    `json:"n"`
		Name string `json:"name"`
	}
	type out struct {
		Items []item `json:"items"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "structured", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "items", Description: "Many items."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, out, error) {
		var o out
		for i := range 3000 {
			o.Items = append(o.Items, item{i, fmt.Sprintf("item number %d", i)})
		}
		return nil, o, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestSpillKeepsStructuredContent: a tool that declares an output schema
// must return structuredContent; a spilled result keeps it (clients
// reject a result without it).
func TestSpillKeepsStructuredContent(t *testing.T) {
	t.Parallel()
	h := open(t, parseDoc(t, map[string]any{
		"context":    map[string]any{"spillBytes": 16384},
		"mcpServers": map[string]any{"st": map[string]any{"url": structuredServer(t), "trust": "trusted"}},
	}))
	res := call(t, h, "st__items", `{}`)
	var r struct {
		StructuredContent struct {
			Items []json.RawMessage `json:"items"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(res.Raw, &r); err != nil || len(r.StructuredContent.Items) != 3000 {
		t.Fatalf("structuredContent has %d items (%v)", len(r.StructuredContent.Items), err)
	}
	if whole := readSpilled(t, h, res); !strings.Contains(whole, "item number 2999") {
		t.Errorf("the stored text lacks the end: %d bytes", len(whole))
	}
}

// TestBuiltinsUnderPolicy: reads through the capability tools are decided
// by the policy as "<server>:resources/read" and "<server>:prompts/get",
// and count against the quota.
func TestBuiltinsUnderPolicy(t *testing.T) {
	t.Parallel()
	h := open(t, parseDoc(t, map[string]any{
		"policy": map[string]any{"default": "deny", "rules": []any{
			map[string]any{"allow": "a:resources/read"}, map[string]any{"allow": "*:prompts/get"},
		}, "quota": map[string]any{"calls": 3, "perMs": 60000}},
		"mcpServers": map[string]any{
			"a": child(t, testkit.ModeServer, nil),
			"b": child(t, testkit.ModeServer, nil),
		},
	}))
	tests := []struct {
		tool, args string
		code       fault.Code // "" means success
	}{
		{host.ReadResourceTool, `{"id":"a:test://static"}`, ""},
		{host.ReadResourceTool, `{"id":"b:test://static"}`, fault.CodePolicyBlocked},
		{host.GetPromptTool, `{"id":"b:greet","arguments":{"name":"x"}}`, ""},
		{host.ListResources, `{}`, ""}, // the catalogue, no request: not a call
		{host.GetPromptTool, `{"id":"a:greet","arguments":{"name":"x"}}`, ""},
		{host.ReadResourceTool, `{"id":"a:test://static"}`, fault.CodeRateLimited}, // the 4th request
	}
	for i, tt := range tests {
		_, err := h.Call(context.Background(), tt.tool, json.RawMessage(tt.args), nil)
		if got := fault.CodeOf(err); got != tt.code {
			t.Errorf("%d: %s %s: %v, want code %q", i, tt.tool, tt.args, err, tt.code)
		}
		if fe := (*fault.Error)(nil); tt.code != "" && (!errors.As(err, &fe) || fe.Op != "resources/read") {
			t.Errorf("%d: %s %s: %#v, want the operation resources/read", i, tt.tool, tt.args, fe)
		}
	}
}

// TestCapabilityToolsNeedAHealthyServer: a server that failed to start
// opens no gate.
func TestCapabilityToolsNeedAHealthyServer(t *testing.T) {
	t.Parallel()
	h := open(t, parse(t, map[string]any{"broken": child(t, testkit.ModeExit, map[string]any{"startupAttempts": 1})}, nil))
	for _, name := range modelToolNames(h) {
		if slices.Contains(capabilityTools, name) {
			t.Errorf("%s listed with no healthy server", name)
		}
	}
}

// TestCapabilityToolsPaging: 120 resources come in pages of 50 through
// mcp_list_resources, each once, with nextCursor passed back verbatim.
func TestCapabilityToolsPaging(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, nil)
	for i := range 120 {
		uri := fmt.Sprintf("many://r/%03d", i)
		s.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "content of " + uri}}}, nil
		})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	h := open(t, parse(t, map[string]any{"many": map[string]any{"url": srv.URL, "trust": "trusted"}}, nil))

	seen := map[string]bool{}
	var sizes []int
	cursor := ""
	for range 10 {
		args, _ := json.Marshal(map[string]string{"cursor": cursor})
		var page struct {
			Resources  []host.Resource `json:"resources"`
			NextCursor string          `json:"nextCursor"`
		}
		structured(t, call(t, h, host.ListResources, string(args)), &page)
		sizes = append(sizes, len(page.Resources))
		for _, r := range page.Resources {
			if seen[r.ID] {
				t.Errorf("%s twice", r.ID)
			}
			seen[r.ID] = true
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if !slices.Equal(sizes, []int{50, 50, 20}) || len(seen) != 120 {
		t.Errorf("pages %v, %d distinct", sizes, len(seen))
	}
	if res := call(t, h, host.ReadResourceTool, `{"id":"many:many://r/119"}`); res.Text != "content of many://r/119" {
		t.Errorf("read = %q", res.Text)
	}
}
