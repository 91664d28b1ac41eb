package host

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/profile"
	"github.com/switchboard-mcp/switchboard/internal/tokens"
)

// Provider profiles: a view's model tool list (View.Tools) in the shape an
// LLM provider's API takes, normalised for what that provider rejects
// (internal/profile): names within its pattern, $ref inlined, combinators
// flattened for Gemini, empty objects given "properties". The conversion is
// reversible: ProviderTools.Call maps a provider-side tool call back to the
// original tool and arguments.

// Formats lists the provider formats ProviderTools accepts.
func Formats() []string {
	var out []string
	for _, f := range profile.Formats() {
		out = append(out, string(f))
	}
	return out
}

// ProviderTools is a view's tool list ([View.Tools]) converted for one
// provider, as it was when made: rebuild it when the list changes
// ([Options.OnChange]).
type ProviderTools struct {
	// Format is the provider format: see [Formats].
	Format string
	// Tools are the converted tool definitions, in [View.Tools] order: one
	// function tool each for openai, openai-responses and anthropic, one
	// FunctionDeclaration each for gemini, an MCP tool each for mcp.
	Tools []json.RawMessage

	view    *View
	mapping profile.Mapping
}

// ProviderTools converts the view's tools ([View.Tools]) for a provider
// format ("mcp", "openai", "openai-responses", "anthropic", "gemini"; see
// [Formats]), to put in the provider's request; [ProviderTools.Call]
// calls what the provider's model asks for, as the view's caller.
//
// Where tools are deferred (config: context.deferTools) and the provider
// has a tool search of its own, its native deferred loading is written
// instead of Switchboard's tool_search: every tool is given, the deferred
// ones marked "defer_loading", and the provider's search finds them
// without their definitions in the model's context. For anthropic, its
// BM25 tool search tool comes first and each deferred tool carries
// "defer_loading": true; for openai-responses, its "tool_search" tool
// comes first and the deferred tools are grouped by server into
// namespaces (named for the server, described by its instructions' first
// sentence), each function deferred. tool_search, tool_describe and
// tool_servers are left out then. Call resolves deferred tools too.
func (v *View) ProviderTools(format string) (*ProviderTools, error) {
	h := v.h
	f, err := profile.ParseFormat(format)
	if err != nil {
		return nil, fault.New(fault.CodeInvalidInput, "", "convert tools", err)
	}
	listed := v.Tools()
	var deferred []Tool
	if f == profile.Anthropic || f == profile.OpenAIResponses {
		deferred = h.deferredTools(v)
	}
	if len(deferred) > 0 {
		listed = slices.DeleteFunc(listed, func(t Tool) bool {
			return t.Name == ToolSearch || t.Name == DescribeTool || t.Name == ListServersTool
		})
	}
	var in []profile.Tool
	for _, t := range append(listed, deferred...) {
		in = append(in, profile.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema})
	}
	res, err := profile.Convert(f, in)
	if err != nil {
		return nil, fault.New(fault.CodeServerError, "", "convert tools", err)
	}
	tools := res.Tools
	if len(deferred) > 0 {
		tools = h.nativeDeferred(f, res.Tools[:len(listed)], res.Tools[len(listed):], deferred)
	}
	return &ProviderTools{Format: string(f), Tools: tools, view: v, mapping: res.Mapping}, nil
}

// deferredTools returns the view's tools that its model is not given
// (deferred, kept by no alwaysInclude glob, not found by its search),
// sorted by model-facing name, each marked Deferred.
func (h *Host) deferredTools(v *View) []Tool {
	snap, cfg := h.snapshot(), h.config()
	sc := v.scope()
	over := h.overBudget(v, cfg, snap)
	var out []Tool
	h.mu.RLock()
	defer h.mu.RUnlock()
	found := h.found[v.c.Profile]
	for _, t := range snap.Tools() {
		if sc.hasTool(t) && h.deferredLocked(cfg, t, found, over) {
			tool := toolOf(t)
			tool.Deferred = true
			out = append(out, tool)
		}
	}
	return out
}

// The providers' own tool search tools.
var (
	anthropicToolSearch = json.RawMessage(`{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}`)
	openAIToolSearch    = json.RawMessage(`{"type":"tool_search"}`)
)

// nativeDeferred writes a provider's deferred loading (see ProviderTools):
// listed are the converted listed tools, conv the converted deferred ones,
// in the order of deferred.
func (h *Host) nativeDeferred(f profile.Format, listed, conv []json.RawMessage, deferred []Tool) []json.RawMessage {
	marked := make([]json.RawMessage, len(conv))
	for i, c := range conv {
		marked[i] = withMember(c, `"defer_loading":true`)
	}
	if f == profile.Anthropic {
		return append(append([]json.RawMessage{anthropicToolSearch}, listed...), marked...)
	}
	out := append([]json.RawMessage{openAIToolSearch}, listed...)
	var servers []string
	byServer := map[string][]json.RawMessage{}
	for i, t := range deferred {
		if _, ok := byServer[t.Server]; !ok {
			servers = append(servers, t.Server)
		}
		byServer[t.Server] = append(byServer[t.Server], marked[i])
	}
	slices.Sort(servers)
	comp := h.comp.Load()
	for _, name := range servers {
		about := ""
		if s := comp.servers[name]; s != nil {
			about = firstSentence(s.view())
		}
		if about == "" {
			about = "The tools of the MCP server " + name + "."
		}
		ns, _ := json.Marshal(struct {
			Type        string            `json:"type"`
			Name        string            `json:"name"`
			Description string            `json:"description"`
			Tools       []json.RawMessage `json:"tools"`
		}{"namespace", profile.NamespaceName(name), about, byServer[name]})
		out = append(out, ns)
	}
	return out
}

// withMember adds a member to a compact JSON object.
func withMember(obj json.RawMessage, member string) json.RawMessage {
	b := bytes.TrimRight(obj, " \t\r\n")
	if len(b) < 2 || b[len(b)-1] != '}' {
		return obj
	}
	out := make([]byte, 0, len(b)+len(member)+1)
	out = append(out, b[:len(b)-1]...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	out = append(out, member...)
	return append(out, '}')
}

// JSON returns the value of the provider's "tools" request field: the
// list itself, or for gemini one Tool object holding the declarations.
func (p *ProviderTools) JSON() json.RawMessage {
	tools := p.Tools
	if tools == nil {
		tools = []json.RawMessage{}
	}
	var v any = tools
	if p.Format == string(profile.Gemini) {
		v = []any{map[string]any{"functionDeclarations": tools}}
	}
	b, _ := json.Marshal(v)
	return b
}

// Resolve maps a provider-side tool name and arguments back to the tool's
// model-facing name and its original arguments.
func (p *ProviderTools) Resolve(name string, args json.RawMessage) (string, json.RawMessage, error) {
	orig, origArgs, err := p.mapping.Resolve(name, args)
	if err != nil {
		return "", nil, fault.New(fault.CodeNotFound, "", "resolve "+p.Format+" tool call", err)
	}
	return orig, origArgs, nil
}

// Call calls the tool a provider named, with the provider's arguments
// mapped back (see [ProviderTools.Resolve]), as the view's caller
// ([View.Call]). A name the conversion did not see (a tool listed since,
// such as one a tool_search found) is called as it is, with the arguments
// as they are: rebuild the ProviderTools after [Options.OnChange] to give
// the provider the new list.
func (p *ProviderTools) Call(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*Result, error) {
	orig, origArgs, err := p.Resolve(name, args)
	if err != nil {
		if _, terr := p.view.Find(ctx, name); terr == nil {
			return p.view.Call(ctx, name, args, opts)
		}
		return nil, err
	}
	return p.view.Call(ctx, orig, origArgs, opts)
}

// Tokens estimates the tokens t's definition takes in a model's context:
// its MCP JSON (name, title, description, schemas, annotations) through
// internal/tokens, a tokenizer-free estimate within about 5 % of OpenAI's
// o200k_base and cl100k_base counts on tool definitions (see that package).
func (t Tool) Tokens() int {
	b, err := json.Marshal(t.definition())
	if err != nil {
		return 0
	}
	return tokens.Estimate(b)
}

// definition is a tool as a model is given it: MCP's tool object.
type definition struct {
	Name         string               `json:"name"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description,omitempty"`
	InputSchema  json.RawMessage      `json:"inputSchema"`
	OutputSchema json.RawMessage      `json:"outputSchema,omitempty"`
	Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
}

func (t Tool) definition() definition {
	return definition{t.Name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations}
}
