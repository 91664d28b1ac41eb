package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// rawClient speaks to a gateway in raw JSON-RPC messages over an in-memory
// connection, to see results as a client's transport sees them.
type rawClient struct {
	t    *testing.T
	conn mcp.Connection
	next int64
}

func newRawClient(t *testing.T, g *gateway.Gateway) *rawClient {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawClient{t: t, conn: conn}
}

// call sends a request and returns its response.
func (c *rawClient) call(method string, params any) *jsonrpc.Response {
	c.t.Helper()
	ctx := context.Background()
	c.next++
	p, _ := json.Marshal(params)
	id, _ := jsonrpc.MakeID(float64(c.next))
	if err := c.conn.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: p}); err != nil {
		c.t.Fatal(err)
	}
	for {
		msg, err := c.conn.Read(ctx)
		if err != nil {
			c.t.Fatal(err)
		}
		if r, ok := msg.(*jsonrpc.Response); ok && r.ID == id {
			return r
		}
	}
}

// result is call for a request that must succeed.
func (c *rawClient) result(method string, params any) json.RawMessage {
	c.t.Helper()
	r := c.call(method, params)
	if r.Error != nil {
		c.t.Fatalf("%s: %v", method, r.Error)
	}
	return r.Result
}

// initialize makes c a legacy session.
func (c *rawClient) initialize() {
	c.t.Helper()
	c.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "raw", "version": "1"}})
	if err := c.conn.Write(context.Background(), &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}); err != nil {
		c.t.Fatal(err)
	}
}

// modernMeta is the _meta of a 2026-07-28 request.
var modernMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
	"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
	"io.modelcontextprotocol/clientCapabilities": map[string]any{},
}

// TestResultsPassWhole: a tool result reaches the client with every member
// and content block the upstream sent, go-sdk types or not, in both eras;
// only a 2026-07-28 client gets a resultType, and the gateway's serverInfo.
func TestResultsPassWhole(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, map[string]any{
		"novel": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeLegacyNovel), "trust": "trusted"},
	})
	g := gateway.New(f.host, nil)
	modern := newRawClient(t, g).result("tools/call", map[string]any{"name": "novel__novel", "arguments": map[string]any{}, "_meta": modernMeta})
	c := newRawClient(t, g)
	c.initialize()
	legacy := c.result("tools/call", map[string]any{"name": "novel__novel", "arguments": map[string]any{}})

	for era, raw := range map[string]json.RawMessage{"2026-07-28": modern, "2025-11-25": legacy} {
		var res map[string]json.RawMessage
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatalf("%s: %s: %v", era, raw, err)
		}
		if !strings.Contains(string(res["content"]), `{"frames":3,"type":"hologram"}`) || string(res["futureField"]) != `{"kept":true}` {
			t.Errorf("%s: the result lost what the upstream sent: %s", era, raw)
		}
		rt, hasType := res["resultType"]
		if want := era == "2026-07-28"; hasType != want || hasType && string(rt) != `"complete"` {
			t.Errorf("%s: resultType %s (present %v), want it only on 2026-07-28, as complete", era, rt, hasType)
		}
		if era == "2026-07-28" && !strings.Contains(string(res["_meta"]), `"switchboard"`) {
			t.Errorf("%s: _meta %s does not name the gateway", era, res["_meta"])
		}
	}
}

// TestRefusedInitialize: an initialize that go-sdk refuses (here, after a
// 2026-07-28 request on the same connection) is answered with an error,
// and the gateway goes on serving.
func TestRefusedInitialize(t *testing.T) {
	t.Parallel()
	c := newRawClient(t, gateway.New(newFixture(t, nil).host, nil))
	c.result("tools/call", map[string]any{"name": "s__echo", "arguments": map[string]any{"text": "a"}, "_meta": modernMeta})
	if r := c.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "raw", "version": "1"}}); r.Error == nil {
		t.Errorf("initialize after a 2026-07-28 request: %s, want an error", r.Result)
	}
	res := c.result("tools/call", map[string]any{"name": "s__echo", "arguments": map[string]any{"text": "still here"}, "_meta": modernMeta})
	if !strings.Contains(string(res), "still here") {
		t.Errorf("after the refused initialize: %s", res)
	}
}
