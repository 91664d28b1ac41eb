package codemode

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// Decl is one tool as its declaration is written.
type Decl struct {
	Tool
	// Description is the tool's description; its first sentence is kept,
	// at most maxDeclDescription bytes.
	Description string
	// Input and Output are the tool's inputSchema and outputSchema (nil
	// for none: the result is then the tool's text).
	Input, Output json.RawMessage
}

const (
	maxDeclDescription = 120
	// maxTypeDepth is how deep a schema is written out; deeper values
	// are `any`.
	maxTypeDepth = 4
	// maxProps is how many properties of one object are written.
	maxProps = 24
)

// Declarations writes TypeScript-style declarations of tools, a
// namespace per server, sorted: each tool a function taking its input
// object and returning a promise of its result, the structured content
// typed from its outputSchema where it has one, else its text (string).
func Declarations(tools []Decl) string {
	by := map[string][]Decl{}
	for _, t := range tools {
		by[t.Server] = append(by[t.Server], t)
	}
	var b strings.Builder
	for _, s := range servers(toolsOf(tools)) {
		ts := by[s]
		sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
		b.WriteString("declare namespace " + Ident(s) + " {\n")
		for _, t := range ts {
			if d := shortDescription(t.Description); d != "" {
				b.WriteString("  /** " + d + " */\n")
			}
			out := "string"
			if len(t.Output) > 0 {
				out = typeOf(t.Output, 0)
			}
			in := "{}"
			if len(t.Input) > 0 {
				in = typeOf(t.Input, 0)
			}
			b.WriteString("  function " + Ident(t.Name) + "(a: " + in + "): Promise<" + out + ">;\n")
		}
		b.WriteString("}\n")
	}
	return b.String()
}

func toolsOf(ds []Decl) []Tool {
	out := make([]Tool, len(ds))
	for i, d := range ds {
		out[i] = d.Tool
	}
	return out
}

// shortDescription is a description's first sentence, capped.
func shortDescription(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > maxDeclDescription {
		cut := strings.LastIndexByte(s[:maxDeclDescription], ' ')
		if cut <= 0 {
			cut = maxDeclDescription
		}
		s = s[:cut] + "…"
	}
	return strings.ReplaceAll(s, "*/", "* /")
}

// schema is the part of a JSON Schema the declarations read.
type schema struct {
	Type                 json.RawMessage            `json:"type"`
	Properties           map[string]json.RawMessage `json:"properties"`
	Required             []string                   `json:"required"`
	Items                json.RawMessage            `json:"items"`
	Enum                 []json.RawMessage          `json:"enum"`
	Const                json.RawMessage            `json:"const"`
	AnyOf                []json.RawMessage          `json:"anyOf"`
	OneOf                []json.RawMessage          `json:"oneOf"`
	AdditionalProperties json.RawMessage            `json:"additionalProperties"`
}

// typeOf writes a JSON Schema as a TypeScript type.
func typeOf(raw json.RawMessage, depth int) string {
	var s schema
	if depth > maxTypeDepth || json.Unmarshal(raw, &s) != nil {
		return "any"
	}
	if len(s.Const) > 0 {
		return literal(s.Const)
	}
	if len(s.Enum) > 0 {
		var parts []string
		for _, e := range s.Enum {
			parts = append(parts, literal(e))
		}
		return strings.Join(parts, "|")
	}
	if alts := append(s.AnyOf, s.OneOf...); len(alts) > 0 {
		var parts []string
		for _, a := range alts {
			parts = append(parts, typeOf(a, depth+1))
		}
		return strings.Join(dedupe(parts), "|")
	}
	var types []string
	if len(s.Type) > 0 {
		var one string
		if json.Unmarshal(s.Type, &one) == nil {
			types = []string{one}
		} else {
			_ = json.Unmarshal(s.Type, &types)
		}
	}
	if len(types) == 0 {
		switch {
		case s.Properties != nil:
			types = []string{"object"}
		case len(s.Items) > 0:
			types = []string{"array"}
		default:
			return "any"
		}
	}
	var parts []string
	for _, t := range types {
		parts = append(parts, typeName(t, &s, depth))
	}
	return strings.Join(dedupe(parts), "|")
}

func typeName(t string, s *schema, depth int) string {
	switch t {
	case "string":
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "null":
		return "null"
	case "array":
		if len(s.Items) == 0 {
			return "any[]"
		}
		it := typeOf(s.Items, depth+1)
		if strings.ContainsAny(it, "|&") {
			it = "(" + it + ")"
		}
		return it + "[]"
	case "object":
		return objectType(s, depth)
	}
	return "any"
}

func objectType(s *schema, depth int) string {
	if len(s.Properties) == 0 {
		if len(s.AdditionalProperties) > 0 && string(s.AdditionalProperties) != "true" && string(s.AdditionalProperties) != "false" {
			return "Record<string," + typeOf(s.AdditionalProperties, depth+1) + ">"
		}
		if string(s.AdditionalProperties) == "false" {
			return "{}"
		}
		return "Record<string,any>"
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	// Required first, then by name: what must be passed reads first.
	sort.Slice(names, func(i, j int) bool {
		if req[names[i]] != req[names[j]] {
			return req[names[i]]
		}
		return names[i] < names[j]
	})
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range names {
		if i == maxProps {
			b.WriteString("[k:string]:any")
			break
		}
		if i > 0 {
			b.WriteByte(';')
		}
		if ident.MatchString(k) {
			b.WriteString(k)
		} else {
			b.WriteString(strconv.Quote(k))
		}
		if !req[k] {
			b.WriteByte('?')
		}
		b.WriteByte(':')
		b.WriteString(typeOf(s.Properties[k], depth+1))
	}
	b.WriteByte('}')
	return b.String()
}

// literal writes a JSON value as a TypeScript literal type.
func literal(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "any"
	}
	switch v.(type) {
	case string, float64, bool, nil:
		b, _ := json.Marshal(v)
		return string(b)
	}
	return "any"
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
