package server

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompt describes a prompt template.
type Prompt struct {
	// Name defaults to the handler's function name in snake case.
	Name        string
	Title       string
	Description string
	Meta        mcp.Meta
}

// PromptHandler builds a prompt's messages from its arguments, which are
// converted to the types of A's fields and validated first (a missing
// required argument is invalid params, -32602). A is a struct whose json
// field names are the arguments; a field without omitempty is required,
// and its `jsonschema:"…"` or `description:"…"` tag describes it. Use
// struct{} for a prompt without arguments.
type PromptHandler[A any] func(ctx context.Context, args A) ([]*mcp.PromptMessage, error)

// UserText returns a user message holding text.
func UserText(text string) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: text}}
}

// AssistantText returns an assistant message holding text.
func AssistantText(text string) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: "assistant", Content: &mcp.TextContent{Text: text}}
}

// AddPrompt registers a prompt, replacing any of the same name.
func AddPrompt[A any](s *Server, p Prompt, h PromptHandler[A]) error {
	if h == nil {
		return fmt.Errorf("prompt %q: nil handler", p.Name)
	}
	name := p.Name
	if name == "" {
		if name = funcName(h); name == "" {
			return errors.New("prompt: no name given and the handler is not a named function")
		}
	}
	if err := checkName(name); err != nil {
		return fmt.Errorf("prompt: %w", err)
	}
	schema, err := schemaFor(reflect.TypeFor[A]())
	if err != nil {
		return fmt.Errorf("prompt %q: arguments type: %w", name, err)
	}
	if schemaType(schema) != "object" {
		return fmt.Errorf("prompt %q: arguments type %v is not a struct", name, reflect.TypeFor[A]())
	}
	rs, err := schema.Resolve(nil)
	if err != nil {
		return fmt.Errorf("prompt %q: arguments schema: %w", name, err)
	}
	mp := &mcp.Prompt{Name: name, Title: p.Title, Description: p.Description, Meta: p.Meta}
	props := make([]string, 0, len(schema.Properties))
	for k := range schema.Properties {
		props = append(props, k)
	}
	slices.Sort(props)
	if len(schema.PropertyOrder) > 0 {
		props = schema.PropertyOrder
	}
	for _, k := range props {
		ps := schema.Properties[k]
		mp.Arguments = append(mp.Arguments, &mcp.PromptArgument{
			Name: k, Title: ps.Title, Description: ps.Description, Required: slices.Contains(schema.Required, k),
		})
	}
	handle := func(ctx context.Context, req *mcp.GetPromptRequest) (res *mcp.GetPromptResult, err error) {
		ctx = withCall(ctx, req)
		defer s.recovered(ctx, "prompt", name, &err)
		// Arguments the prompt does not declare are ignored.
		given := make(map[string]string, len(req.Params.Arguments))
		for k, v := range req.Params.Arguments {
			if schema.Properties == nil || schema.Properties[k] != nil {
				given[k] = v
			}
		}
		obj, err := stringArgs(schema, given)
		if err != nil {
			return nil, err
		}
		args, err := decodeInto[A](rs, obj)
		if err != nil {
			return nil, InvalidParams("prompt %q: invalid arguments: %v", name, err)
		}
		msgs, err := h(ctx, args)
		if err != nil {
			var ir *InputRequired
			if errors.As(err, &ir) {
				return &mcp.GetPromptResult{InputRequests: ir.Requests, RequestState: ir.State}, nil
			}
			if !isProtocolError(err) && !(ctx.Err() != nil && errors.Is(err, ctx.Err())) {
				err = Internal(err, "prompt %q failed: %v", name, err)
			}
			logError(ctx, s.logger, "prompt", name, err)
			return nil, err
		}
		if msgs == nil {
			msgs = []*mcp.PromptMessage{}
		}
		desc := p.Description
		if c := callFrom(ctx); c != nil && c.promptDesc != nil {
			desc = *c.promptDesc
		}
		return &mcp.GetPromptResult{Description: desc, Messages: msgs}, nil
	}
	return register(func() { s.mcp.AddPrompt(mp, handle) })
}

// MustAddPrompt is AddPrompt, panicking on error.
func MustAddPrompt[A any](s *Server, p Prompt, h PromptHandler[A]) {
	if err := AddPrompt(s, p, h); err != nil {
		panic(err)
	}
}

// RemovePrompts removes the named prompts.
func (s *Server) RemovePrompts(names ...string) { s.mcp.RemovePrompts(names...) }
