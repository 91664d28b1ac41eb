package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestApproveCallOnLiveGateway: with a gateway serving the home, a call
// policy.approve holds is put to a 2025 client's person by URL
// elicitation of the gateway's status page; approve-call, asking the
// gateway, releases it and the call returns its result. A client that
// cannot open the page reads approval_required; approve-call lists the
// call, deny-call denies it, and the call made again reads
// approval_denied. The audit log says who approved.
func TestApproveCallOnLiveGateway(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	exe, _ := os.Executable()
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	data, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"demo": map[string]any{"command": exe, "args": []string{"demo-server"}}},
		"policy":     map[string]any{"approve": map[string]any{"tools": []string{"demo:echo"}}},
	})
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	sb := func(args ...string) result {
		return run(t, append(args, "--config", cfgPath, "--home", home)...)
	}
	g := liveGateway(t, home, cfgPath)
	tok, err := os.ReadFile(filepath.Join(home, "token"))
	if err != nil {
		t.Fatal(err)
	}
	rt := bearer(strings.TrimSpace(string(tok)))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	decided := make(chan result, 1)
	legacy, err := mcp.NewClient(&mcp.Implementation{Name: "person", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			id, ok := strings.CutPrefix(req.Params.URL, g.base+"/ui/approvals/")
			if req.Params.Mode != "url" || !ok || id == "" {
				t.Errorf("elicitation = %+v, want the status page's view of the call", req.Params)
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			go func() { decided <- sb("approve-call", id) }()
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: g.url, HTTPClient: &http.Client{Transport: rt}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer legacy.Close()
	res, err := legacy.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "released"}})
	if err != nil || res.IsError {
		t.Fatalf("call approved through the page's URL: %+v, %v\n%s", res, err, g.stderr.String())
	}
	if r := <-decided; r.code != 0 || !strings.Contains(r.stdout, "approved ") {
		t.Errorf("approve-call: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	plain := connectWith(t, g, rt, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	res, err = plain.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "no"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "approval_required") {
		t.Fatalf("call without URL elicitation: %+v, %v", res, err)
	}
	r := sb("approve-call", "--json", "-v")
	var held []struct{ ID, Tool string }
	if err := json.Unmarshal([]byte(r.stdout), &held); err != nil || len(held) != 1 || !strings.Contains(r.stderr, "asking the gateway") {
		t.Fatalf("approve-call --json: %v %v\n%s%s", held, err, r.stdout, r.stderr)
	}
	if r := sb("deny-call", held[0].ID); r.code != 0 {
		t.Fatalf("deny-call: exit %d\n%s", r.code, r.stderr)
	}
	res, err = plain.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "no"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "approval_denied") {
		t.Errorf("denied call: %+v, %v", res, err)
	}
	if !proc.Eventually(10*time.Second, func() bool {
		out := sb("log", "--json").stdout
		return strings.Contains(out, `"approval": "approved `) && strings.Contains(out, " by cli:")
	}) {
		t.Errorf("no audit row says who approved:\n%s", sb("log", "--json").stdout)
	}
}

// TestCallHeldAtTerminal: the CLI's own call puts a held call to the
// person at its terminal; "y" approves it there and the call returns its
// result, "n" denies it; the audit log records the terminal's decision.
func TestCallHeldAtTerminal(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	exe, _ := os.Executable()
	data, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"demo": map[string]any{"command": exe, "args": []string{"demo-server"}}},
		"policy":     map[string]any{"approve": map[string]any{"tools": []string{"demo:echo"}}},
	})
	if err := os.WriteFile(filepath.Join(home, "config.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	tm := startTerm(t, home, "call", "demo__echo", "text=at the terminal")
	tm.waitFor("Approve it? [y/N]")
	tm.send("y\r")
	if code := tm.exit(); code != 0 || !strings.HasSuffix(strings.TrimSpace(tm.plain()), "at the terminal") {
		t.Fatalf("approved at the terminal: exit %d\n%s", code, tm.plain())
	}
	tm = startTerm(t, home, "call", "demo__echo", "text=refused")
	tm.waitFor("Approve it? [y/N]")
	tm.send("n\r")
	if code := tm.exit(); code == 0 || !strings.Contains(tm.plain(), "approval_denied") {
		t.Errorf("denied at the terminal: exit %d\n%s", code, tm.plain())
	}
	out := run(t, "log", "--json", "--home", home).stdout
	if !strings.Contains(out, " by terminal:") {
		t.Errorf("the audit log does not record the terminal's decision:\n%s", out)
	}
}
