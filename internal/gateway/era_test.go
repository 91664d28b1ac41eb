package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// askerVar makes the re-executed test binary serve asker (see
// maybeRunAsker).
const askerVar = "SWITCHBOARD_GATEWAY_TEST_ASKER"

// maybeRunAsker serves, when askerVar is set, a go-sdk server on stdio
// that speaks both eras and whose tools ask their client the legacy way,
// with server-to-client requests (req.Session.Elicit, CreateMessage,
// ListRoots), as go-sdk's own conformance server does. On a 2026-07-28
// connection go-sdk refuses to send them.
func maybeRunAsker() {
	if os.Getenv(askerVar) == "" {
		return
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	reply := func(format string, a ...any) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, a...)}}}, nil, nil
	}
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the user's name (elicitation/create)."}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}},
		}})
		if err != nil {
			return nil, nil, err
		}
		name, _ := r.Content["name"].(string)
		return reply("%s: %s", r.Action, name)
	})
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Asks the client's model (sampling/createMessage)."}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		r, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 20,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "What is the capital of France?"}}}})
		if err != nil {
			return nil, nil, err
		}
		tc, _ := r.Content.(*mcp.TextContent)
		if tc == nil {
			return nil, nil, fmt.Errorf("no text from the model")
		}
		return reply("model said: %s", tc.Text)
	})
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "Lists the client's roots (roots/list)."}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		r, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, nil, err
		}
		var uris []string
		for _, root := range r.Roots {
			uris = append(uris, root.URI)
		}
		return reply("roots: %s", strings.Join(uris, ","))
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "asker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// asker is the configuration of an asker server, with extra members.
func asker(t *testing.T, extra map[string]any) map[string]any {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{"command": exe, "env": map[string]string{askerVar: "1"}}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// TestLegacyClientOfABothErasServer: a stdio server that speaks both eras
// is connected on 2026-07-28 (the default), and its tools ask the legacy
// way. A legacy client's calls reach it on a legacy connection, so its
// questions reach the client and the answers come back; a 2026-07-28
// client's calls keep to the 2026-07-28 connection.
func TestLegacyClientOfABothErasServer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]any{"both": asker(t, map[string]any{"trust": "trusted"}), "sm": modernStdio(t)})
	upstreamVersions(t, f.host, map[string]string{"both": "2026-07-28"})
	ctx := context.Background()
	// Two clients, each answering its own way: each is asked about its
	// own calls only.
	for _, c := range []struct{ version, name, model, root string }{
		{"2025-11-25", "Ada", "Paris", "file:///work"},
		{"2025-06-18", "Grace", "Rome", "file:///home"},
	} {
		version := c.version
		cs, asked := f.answering(t, version, c.name, c.model, c.root)
		for tool, want := range map[string]string{"ask": "accept: " + c.name, "sample": "model said: " + c.model, "roots": "roots: " + c.root} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "both__" + tool, Arguments: map[string]any{}})
			if err != nil || res.IsError || text(t, res) != want {
				t.Errorf("%s: both__%s: %q (isError %v), %v; want %q", version, tool, resText(t, res), res != nil && res.IsError, err, want)
			}
		}
		if shown := asked(); len(shown) != 1 || !strings.Contains(shown[0], `"both"`) {
			t.Errorf("%s: elicitations shown: %q; want one naming the server", version, shown)
		}
	}
	// A 2026-07-28 client is asked through the 2026-07-28 connection, by
	// a server asking in that era's way.
	cs, _ := f.answering(t, "", "Alan", "Oslo", "file:///m")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sm__ask", Arguments: map[string]any{}})
	if err != nil || res.IsError || text(t, res) != "accept: Alan" {
		t.Errorf("modern client, sm__ask: %q, %v", resText(t, res), err)
	}
	upstreamVersions(t, f.host, map[string]string{"both": "2026-07-28", "sm": "2026-07-28"})
}

func resText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil {
		return ""
	}
	return text(t, res)
}

// TestAbilityRefusalsEndToEnd: a server whose configuration does not allow
// elicitation or roots never reaches the client with them. A request that
// reaches Switchboard (roots/list on a legacy connection, which go-sdk's
// server sends whatever the client declared; an input request on
// 2026-07-28) is refused with the reason naming the server, its trust
// level and the setting that allows it; a legacy elicitation is refused by
// the server itself, since Switchboard did not declare elicitation to it.
// The same requests from trusted servers reach the client. Clients of both
// eras, through the gateway; servers asking with server-to-client requests
// (legacy connections) and with input requests (2026-07-28).
func TestAbilityRefusalsEndToEnd(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	kit := func(version, trust string, allow bool) map[string]any {
		m := map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer), "trust": trust, "protocolVersion": version}
		if !allow {
			m["elicitation"], m["roots"] = false, false
		}
		return m
	}
	f := newFixture(t, map[string]any{
		"tl": kit("2025-11-25", "trusted", true), "ul": kit("2025-11-25", "untrusted", false),
		"tm": kit("2026-07-28", "trusted", true), "um": kit("2026-07-28", "untrusted", false),
		// The legacy way of asking, from a server of both eras.
		"ta": asker(t, map[string]any{"trust": "trusted"}),
		"ua": asker(t, map[string]any{"elicitation": false, "roots": false, "protocolVersion": "2025-11-25"}),
	})
	reason := func(ability, server string) string {
		return fmt.Sprintf(`Switchboard does not forward %s requests from server %q (trust "untrusted"; set %q: true in its configuration to allow them)`, ability, server, ability)
	}
	ctx := context.Background()
	for _, client := range []struct{ name, version string }{{"legacy", "2025-11-25"}, {"modern", ""}} {
		cs, asked := f.answering(t, client.version, "Ada", "Paris", "file:///work")
		for _, c := range []struct {
			server, tool string
			refused      bool
			want         string
		}{
			{"tl", "ask", false, "accept: Ada"}, {"tl", "roots", false, "roots: file:///work"},
			{"tm", "ask", false, "accept: Ada"}, {"tm", "roots", false, "roots: file:///work"},
			{"ta", "ask", false, "accept: Ada"}, {"ta", "roots", false, "roots: file:///work"},
			{"ul", "ask", true, "client does not support elicitation"}, {"ul", "roots", true, reason("roots", "ul")},
			{"um", "ask", true, reason("elicitation", "um")}, {"um", "roots", true, reason("roots", "um")},
			{"ua", "ask", true, "client does not support elicitation"}, {"ua", "roots", true, reason("roots", "ua")},
		} {
			if c.server == "ta" && client.version == "" {
				// A 2026-07-28 client's calls keep to the 2026-07-28
				// connection, where go-sdk will not ask the legacy way.
				continue
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.server + "__" + c.tool, Arguments: map[string]any{}})
			got := resText(t, res)
			if err != nil {
				got = err.Error()
			}
			switch {
			case !c.refused && (err != nil || res.IsError || got != c.want):
				t.Errorf("%s client, %s__%s: %q, want %q", client.name, c.server, c.tool, got, c.want)
			case c.refused && (err == nil && !res.IsError || !strings.Contains(got, c.want)):
				t.Errorf("%s client, %s__%s: %q (isError %v), want a refusal saying %q", client.name, c.server, c.tool, got, res != nil && res.IsError, c.want)
			}
		}
		for _, shown := range asked() {
			if !strings.Contains(shown, `"tl"`) && !strings.Contains(shown, `"tm"`) && !strings.Contains(shown, `"ta"`) {
				t.Errorf("%s client was shown %q, from a server not allowed to ask", client.name, shown)
			}
		}
	}
}

// TestLegacySessionsGetNoModernFields: a legacy client's results carry
// none of the 2026-07-28 revision's fields (resultType, ttlMs, cacheScope)
// nor the protocol's _meta keys, whether go-sdk wrote them (the lists'
// cache fields) or a 2026-07-28 upstream did (web's prompt); a 2026-07-28
// client's do.
func TestLegacySessionsGetNoModernFields(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	modern := []string{`"resultType"`, `"ttlMs"`, `"cacheScope"`, `io.modelcontextprotocol/`}
	requests := []struct{ method, params string }{
		{"tools/list", `{}`},
		{"resources/list", `{}`},
		{"resources/templates/list", `{}`},
		{"prompts/list", `{}`},
		{"resources/read", `{"uri":"test://static"}`},
		{"prompts/get", `{"name":"web__greet","arguments":{"name":"Ada"}}`},
	}
	for _, version := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		session := f.rawInitialize(t, version)
		for i, r := range requests {
			body := f.rawPost(t, version, session, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+2, r.method, r.params))
			if !strings.Contains(body, `"result"`) {
				t.Errorf("%s %s: no result: %s", version, r.method, body)
			}
			for _, field := range modern {
				if strings.Contains(body, field) {
					t.Errorf("%s %s: the result has %s: %s", version, r.method, field, body)
				}
			}
		}
	}
	// The fields are there to leave out: a 2026-07-28 client gets them.
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	body := f.rawPost(t, "2026-07-28", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta+`}}`)
	for _, field := range []string{`"ttlMs"`, `"cacheScope"`, `"resultType"`} {
		if !strings.Contains(body, field) {
			t.Errorf("2026-07-28 tools/list lacks %s: %s", field, body)
		}
	}
}

// rawInitialize opens a legacy session with raw requests and returns its
// ID.
func (f *fixture) rawInitialize(t *testing.T, version string) string {
	t.Helper()
	resp := f.rawDo(t, version, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, version))
	id := resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close()
	if id == "" {
		t.Fatalf("%s: initialize gave no session", version)
	}
	f.rawPost(t, version, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return id
}

// rawPost posts one message and returns the response body as it came.
func (f *fixture) rawPost(t *testing.T, version, session, msg string) string {
	t.Helper()
	resp := f.rawDo(t, version, session, msg)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (f *fixture) rawDo(t *testing.T, version, session, msg string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", f.url, bytes.NewReader([]byte(msg)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", version)
	if method := jsonMethod(msg); version >= "2026-07-28" && method != "" {
		req.Header.Set("Mcp-Method", method)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("%s: HTTP %d: %s", msg, resp.StatusCode, b)
	}
	return resp
}

// jsonMethod returns the method of a JSON-RPC message, "" if none.
func jsonMethod(msg string) string {
	var m struct{ Method string }
	json.Unmarshal([]byte(msg), &m)
	return m.Method
}

// TestRootsOnlyOfClientsThatDeclareThem: a legacy server's roots/list
// during a call is put to the caller only when the caller declared roots;
// otherwise the server is refused and the call goes on (a 2026-07-28
// caller is not answered input_required for a question it cannot take).
func TestRootsOnlyOfClientsThatDeclareThem(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, map[string]any{
		"tl": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer), "trust": "trusted", "protocolVersion": "2025-11-25"},
	})
	ctx := context.Background()
	for _, client := range []struct{ name, version string }{{"legacy", "2025-11-25"}, {"modern", ""}} {
		c := mcp.NewClient(&mcp.Implementation{Name: "rootless", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
		cs := f.connectWith(t, c, client.version)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tl__roots", Arguments: map[string]any{}})
		switch {
		case err != nil:
			t.Errorf("%s client: %v", client.name, err)
		case len(res.InputRequests) > 0:
			t.Errorf("%s client was asked %v, having declared no roots", client.name, res.InputRequests)
		case !strings.Contains(resText(t, res), "did not declare roots"):
			t.Errorf("%s client: %q (isError %v), want the server refused for want of roots", client.name, resText(t, res), res.IsError)
		}
		cs.Close()
	}
}
