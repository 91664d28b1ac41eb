package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestCodeRunThroughTheGateway: a client is listed code_run with its
// declarations, runs a script whose calls reach the upstreams, gets a
// script's own failure as an isError answer and a limit as an isError
// answer with its fault code.
func TestCodeRunThroughTheGateway(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, nil, map[string]any{"context": map[string]any{"codeMode": map[string]any{"enabled": true, "calls": 3, "cpuMs": 60000}}})
	cs, _ := f.connect(t, "")
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var desc string
	for _, tl := range list.Tools {
		if tl.Name == host.CodeTool {
			desc = tl.Description
		}
	}
	if !strings.Contains(desc, "declare namespace s {") || !strings.Contains(desc, "declare namespace web {") {
		t.Fatalf("code_run's description:\n%s", desc)
	}
	for _, tc := range []struct {
		name, script, want, code string
		isError                  bool
	}{
		{"calls", `return [await s.echo({text: "a"}), await web.echo({text: "b"})].join("+")`, "a+b", "", false},
		{"throws", `null.x`, "TypeError", "", true},
		{"call limit", `for (;;) await s.echo({text: "x"})`, "call_limit", "too_large", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: host.CodeTool, Arguments: map[string]any{"script": tc.script}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tc.isError || !strings.Contains(text(t, res), tc.want) || errorCode(res) != tc.code {
				t.Errorf("isError %v, code %q, text %q", res.IsError, errorCode(res), text(t, res))
			}
		})
	}
}

// TestCodeRunHeldCallURLElicitationRequired: a script's call held for a
// person's approval reaches a 2026-07-28 client as -32042 naming the
// approval view, as a direct call's does; the script run again after the
// person approved makes the call.
func TestCodeRunHeldCallURLElicitationRequired(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	cfg := parseDoc(t, map[string]any{
		"context":    map[string]any{"codeMode": map[string]any{"enabled": true, "cpuMs": 60000}},
		"mcpServers": map[string]any{"s": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer), "trust": "trusted"}},
		"policy":     map[string]any{"approve": map[string]any{"tools": []string{"s:echo"}}},
	}, nil)
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, syncs := openHost(t, cfg, *hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond, Forward: true}, st))
	g := gateway.New(h, &gateway.Options{Version: "test"})
	syncs(g)
	g.SetApprovalPage(approvalPage)
	cs := inMemory(t, g, &mcp.ClientOptions{Capabilities: urlCaps}, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	params := func() *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: host.CodeTool, Arguments: map[string]any{"script": `return await s.echo({text: "ship it"})`}}
	}
	_, err = cs.CallTool(ctx, params())
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeURLElicitationRequired {
		t.Fatalf("code_run: %v; want -32042", err)
	}
	var d struct{ Elicitations []*mcp.ElicitParams }
	if err := json.Unmarshal(rpc.Data, &d); err != nil || len(d.Elicitations) != 1 {
		t.Fatalf("error data %s: %v", rpc.Data, err)
	}
	id, ok := strings.CutPrefix(d.Elicitations[0].URL, approvalPage)
	if !ok {
		t.Fatalf("elicitation = %+v", d.Elicitations[0])
	}
	if _, err := h.DecideCall(ctx, id, true, "ui:operator"); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, params())
	if err != nil || res.IsError || text(t, res) != "ship it" {
		t.Fatalf("code_run after the approval = %+v, %v", res, err)
	}
}
