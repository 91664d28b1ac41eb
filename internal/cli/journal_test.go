package cli_test

import (
	"context"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// journalVar names a file to which a journalled server (see journalled)
// appends "call" when a tool call arrives and "cancelled" when a
// notifications/cancelled does.
const journalVar = "SWITCHBOARD_CLI_TEST_JOURNAL"

// journalled is the test kit's server, noting in the file at path the calls
// and cancellations it receives.
func journalled(path string) *mcp.Server {
	s := testkit.NewServer()
	// Tools whose schemas the CLI's argument check must cope with: one
	// that lets unlisted arguments through, one that cannot be resolved
	// (a $ref to a definition it lacks), one in a draft the validator
	// does not know.
	echoArgs := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
	}
	s.AddTool(&mcp.Tool{Name: "open", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"head": map[string]any{"type": "number"}},
	}}, echoArgs)
	s.AddTool(&mcp.Tool{Name: "unresolvable", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/missing"}},
	}}, echoArgs)
	s.AddTool(&mcp.Tool{Name: "draft4", InputSchema: map[string]any{
		"$schema": "http://json-schema.org/draft-04/schema#",
		"type":    "object", "properties": map[string]any{"x": map[string]any{"type": "string"}},
	}}, echoArgs)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/call":
				appendLine(path, "call")
			case "notifications/cancelled":
				appendLine(path, "cancelled")
			}
			return next(ctx, method, req)
		}
	})
	return s
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	f.WriteString(line + "\n")
	f.Close()
}

// serveJournalled serves journalled on stdio when journalVar is set (the
// re-executed test binary as an upstream server).
func serveJournalled() {
	path := os.Getenv(journalVar)
	if path == "" {
		return
	}
	if err := journalled(path).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

func journal(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
