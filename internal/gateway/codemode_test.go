package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// TestCodeRunThroughTheGateway: a client is listed code_run with its
// declarations, runs a script whose calls reach the upstreams, gets a
// script's own failure as an isError answer and a limit as an isError
// answer with its fault code.
func TestCodeRunThroughTheGateway(t *testing.T) {
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
