package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConfirmationThroughTheGateway: a call the policy says a person must
// confirm is put to the calling client as an elicitation naming the server
// and the tool, in both eras; accepting runs it, declining refuses it with
// policy_blocked, and a client that cannot elicit is refused too.
func TestConfirmationThroughTheGateway(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, nil, map[string]any{"policy": map[string]any{"confirm": "always"}})
	ctx := context.Background()
	for _, era := range []struct{ name, version string }{{"modern", ""}, {"legacy", "2025-11-25"}} {
		t.Run(era.name, func(t *testing.T) {
			var asked []string
			allow := true
			c := mcp.NewClient(&mcp.Implementation{Name: "confirming", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = append(asked, req.Params.Message)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": allow}}, nil
				},
			})
			cs := f.connectWith(t, c, era.version)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s__echo", Arguments: map[string]any{"text": "ok"}})
			if err != nil || res.IsError || text(t, res) != "ok" {
				t.Fatalf("confirmed call: %v, %v", res, err)
			}
			if len(asked) != 1 || !strings.Contains(asked[0], `server "s"`) || !strings.Contains(asked[0], `tool "s__echo"`) || !strings.Contains(asked[0], `{"text":"ok"}`) {
				t.Errorf("question shown: %q", asked)
			}
			allow = false
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "s__echo", Arguments: map[string]any{"text": "no"}})
			if err != nil || !res.IsError || errorCode(res) != "policy_blocked" {
				t.Errorf("declined call: %v, %v (code %q)", res, err, errorCode(res))
			}
		})
	}
	// A client without elicitation: no one can confirm.
	cs, _ := f.connect(t, "")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s__echo", Arguments: map[string]any{"text": "x"}})
	if err != nil || !res.IsError || errorCode(res) != "policy_blocked" || !strings.Contains(text(t, res), "did not declare elicitation") {
		t.Errorf("call from a client without elicitation: %v, %v", res, err)
	}
}

// TestConfirmationDenied: "onConfirm": "deny" refuses without asking.
func TestConfirmationDenied(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, nil, map[string]any{"policy": map[string]any{"confirm": "always", "onConfirm": "deny"}})
	cs, asked := f.answering(t, "", "Ada", "m", "file:///r")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "web__echo", Arguments: map[string]any{"text": "x"}})
	if err != nil || !res.IsError || errorCode(res) != "policy_blocked" || len(asked()) != 0 {
		t.Errorf("call: %v, %v; asked %q", res, err, asked())
	}
}
