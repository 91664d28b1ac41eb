package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ModeListed is a server whose tools are the lines of the file ToolsVar
// names, read again at every tools/list and tools/call, so that a test can
// change them behind an unchanged configuration (the file's path is all
// the configuration holds). It never announces tools/list_changed.
//
// A line is "name<TAB>description", optionally followed by "<TAB>flag":
//   - unknown-once: the first call of the tool is answered as go-sdk
//     answers a tool it does not know (JSON-RPC -32602 `unknown tool "name"`);
//   - unknown-once-result: the same, in the TypeScript SDK's form (a
//     result with isError and "MCP error -32602: Tool name not found").
//
// Each tool echoes its "text" argument as "name: text". In MarkVar's file
// the server writes "start" when it starts, "list" at each tools/list,
// "call NAME" each time a tool runs and "unknown NAME" each time it
// answers that it does not know NAME.
const ModeListed = "listed"

// ToolsVar names the file of ModeListed's tools.
const ToolsVar = "SWITCHBOARD_TESTKIT_TOOLS"

// listedTool is one line of ModeListed's file.
type listedTool struct {
	name, description, flag string
}

// readListed reads ModeListed's tools.
func readListed(path string) []listedTool {
	data, _ := os.ReadFile(path)
	var out []listedTool
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Split(line, "\t")
		if f[0] == "" {
			continue
		}
		t := listedTool{name: f[0]}
		if len(f) > 1 {
			t.description = f[1]
		}
		if len(f) > 2 {
			t.flag = f[2]
		}
		out = append(out, t)
	}
	return out
}

// listed serves ModeListed on stdio.
func listed() int {
	tools, mark := os.Getenv(ToolsVar), os.Getenv(MarkVar)
	appendMark(mark, "start")
	s := mcp.NewServer(&mcp.Implementation{Name: "testkit-listed", Version: "1.0.0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch r := req.(type) {
			case *mcp.ListToolsRequest:
				appendMark(mark, "list")
				res := &mcp.ListToolsResult{Tools: []*mcp.Tool{}}
				for _, t := range readListed(tools) {
					res.Tools = append(res.Tools, &mcp.Tool{Name: t.name, Description: t.description, InputSchema: map[string]any{
						"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}},
					}})
				}
				return res, nil
			case *mcp.CallToolRequest:
				name := r.Params.Name
				var tool *listedTool
				for _, t := range readListed(tools) {
					if t.name == name {
						tool = &t
						break
					}
				}
				prev, _ := os.ReadFile(mark)
				first := !strings.Contains(string(prev), "unknown "+name+"\n")
				switch {
				case tool == nil, tool.flag == "unknown-once" && first:
					appendMark(mark, "unknown "+name)
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
				case tool.flag == "unknown-once-result" && first:
					appendMark(mark, "unknown "+name)
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "MCP error -32602: Tool " + name + " not found"}}}, nil
				}
				var in EchoIn
				json.Unmarshal(r.Params.Arguments, &in)
				appendMark(mark, "call "+name)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + ": " + in.Text}}}, nil
			}
			return next(ctx, method, req)
		}
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "testkit listed server:", err)
		return 1
	}
	return 0
}
