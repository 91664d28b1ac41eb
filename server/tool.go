package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool describes a tool. Only Description is required: [AddTool] refuses a
// tool without one.
type Tool struct {
	// Name defaults to the handler's function name in snake case
	// (GetWeather → get_weather); a closure needs one.
	Name        string
	Title       string
	Description string
	Annotations *mcp.ToolAnnotations
	// InputSchema, if set, replaces the schema inferred from the handler's
	// input type, as a *jsonschema.Schema or JSON (json.RawMessage, map):
	// it is advertised verbatim and arguments are validated against it.
	// It must be an object schema.
	InputSchema any
	// OutputSchema, if set, replaces the schema inferred from the result
	// type; it is required when the result type is an interface (a union).
	OutputSchema any
	Meta         mcp.Meta
}

// Content is the result type of a tool without a declared result: the
// content blocks (text, image, audio, resource link, embedded resource)
// pass to the client verbatim, and no output schema is advertised.
type Content []mcp.Content

// Text returns one text block.
func Text(s string) Content { return Content{&mcp.TextContent{Text: s}} }

// ToolHandler is a tool's code: it receives the validated arguments and
// returns the result. ctx carries the request (see [Headers],
// [ProgressReporter] and the other context helpers) and is cancelled when
// the client cancels.
//
// An ordinary error becomes a tool execution error (isError: true, the
// message as text) that the model can read and correct; an [*Error] or a
// *jsonrpc.Error becomes a JSON-RPC error; an [*InputRequired] asks the
// client for input.
type ToolHandler[In, Out any] func(ctx context.Context, in In) (Out, error)

var (
	contentType    = reflect.TypeFor[Content]()
	rawContentType = reflect.TypeFor[[]mcp.Content]()
	rawResultType  = reflect.TypeFor[*mcp.CallToolResult]()
)

// AddTool registers a tool, replacing any of the same name. In is the
// arguments' type (a struct, or map[string]any / json.RawMessage with
// Tool.InputSchema); its schema is inferred, with descriptions from
// `jsonschema:"…"` or `description:"…"` field tags. Out is the result's
// type:
//
//   - [Content] (or []mcp.Content): no declared result; the blocks pass
//     verbatim.
//   - *mcp.CallToolResult: the whole result, verbatim (an escape hatch).
//   - anything else is a declared result, with an output schema, validated
//     after the handler runs, sent as structuredContent and as JSON text.
//     A result that is not an object (a number, a string, a list, a union)
//     is advertised as {"result": schema} and sent as {"result": value}.
//
// It returns an error, and registers nothing, when the name is invalid or
// cannot be derived, or a schema cannot be inferred or resolved.
func AddTool[In, Out any](s *Server, t Tool, h ToolHandler[In, Out]) error {
	st, err := newTool(s, t, h)
	if err != nil {
		return err
	}
	return register(func() { s.mcp.AddTool(st.tool, st.handle) })
}

// register runs a go-sdk registration, turning its panic (go-sdk panics on
// schemas and templates it rejects) into an error.
func register(add func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	add()
	return nil
}

// MustAddTool is AddTool, panicking on error: for registrations fixed at
// compile time.
func MustAddTool[In, Out any](s *Server, t Tool, h ToolHandler[In, Out]) {
	if err := AddTool(s, t, h); err != nil {
		panic(err)
	}
}

// RemoveTools removes the named tools.
func (s *Server) RemoveTools(names ...string) { s.mcp.RemoveTools(names...) }

// funcName returns the snake-case name of the function f, or "" for a
// closure or method value.
func funcName(f any) string {
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Func || v.IsNil() {
		return ""
	}
	fn := runtime.FuncForPC(v.Pointer())
	if fn == nil {
		return ""
	}
	full := fn.Name()
	name := full[strings.LastIndexByte(full, '.')+1:]
	if strings.HasPrefix(name, "func") || strings.HasSuffix(name, "-fm") || name == "" {
		return ""
	}
	if _, err := fmt.Sscanf(name, "%d", new(int)); err == nil {
		return ""
	}
	return SnakeCase(name)
}

type serverTool[In, Out any] struct {
	s       *Server
	tool    *mcp.Tool
	h       ToolHandler[In, Out]
	in      *jsonschema.Resolved
	out     *jsonschema.Resolved // nil: no declared result
	wrapped bool                 // the result is sent as {"result": …}
	raw     int                  // 1: Content, 2: *mcp.CallToolResult
}

func newTool[In, Out any](s *Server, t Tool, h ToolHandler[In, Out]) (*serverTool[In, Out], error) {
	if h == nil {
		return nil, fmt.Errorf("tool %q: nil handler", t.Name)
	}
	name := t.Name
	if name == "" {
		name = funcName(h)
		if name == "" {
			return nil, errors.New("tool: no name given and the handler is not a named function")
		}
	}
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("tool: %w", err)
	}
	if strings.TrimSpace(t.Description) == "" {
		return nil, fmt.Errorf("tool %q: no description: a model chooses tools by what their descriptions say", name)
	}
	st := &serverTool[In, Out]{s: s, h: h}
	mt := &mcp.Tool{Name: name, Title: t.Title, Description: t.Description, Annotations: t.Annotations, Meta: t.Meta}

	inSchema := t.InputSchema
	if inSchema == nil {
		is, err := schemaFor(reflect.TypeFor[In]())
		if err != nil {
			return nil, fmt.Errorf("tool %q: input schema: %w", name, err)
		}
		if is.Type == "" && len(is.Types) == 0 && len(is.Properties) == 0 {
			is = &jsonschema.Schema{Type: "object"} // any, map, RawMessage
		}
		inSchema = is
	}
	is, rs, err := resolve(inSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: input schema: %w", name, err)
	}
	if is.Type != "object" {
		return nil, fmt.Errorf("tool %q: input schema must have type \"object\"", name)
	}
	st.in = rs
	if t.InputSchema != nil {
		mt.InputSchema = t.InputSchema // verbatim
	} else {
		mt.InputSchema = is
	}

	outType := reflect.TypeFor[Out]()
	switch {
	case outType == contentType || outType == rawContentType:
		st.raw = 1
	case outType == rawResultType:
		st.raw = 2
	default:
		var os *jsonschema.Schema
		if t.OutputSchema != nil {
			var err error
			if os, _, err = resolve(t.OutputSchema); err != nil {
				return nil, fmt.Errorf("tool %q: output schema: %w", name, err)
			}
		} else {
			if outType.Kind() == reflect.Interface {
				return nil, fmt.Errorf("tool %q: result type %v needs Tool.OutputSchema (or use Content for raw content)", name, outType)
			}
			var err error
			if os, err = schemaFor(outType); err != nil {
				return nil, fmt.Errorf("tool %q: output schema: %w", name, err)
			}
		}
		ws, wrapped := wrapResult(os)
		_, ors, err := resolve(ws)
		if err != nil {
			return nil, fmt.Errorf("tool %q: output schema: %w", name, err)
		}
		st.out, st.wrapped = ors, wrapped
		mt.OutputSchema = ws
	}
	st.tool = mt
	return st, nil
}

// handle is the go-sdk handler of the tool.
func (st *serverTool[In, Out]) handle(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
	name := st.tool.Name
	ctx = withCall(ctx, req)
	defer st.s.recovered(ctx, "tool", name, &err)

	var args any = map[string]any{}
	if raw := req.Params.Arguments; len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, InvalidParams("tool %q: arguments are not JSON: %v", name, err)
		}
	}
	if _, ok := args.(map[string]any); !ok {
		return nil, InvalidParams("tool %q: arguments must be an object", name)
	}
	in, err := decodeInto[In](st.in, args)
	if err != nil {
		// An input validation error is a tool execution error, so that the
		// model can correct its call (MCP 2025-11-25, server/tools §Error
		// Handling).
		err = fmt.Errorf("invalid arguments for tool %q: %w", name, err)
		logError(ctx, st.s.logger, "tool", name, InvalidParams("%v", err))
		return toolError(err), nil
	}

	out, err := st.h(ctx, in)
	if err != nil {
		var ir *InputRequired
		if errors.As(err, &ir) {
			return &mcp.CallToolResult{InputRequests: ir.Requests, RequestState: ir.State}, nil
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, err // cancelled: nobody reads the answer
		}
		logError(ctx, st.s.logger, "tool", name, err)
		if isProtocolError(err) {
			return nil, rpcError(err)
		}
		return toolError(err), nil
	}
	return st.result(ctx, out)
}

// toolError is a tool execution error result.
func toolError(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}

// result turns a handler's value into the tool result.
func (st *serverTool[In, Out]) result(ctx context.Context, out Out) (*mcp.CallToolResult, error) {
	switch st.raw {
	case 1:
		var blocks []mcp.Content
		switch v := any(out).(type) {
		case Content:
			blocks = v
		case []mcp.Content:
			blocks = v
		}
		if blocks == nil {
			blocks = []mcp.Content{}
		}
		return &mcp.CallToolResult{Content: blocks}, nil
	case 2:
		r := any(out).(*mcp.CallToolResult)
		if r == nil {
			r = &mcp.CallToolResult{}
		}
		return r, nil
	}
	text, err := marshalJSON(out)
	if err != nil {
		return nil, st.broken(ctx, fmt.Errorf("cannot marshal result: %w", err))
	}
	var value any
	if err := json.Unmarshal(text, &value); err != nil {
		return nil, st.broken(ctx, err)
	}
	structured := value
	if st.wrapped {
		structured = map[string]any{"result": value}
	}
	if err := st.out.Validate(structured); err != nil {
		return nil, st.broken(ctx, fmt.Errorf("result breaks the declared output schema: %w", err))
	}
	return &mcp.CallToolResult{
		StructuredContent: structured,
		Content:           []mcp.Content{&mcp.TextContent{Text: string(text)}},
	}, nil
}

// broken reports a handler that broke its own contract: a server bug,
// logged as such and answered -32603, never as the client's fault.
func (st *serverTool[In, Out]) broken(ctx context.Context, err error) error {
	st.s.logger.ErrorContext(ctx, "mcp: server bug: tool result invalid", "tool", st.tool.Name, "error", err.Error())
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("tool %q produced an invalid result", st.tool.Name)}
}
