package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// argCheck is what checking a call's arguments against the tool's input
// schema found: problems refuse the call (exit 2), warnings go to stderr
// and the call is made.
type argCheck struct {
	problems []string
	warnings []string
}

// checkArgs checks args (a JSON object, or nil for none) against schema,
// the tool's input schema as its server sent it. The verdict is
// jsonschema-go's validator's; the problems name the top-level arguments
// at fault where the schema's own properties, required and
// additionalProperties say which. Schemas are untrusted: one that cannot
// be read or resolved is a warning, and the arguments go unchecked.
// Arguments the schema does not list are a problem when it says
// additionalProperties false, else a warning.
func checkArgs(args, schema json.RawMessage) argCheck {
	var c argCheck
	if len(bytes.TrimSpace(schema)) == 0 {
		return c
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		c.warnings = append(c.warnings, fmt.Sprintf("the tool's input schema cannot be read (%v); the arguments go unchecked", err))
		return c
	}
	switch s.Schema {
	case "", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema":
	default: // the drafts jsonschema-go validates
		c.warnings = append(c.warnings, fmt.Sprintf("the tool's input schema is in a draft the check does not know (%s); the arguments go unchecked", s.Schema))
		return c
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		c.warnings = append(c.warnings, fmt.Sprintf("the tool's input schema cannot be resolved (%v); the arguments go unchecked", err))
		return c
	}
	obj := map[string]any{}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &obj); err != nil {
			c.problems = append(c.problems, fmt.Sprintf("arguments: %v", err))
			return c
		}
	}
	verr := rs.Validate(obj)
	var top struct {
		AdditionalProperties json.RawMessage `json:"additionalProperties"`
	}
	json.Unmarshal(schema, &top)
	closed := string(bytes.TrimSpace(top.AdditionalProperties)) == "false"
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		p, listed := s.Properties[k]
		switch {
		case !listed && len(s.Properties) > 0 || !listed && closed:
			if len(s.PatternProperties) > 0 && !closed {
				continue
			}
			msg := fmt.Sprintf("%s: not an argument of this tool (it takes: %s)", k, orNone(slices.Sorted(maps.Keys(s.Properties))))
			if closed {
				c.problems = append(c.problems, msg)
			} else {
				c.warnings = append(c.warnings, msg+"; sent anyway")
			}
		case listed && p != nil:
			if want := typeNames(p); want != nil && !typeMatches(obj[k], want) {
				c.problems = append(c.problems, fmt.Sprintf("%s: expected %s, got %s", k, strings.Join(want, " or "), shortJSON(obj[k])))
			}
		}
	}
	for _, k := range s.Required {
		if _, ok := obj[k]; !ok {
			c.problems = append(c.problems, fmt.Sprintf("%s: required, missing", k))
		}
	}
	if verr != nil && len(c.problems) == 0 {
		// Something below the top level, or a keyword other than type,
		// required and additionalProperties: the validator's words.
		c.problems = append(c.problems, verr.Error())
	}
	if verr == nil {
		// The validator has the last word: what it accepts is sent (a
		// property type the schema's composition overrides, say).
		c.problems = nil
	}
	return c
}

// typeNames returns the JSON types a property schema allows, nil for any.
func typeNames(p *jsonschema.Schema) []string {
	if p.Type != "" {
		return []string{p.Type}
	}
	return p.Types
}

// typeMatches reports whether v (decoded by encoding/json) is of one of
// the JSON types want; an integer is a number too.
func typeMatches(v any, want []string) bool {
	got := "null"
	switch x := v.(type) {
	case bool:
		got = "boolean"
	case float64:
		got = "number"
		if _, frac := math.Modf(x); frac == 0 {
			got = "integer"
		}
	case string:
		got = "string"
	case []any:
		got = "array"
	case map[string]any:
		got = "object"
	}
	return slices.Contains(want, got) || got == "integer" && slices.Contains(want, "number")
}

// shortJSON is v as compact JSON, shortened for a message.
func shortJSON(v any) string {
	b, _ := json.Marshal(v)
	if r := []rune(string(b)); len(r) > 40 {
		return string(r[:39]) + "…"
	}
	return string(b)
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "no arguments"
	}
	return strings.Join(names, ", ")
}
