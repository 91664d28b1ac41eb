package gateway_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestSecretsThroughTheGateway: a credential in a result reaches the
// client redacted; a call carrying one to a server that is not trusted,
// with security.secrets.arguments "block", is an isError result with
// policy_blocked naming the rule, never the credential.
func TestSecretsThroughTheGateway(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	f := newFixtureWith(t,
		map[string]any{"u": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeSecrets)}},
		map[string]any{"security": map[string]any{"secrets": map[string]any{"arguments": "block"}}})
	cs, _ := f.connect(t, "")
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "u__reveal", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("reveal: %v, %v", res, err)
	}
	if got := text(t, res); strings.Contains(got, testkit.RevealToken) || !strings.Contains(got, "[redacted: github-token]") || !strings.Contains(got, "[redacted: jwt]") {
		t.Errorf("reveal text = %q", got)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "u__echo", Arguments: map[string]any{"text": "use " + testkit.RevealToken}})
	if err != nil || !res.IsError || errorCode(res) != "policy_blocked" || !strings.Contains(text(t, res), "github-token") || strings.Contains(text(t, res), testkit.RevealToken) {
		t.Errorf("blocked call: %v, %v (code %q)", res, err, errorCode(res))
	}
	// The trusted server takes it, and its echo comes back redacted.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "s__echo", Arguments: map[string]any{"text": "use " + testkit.RevealToken}})
	if err != nil || res.IsError || text(t, res) != "use [redacted: github-token]" {
		t.Errorf("trusted call: %v, %v", res, err)
	}
}
