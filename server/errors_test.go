package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestErrorMapping checks the one mapping of errors to the two channels:
// the outermost *Error, *ClientError or *jsonrpc.Error decides.
func TestErrorMapping(t *testing.T) {
	clientSaid := &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no such method"}
	fromClient := &ClientError{Method: "sampling/createMessage", Err: clientSaid}
	tests := []struct {
		name     string
		err      error
		protocol bool  // a JSON-RPC error, not a tool error
		code     int64 // of rpcError
	}{
		{"plain", errors.New("x"), false, jsonrpc.CodeInternalError},
		{"typed", Forbidden("no"), true, CodeForbidden},
		{"typed wrapped", fmt.Errorf("ctx: %w", Unauthorized("who")), true, CodeUnauthorized},
		{"server's jsonrpc", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}, true, jsonrpc.CodeInvalidParams},
		{"server's jsonrpc wrapped", fmt.Errorf("ctx: %w", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams}), true, jsonrpc.CodeInvalidParams},
		{"client's jsonrpc", fromClient, false, jsonrpc.CodeInternalError},
		{"client's jsonrpc wrapped", fmt.Errorf("asking: %w", fromClient), false, jsonrpc.CodeInternalError},
		{"typed around client's", Forbidden("no").withErr(fromClient), true, CodeForbidden},
		{"joined plain and typed", errors.Join(errors.New("x"), InvalidParams("y")), true, jsonrpc.CodeInvalidParams},
		{"joined client's first", errors.Join(fromClient, InvalidParams("y")), false, jsonrpc.CodeInternalError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isProtocolError(tt.err); got != tt.protocol {
				t.Errorf("isProtocolError = %v, want %v", got, tt.protocol)
			}
			if got := rpcError(tt.err).Code; got != tt.code {
				t.Errorf("rpcError code = %d, want %d", got, tt.code)
			}
		})
	}
	var je *jsonrpc.Error
	if !errors.As(fmt.Errorf("w: %w", fromClient), &je) || je != clientSaid {
		t.Error("errors.As does not find the client's *jsonrpc.Error in a *ClientError")
	}
}

// withErr sets e's cause, for the table above.
func (e *Error) withErr(err error) *Error { e.Err = err; return e }

// TestClientErrors checks, over a real legacy session, that a JSON-RPC
// error the client answers to the server's own request never goes out as
// the server's answer: a tool that returns it fails with isError, a prompt
// with -32603, whether the handler asked the client itself or returned
// NeedInput and go-sdk asked for it.
func TestClientErrors(t *testing.T) {
	s := testServer(nil)
	MustAddTool(s, Tool{Name: "sample", Description: "asks the client's model"}, func(ctx context.Context, _ noArgs) (Content, error) {
		_, err := Session(ctx).CreateMessage(ctx, &mcp.CreateMessageParams{
			MaxTokens: 10,
			Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}},
		})
		if err != nil {
			return nil, fmt.Errorf("sampling: %w", err)
		}
		return Text("sampled"), nil
	})
	must(AddPrompt(s, Prompt{Name: "asking", Description: "asks the user"}, func(ctx context.Context, _ noArgs) ([]*mcp.PromptMessage, error) {
		if _, err := Session(ctx).Elicit(ctx, &mcp.ElicitParams{Message: "ok?", RequestedSchema: map[string]any{"type": "object"}}); err != nil {
			return nil, fmt.Errorf("eliciting: %w", err)
		}
		return []*mcp.PromptMessage{UserText("asked")}, nil
	}))
	// A code the server would never answer tools/call with.
	const refused = -32042
	refuse := &jsonrpc.Error{Code: refused, Message: "client refuses"}
	cs := connect(t, serveHTTP(t, s), "2025-11-25", &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, refuse
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, refuse
		},
	})
	for _, tool := range []string{"sample", "ask"} {
		t.Run(tool, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool})
			if err != nil {
				t.Fatalf("CallTool: %v (code %d), want a tool error", err, rpcCode(err))
			}
			if !res.IsError || !strings.Contains(text(res), "client refuses") {
				t.Errorf("isError %v, text %q; want a tool error carrying the client's message", res.IsError, text(res))
			}
		})
	}
	t.Run("prompt", func(t *testing.T) {
		_, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "asking"})
		if got := rpcCode(err); got != jsonrpc.CodeInternalError {
			t.Errorf("GetPrompt: %v (code %d), want code %d", err, got, jsonrpc.CodeInternalError)
		}
	})
}
