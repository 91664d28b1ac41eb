package gateway_test

import (
	"context"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestAnswersBeforeTheQuestion: a 2026-07-28 client may send its answers
// with the first call, without a requestState; they reach a 2026-07-28
// upstream as they are, which takes the ones it asks for and ignores the
// others (SEP-2322), and the call completes at once.
func TestAnswersBeforeTheQuestion(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, map[string]any{"new": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeSurvey), "trust": "trusted", "protocolVersion": "2026-07-28"}})
	cs, asked := f.answering(t, "", "Ada", "Paris", "file:///survey")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "new__survey", Arguments: map[string]any{},
		InputResponses: mcp.InputResponseMap{
			"name":  &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Bob"}},
			"q":     &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "Rome"}}},
			"roots": &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///given"}}},
			"extra": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"foo": "bar"}},
		}})
	if want := "Bob / Rome / file:///given"; err != nil || res.IsError || text(t, res) != want {
		t.Fatalf("survey with its answers given at once: %v, %v; want %q", res, err, want)
	}
	if shown := asked(); len(shown) != 0 {
		t.Errorf("the client was asked %q; its answers were there already", shown)
	}
}
