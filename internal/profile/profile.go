package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Format is a provider's tool-definition format. Its value is the name
// used on the command line (`switchboard tools --format`).
type Format string

// The formats. See the package documentation for what each one does.
const (
	// MCP is the identity: tools as MCP's tools/list returns them.
	MCP Format = "mcp"
	// OpenAI is the Chat Completions tool shape,
	// {"type":"function","function":{"name","description","parameters"}},
	// which OpenAI-compatible servers (vLLM, Ollama, LiteLLM, ...) take.
	OpenAI Format = "openai"
	// OpenAIResponses is the Responses API's flat shape,
	// {"type":"function","name","description","parameters"}, with the
	// same names and schemas as OpenAI.
	OpenAIResponses Format = "openai-responses"
	// Anthropic is the Messages API's {"name","description","input_schema"}.
	Anthropic Format = "anthropic"
	// Gemini is a FunctionDeclaration, {"name","description","parameters"},
	// with parameters in Gemini's OpenAPI-subset Schema. The caller puts
	// the list in {"functionDeclarations": [...]}.
	Gemini Format = "gemini"
)

// Formats lists every format, in the order a help text should show them.
func Formats() []Format { return []Format{MCP, OpenAI, OpenAIResponses, Anthropic, Gemini} }

// ParseFormat returns the format named s (case-insensitive).
func ParseFormat(s string) (Format, error) {
	f := Format(strings.ToLower(strings.TrimSpace(s)))
	for _, g := range Formats() {
		if f == g {
			return f, nil
		}
	}
	names := make([]string, 0, len(Formats()))
	for _, g := range Formats() {
		names = append(names, string(g))
	}
	return "", fmt.Errorf("profile: unknown format %q (want one of %s)", s, strings.Join(names, ", "))
}

// Tool is an MCP tool as the model sees it. InputSchema and OutputSchema
// are raw JSON, expected to have been checked by internal/schema (size and
// depth capped, only local references); this package copes with anything,
// but does not re-check limits.
type Tool struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage // an empty one is taken as {"type":"object"}
	OutputSchema json.RawMessage // nil when the tool declares none
}

// Result is a converted tool list.
type Result struct {
	// Tools holds one compact JSON object per input tool, in input order,
	// in the format's shape. Same input, same bytes.
	Tools []json.RawMessage
	// Mapping leads provider-side names and arguments back to the
	// original tools.
	Mapping Mapping
}

// ErrUnknownTool is returned (wrapped) by [Mapping.Resolve] for a name
// that no converted tool has.
var ErrUnknownTool = errors.New("profile: unknown tool name")

// Mapping resolves a provider-side tool name, and the arguments the model
// sent with it, to the original MCP tool name and arguments. The zero
// Mapping resolves nothing. It is immutable and safe for concurrent use.
type Mapping struct {
	format Format
	byName map[string]entry // provider-side name → original
	toName map[string]string
}

type entry struct {
	orig string
	args *argMap // nil: arguments pass through unchanged
}

// Format returns the format the mapping was made for.
func (m Mapping) Format() Format { return m.format }

// Name returns the provider-side name of the original tool orig.
func (m Mapping) Name(orig string) (string, bool) {
	n, ok := m.toName[orig]
	return n, ok
}

// Resolve returns the original name of the tool a provider calls name,
// and args converted back to that tool's arguments.
//
// Arguments are returned unchanged, as the same bytes, unless the format
// changed their shape. Only Gemini does (renamed properties, values sent
// as JSON strings, see the package documentation); for it, args must be a
// JSON object (or empty or null, returned as they are) and the result is
// re-encoded compact JSON with the original property names. A value that
// does not have the shape the converted schema declared is passed through
// as it is, for the tool to reject.
func (m Mapping) Resolve(name string, args json.RawMessage) (string, json.RawMessage, error) {
	e, ok := m.byName[name]
	if !ok {
		return "", nil, fmt.Errorf("%w: %q", ErrUnknownTool, name)
	}
	if e.args == nil {
		return e.orig, args, nil
	}
	trimmed := strings.TrimSpace(string(args))
	if trimmed == "" || trimmed == "null" {
		return e.orig, args, nil
	}
	v, err := decode(args)
	if err != nil {
		return "", nil, fmt.Errorf("profile: arguments for %q: %v", name, err)
	}
	if _, ok := v.(*object); !ok {
		return "", nil, fmt.Errorf("profile: arguments for %q are not a JSON object", name)
	}
	return e.orig, encode(e.args.apply(v)), nil
}

// Convert converts tools to format f. Tool names must be distinct.
//
// A name the provider rejects is replaced deterministically: unsupported
// characters become "_" and an 8-hex-digit hash of the original name is
// appended (the name cut first if needed), so names stay unique and
// readable; see [Mapping.Resolve] for the way back.
func Convert(f Format, tools []Tool) (*Result, error) {
	if _, err := ParseFormat(string(f)); err != nil {
		return nil, err
	}
	origs := make([]string, len(tools))
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		if seen[t.Name] {
			return nil, fmt.Errorf("profile: duplicate tool name %q", t.Name)
		}
		seen[t.Name] = true
		origs[i] = t.Name
	}
	names := map[string]string{}
	switch f {
	case MCP:
		for _, n := range origs {
			names[n] = n
		}
	case OpenAI, OpenAIResponses:
		names = assignNames(origs, ruleOpenAI, true)
	case Anthropic:
		names = assignNames(origs, ruleAnthropic, true)
	case Gemini:
		names = assignNames(origs, ruleGemini, true)
	}

	res := &Result{
		Tools:   make([]json.RawMessage, len(tools)),
		Mapping: Mapping{format: f, byName: make(map[string]entry, len(tools)), toName: names},
	}
	for i, t := range tools {
		out, am, err := convertTool(f, t, names[t.Name])
		if err != nil {
			return nil, err
		}
		res.Tools[i] = out
		res.Mapping.byName[names[t.Name]] = entry{orig: t.Name, args: am}
	}
	return res, nil
}

func convertTool(f Format, t Tool, name string) (json.RawMessage, *argMap, error) {
	if f == MCP {
		return mcpTool(t)
	}
	var root any = newObject()
	if len(strings.TrimSpace(string(t.InputSchema))) > 0 {
		v, err := decode(t.InputSchema)
		if err != nil {
			return nil, nil, fmt.Errorf("profile: tool %q: inputSchema: %v", t.Name, err)
		}
		root = v
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	out := newObject()
	switch f {
	case OpenAI, OpenAIResponses:
		fn := newObject()
		fn.set("name", name)
		setDesc(fn, desc)
		fn.set("parameters", jsonSchemaParams(root))
		out.set("type", "function")
		if f == OpenAI {
			out.set("function", fn)
		} else {
			for _, k := range fn.keys {
				out.set(k, fn.vals[k])
			}
		}
		return encode(out), nil, nil
	case Anthropic:
		out.set("name", name)
		setDesc(out, desc)
		out.set("input_schema", jsonSchemaParams(root))
		return encode(out), nil, nil
	default: // Gemini
		out.set("name", name)
		setDesc(out, desc)
		p, am := geminiParams(root)
		if p != nil {
			out.set("parameters", p)
		}
		return encode(out), am, nil
	}
}

// mcpTool is the identity format: the tool as MCP lists it, schemas as
// given (compacted).
func mcpTool(t Tool) (json.RawMessage, *argMap, error) {
	out := newObject()
	out.set("name", t.Name)
	if t.Title != "" {
		out.set("title", t.Title)
	}
	if t.Description != "" {
		out.set("description", t.Description)
	}
	for _, s := range []struct {
		key string
		raw json.RawMessage
	}{{"inputSchema", t.InputSchema}, {"outputSchema", t.OutputSchema}} {
		if len(strings.TrimSpace(string(s.raw))) == 0 {
			if s.key == "inputSchema" {
				out.set(s.key, json.RawMessage(`{"type":"object"}`))
			}
			continue
		}
		if !json.Valid(s.raw) {
			return nil, nil, fmt.Errorf("profile: tool %q: %s is not valid JSON", t.Name, s.key)
		}
		out.set(s.key, s.raw)
	}
	return encode(out), nil, nil
}
