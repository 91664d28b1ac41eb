package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// This file checks converted tools against each provider's documented
// constraints (doc.go, Sources), independently of the converter: the
// patterns and keyword sets are written out again here from the
// documentation, not taken from the code under test.

var (
	openAIName    = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	anthropicName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	geminiName    = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_-]{0,62}$`)
	geminiParam   = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`)

	// The Gemini Schema fields this package may emit (a subset of Vertex
	// AI v1 Schema and js-genai Schema).
	geminiAllowed = set("type", "format", "description", "nullable", "enum", "items",
		"properties", "required", "minItems", "maxItems", "minLength", "maxLength",
		"minimum", "maximum")
	geminiTypes       = set("STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT")
	geminiFormatCheck = map[string]map[string]bool{
		"STRING": set("enum", "date-time"), "NUMBER": set("float", "double"), "INTEGER": set("int32", "int64"),
	}
	// Keywords whose values are subschemas, for walking JSON Schema output.
	walkMaps  = set("properties", "patternProperties", "dependentSchemas")
	walkOne   = set("items", "additionalItems", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema")
	walkLists = set("allOf", "anyOf", "oneOf", "prefixItems")
)

func set(ss ...string) map[string]bool {
	m := map[string]bool{}
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// checkTools checks a whole converted list: each tool, and that names are
// unique.
func checkTools(f Format, tools []json.RawMessage) []string {
	var errs []string
	seen := map[string]bool{}
	for i, raw := range tools {
		name, es := checkTool(f, raw)
		for _, e := range es {
			errs = append(errs, fmt.Sprintf("tool %d (%s): %s", i, name, e))
		}
		if seen[name] {
			errs = append(errs, fmt.Sprintf("tool %d: duplicate name %q", i, name))
		}
		seen[name] = true
	}
	return errs
}

// checkTool returns the provider-side name of one converted tool and
// every way it breaks the format's constraints.
func checkTool(f Format, raw json.RawMessage) (string, []string) {
	var t map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&t); err != nil {
		return "", []string{"not a JSON object: " + err.Error()}
	}
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	allowKeys := func(m map[string]any, keys ...string) {
		ok := set(keys...)
		for k := range m {
			if !ok[k] {
				bad("unexpected key %q", k)
			}
		}
	}
	var name string
	switch f {
	case MCP:
		name, _ = t["name"].(string)
		allowKeys(t, "name", "title", "description", "inputSchema", "outputSchema")
		if s, ok := t["inputSchema"].(map[string]any); !ok || s["type"] != "object" {
			bad("inputSchema is not an object schema")
		}
	case OpenAI, OpenAIResponses:
		fn := t
		if f == OpenAI {
			allowKeys(t, "type", "function")
			fn, _ = t["function"].(map[string]any)
			if fn == nil {
				return "", []string{"no function object"}
			}
			allowKeys(fn, "name", "description", "parameters")
		} else {
			allowKeys(t, "type", "name", "description", "parameters")
		}
		if t["type"] != "function" {
			bad("type is %v", t["type"])
		}
		name, _ = fn["name"].(string)
		if !openAIName.MatchString(name) {
			bad("name %q does not match %s", name, openAIName)
		}
		if _, ok := fn["strict"]; ok {
			bad("strict is set")
		}
		errs = append(errs, checkJSONSchemaRoot(fn["parameters"])...)
	case Anthropic:
		allowKeys(t, "name", "description", "input_schema")
		name, _ = t["name"].(string)
		if !anthropicName.MatchString(name) {
			bad("name %q does not match %s", name, anthropicName)
		}
		errs = append(errs, checkJSONSchemaRoot(t["input_schema"])...)
	case Gemini:
		allowKeys(t, "name", "description", "parameters")
		name, _ = t["name"].(string)
		if !geminiName.MatchString(name) {
			bad("name %q does not match %s", name, geminiName)
		}
		if p, ok := t["parameters"]; ok {
			pm, _ := p.(map[string]any)
			if pm == nil || pm["type"] != "OBJECT" {
				bad("parameters is not an OBJECT schema")
			}
			checkGemini("parameters", p, &errs)
		}
	default:
		bad("unknown format %q", f)
	}
	if d, ok := t["description"]; ok {
		if _, ok := d.(string); !ok {
			bad("description is not a string")
		}
	}
	return name, errs
}

// checkJSONSchemaRoot checks an OpenAI parameters or Anthropic
// input_schema: an object schema at the top with properties and no
// combinator, and no reference anywhere.
func checkJSONSchemaRoot(v any) []string {
	var errs []string
	root, ok := v.(map[string]any)
	if !ok {
		return []string{"schema is not an object"}
	}
	if root["type"] != "object" {
		errs = append(errs, fmt.Sprintf("top-level type is %v", root["type"]))
	}
	if _, ok := root["properties"].(map[string]any); !ok {
		errs = append(errs, "top-level properties missing")
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if _, ok := root[k]; ok {
			errs = append(errs, "top-level "+k)
		}
	}
	checkJSONSchema("", root, &errs)
	return errs
}

func checkJSONSchema(path string, v any, errs *[]string) {
	if _, ok := v.(bool); ok {
		return
	}
	s, ok := v.(map[string]any)
	if !ok {
		*errs = append(*errs, path+": subschema is not an object or boolean")
		return
	}
	for _, k := range []string{"$ref", "$defs", "definitions", "$dynamicRef", "$recursiveRef"} {
		if _, ok := s[k]; ok {
			*errs = append(*errs, path+": has "+k)
		}
	}
	typ := map[string]bool{}
	switch t := s["type"].(type) {
	case string:
		typ[t] = true
	case []any:
		for _, e := range t {
			if str, ok := e.(string); ok {
				typ[str] = true
			}
		}
	}
	if typ["object"] {
		if _, ok := s["properties"].(map[string]any); !ok {
			*errs = append(*errs, path+": object without properties")
		}
	}
	if typ["array"] {
		if _, ok := s["items"]; !ok {
			*errs = append(*errs, path+": array without items")
		}
	}
	for k, sub := range s {
		switch {
		case walkMaps[k]:
			if m, ok := sub.(map[string]any); ok {
				for name, e := range m {
					checkJSONSchema(path+"/"+k+"/"+name, e, errs)
				}
			}
		case walkLists[k] || walkOne[k]:
			if a, ok := sub.([]any); ok {
				for i, e := range a {
					checkJSONSchema(fmt.Sprintf("%s/%s/%d", path, k, i), e, errs)
				}
			} else {
				checkJSONSchema(path+"/"+k, sub, errs)
			}
		}
	}
}

// checkGemini checks one schema of Gemini's subset.
func checkGemini(path string, v any, errs *[]string) {
	bad := func(format string, a ...any) { *errs = append(*errs, path+": "+fmt.Sprintf(format, a...)) }
	s, ok := v.(map[string]any)
	if !ok {
		bad("not an object")
		return
	}
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !geminiAllowed[k] {
			bad("keyword %q is not in Gemini's Schema", k)
		}
	}
	typ, _ := s["type"].(string)
	if !geminiTypes[typ] {
		bad("type %v", s["type"])
	}
	if d, ok := s["description"]; ok {
		if _, ok := d.(string); !ok {
			bad("description is not a string")
		}
	}
	if n, ok := s["nullable"]; ok && n != true {
		bad("nullable is %v", n)
	}
	if f, ok := s["format"]; ok {
		fs, _ := f.(string)
		if !geminiFormatCheck[typ][fs] {
			bad("format %v not accepted for %s", f, typ)
		}
	}
	if e, ok := s["enum"]; ok {
		a, _ := e.([]any)
		if typ != "STRING" || len(a) == 0 {
			bad("enum on %s (or empty)", typ)
		}
		for _, x := range a {
			if _, ok := x.(string); !ok {
				bad("enum value %v is not a string", x)
			}
		}
	}
	for _, k := range []string{"minItems", "maxItems", "minLength", "maxLength"} {
		if n, ok := s[k]; ok {
			num, _ := n.(json.Number)
			if i, err := num.Int64(); err != nil || i < 0 {
				bad("%s is %v", k, n)
			}
		}
	}
	for _, k := range []string{"minimum", "maximum"} {
		if n, ok := s[k]; ok {
			if num, _ := n.(json.Number); num == "" || func() bool { _, err := num.Float64(); return err != nil }() {
				bad("%s is %v", k, n)
			}
		}
	}
	_, hasItems := s["items"]
	_, hasProps := s["properties"]
	if hasItems && typ != "ARRAY" || hasProps && typ != "OBJECT" {
		bad("items or properties on %s", typ)
	}
	switch typ {
	case "ARRAY":
		if !hasItems {
			bad("ARRAY without items")
		} else {
			checkGemini(path+"/items", s["items"], errs)
		}
	case "OBJECT":
		props, _ := s["properties"].(map[string]any)
		if len(props) == 0 {
			bad("OBJECT with empty properties")
		}
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if !geminiParam.MatchString(name) {
				bad("property name %q does not match %s", name, geminiParam)
			}
			checkGemini(path+"/properties/"+name, props[name], errs)
		}
		if r, ok := s["required"]; ok {
			a, _ := r.([]any)
			seen := map[string]bool{}
			for _, x := range a {
				str, _ := x.(string)
				if _, ok := props[str]; !ok {
					bad("required %v is not a property", x)
				}
				if seen[str] {
					bad("required %q twice", str)
				}
				seen[str] = true
			}
		}
	default:
		if _, ok := s["required"]; ok {
			bad("required on %s", typ)
		}
	}
}

// errsString joins errors for a failure message, capped.
func errsString(errs []string) string {
	if len(errs) > 20 {
		errs = append(errs[:20:20], fmt.Sprintf("... and %d more", len(errs)-20))
	}
	return strings.Join(errs, "\n")
}
