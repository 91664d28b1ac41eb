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
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

const approvalPage = "http://127.0.0.1:1/ui/approvals/"

// approvalGateway is a gateway over the test server "s", whose echo tool
// policy.approve holds, with a store and the status page's approval view.
func approvalGateway(t *testing.T) (*gateway.Gateway, *host.Host) {
	t.Helper()
	exe, _ := os.Executable()
	cfg := parseDoc(t, map[string]any{
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
	return g, h
}

// echoParams are the held call's; fresh each time, since a client writes
// its own _meta into them.
func echoParams() *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "s__echo", Arguments: map[string]any{"text": "ship it"}}
}

// TestHeldCallURLElicitation: a 2025 client that declared URL-mode
// elicitation is sent the status page's view of the held call; once the
// person has approved it there, the call goes on and returns its result.
func TestHeldCallURLElicitation(t *testing.T) {
	t.Parallel()
	g, h := approvalGateway(t)
	var asked string
	cs := inMemory(t, g, &mcp.ClientOptions{
		Capabilities: urlCaps,
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = req.Params.URL
			id, ok := strings.CutPrefix(req.Params.URL, approvalPage)
			if req.Params.Mode != "url" || !ok {
				t.Errorf("elicitation = %+v", req.Params)
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			// The person approves on the page, after the client has
			// accepted to open it.
			go func() {
				if _, err := h.DecideCall(context.Background(), id, true, "ui:operator"); err != nil {
					t.Error(err)
				}
			}()
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}, "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, echoParams())
	if err != nil || res.IsError || !strings.Contains(text(t, res), "ship it") {
		t.Fatalf("call = %+v, %v", res, err)
	}
	if asked == "" {
		t.Error("the client was not asked")
	}
}

// TestHeldCallURLElicitationRequired: a 2026-07-28 client gets -32042
// naming the approval view; called again after the person approved, the
// call goes through.
func TestHeldCallURLElicitationRequired(t *testing.T) {
	t.Parallel()
	g, h := approvalGateway(t)
	cs := inMemory(t, g, &mcp.ClientOptions{Capabilities: urlCaps}, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := cs.CallTool(ctx, echoParams())
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeURLElicitationRequired {
		t.Fatalf("call: %v; want -32042", err)
	}
	var data struct{ Elicitations []*mcp.ElicitParams }
	if err := json.Unmarshal(rpc.Data, &data); err != nil || len(data.Elicitations) != 1 {
		t.Fatalf("error data %s: %v", rpc.Data, err)
	}
	id, ok := strings.CutPrefix(data.Elicitations[0].URL, approvalPage)
	if !ok || data.Elicitations[0].Mode != "url" {
		t.Fatalf("elicitation = %+v", data.Elicitations[0])
	}
	if _, err := h.DecideCall(ctx, id, true, "ui:operator"); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, echoParams())
	if err != nil || res.IsError || !strings.Contains(text(t, res), "ship it") {
		t.Fatalf("call after the approval = %+v, %v", res, err)
	}
}

// TestHeldCallWithoutURLElicitation: a client that cannot open the page
// gets the isError result approval_required, which does not carry the
// held call's ID; a denial then reads approval_denied.
func TestHeldCallWithoutURLElicitation(t *testing.T) {
	t.Parallel()
	g, h := approvalGateway(t)
	cs := inMemory(t, g, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}, "2025-11-25")
	ctx := context.Background()
	res, err := cs.CallTool(ctx, echoParams())
	if err != nil || !res.IsError {
		t.Fatalf("call = %+v, %v; want an isError result", res, err)
	}
	m, _ := res.Meta[gateway.ErrorMetaKey].(map[string]any)
	if m["code"] != "approval_required" {
		t.Errorf("_meta = %v, want approval_required", m)
	}
	held, err := h.HeldCalls(ctx, store.ApprovalPending)
	if err != nil || len(held) != 1 {
		t.Fatalf("held = %v, %v", held, err)
	}
	if txt := text(t, res); strings.Contains(txt, held[0].ID) || strings.Contains(txt, "approve-call") {
		t.Errorf("the model is told how to release the call: %q", txt)
	}
	if _, err := h.DecideCall(ctx, held[0].ID, false, "cli:alice"); err != nil {
		t.Fatal(err)
	}
	res, err = cs.CallTool(ctx, echoParams())
	if m, _ := res.Meta[gateway.ErrorMetaKey].(map[string]any); err != nil || m["code"] != "approval_denied" {
		t.Errorf("denied call = %+v, %v", res, err)
	}
}
