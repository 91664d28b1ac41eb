// Package drift is Switchboard's defence against a "rug pull": an MCP
// server that a person approved and that later changes what one of its
// tools says or does. When a person first approves a tool, the caller pins
// its canonical [Definition] (and stores its [Hash]); whenever the server's
// tools are read again (after notifications/tools/list_changed, a
// reconnect or a restart), [Compare] finds the tools whose definition no
// longer matches its pin, the caller holds those back until they are
// approved again, and [Diff] shows the person what changed, readably and
// safely for a terminal. A server's instructions are pinned the same way
// ([InstructionsDefinition]), under the tool name "".
//
// The canonical form is a storage format: pins written by one version of
// Switchboard must match definitions computed by the next, so any change to
// the rules in [Definition] makes every pinned tool look changed.
//
// The package keeps no state and does no I/O; storing pins, holding tools
// back and asking for approval belong to its callers.
package drift

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Definition returns the canonical JSON of the parts of a tool that define
// its behaviour for a model: name, title, description, inputSchema,
// outputSchema and annotations.
//
// Canonical means:
//
//   - object keys sorted by their UTF-8 bytes (as encoding/json sorts map
//     keys), recursively, so also inside schemas;
//   - no insignificant whitespace;
//   - numbers kept exactly as written in the JSON the schema marshals to,
//     so 1.0 and 1 are different definitions. Deciding that they mean the
//     same would take a numeric normalisation (JCS's, say) that loses
//     digits beyond float64; telling them apart costs at most a needless
//     re-approval, never a missed change. In practice the difference is
//     seen only for schemas held as json.RawMessage: go-sdk's client
//     decodes a server's schemas into map[string]any, where both are
//     already the float64 1;
//   - strings in encoding/json's standard encoding (so <, > and & are
//     \u003c, \u003e and \u0026, and invalid UTF-8 is U+FFFD);
//   - absent, null and empty-string fields omitted, as are annotations
//     whose hints are all unset: an empty annotations object is the same as
//     none. mcp.ToolAnnotations holds readOnlyHint and idempotentHint as
//     plain bools, so false (their default) and absent are the same too;
//     destructiveHint and openWorldHint are pointers, so an explicit value
//     is kept even when it equals the default. The annotations are encoded
//     field by field here, not by their MarshalJSON, so that the
//     MCPGODEBUG=hintomitempty setting cannot change a pin.
//
// A schema whose JSON has a duplicate object key (possible only when it is
// held as raw JSON) is an error: JSON parsers disagree about which of the
// two wins, so such a schema has no single meaning to pin.
//
// Two tools that differ only in key order or whitespace have equal
// Definitions.
//
// Not part of the definition:
//
//   - _meta is free-form data between the programs at both ends, where
//     servers put tracing and session data that may differ on every
//     listing; pinning it would hold tools back for nothing. It is not
//     what the model is told, nor what a call does.
//   - icons are shown to people, never to the model, and name images by
//     URL: a pinned URL would not pin the image behind it anyway.
//   - execution (taskSupport, in the 2025-11-25 specification) is not a
//     field of go-sdk v1.8.0's mcp.Tool, so it cannot reach this package. It
//     says how a call is run (as a task or not), not what the call does or
//     what the model is told, so it would be left out even if it could.
func Definition(t *mcp.Tool) ([]byte, error) {
	if t == nil {
		return nil, fmt.Errorf("drift: nil tool")
	}
	var def object
	if a := annotations(t.Annotations); a != nil {
		def = append(def, member{"annotations", a})
	}
	if t.Description != "" {
		def = append(def, member{"description", t.Description})
	}
	for _, s := range []struct {
		key    string
		schema any
	}{{"inputSchema", t.InputSchema}, {"outputSchema", t.OutputSchema}} {
		if s.schema == nil {
			continue
		}
		v, err := valueOf(s.schema)
		if err != nil {
			return nil, fmt.Errorf("drift: tool %q: %s: %w", t.Name, s.key, err)
		}
		if v != nil {
			def = append(def, member{s.key, v})
		}
	}
	if t.Name != "" {
		def = append(def, member{"name", t.Name})
	}
	if t.Title != "" {
		def = append(def, member{"title", t.Title})
	}
	def.sort() // already in order: this keeps it so if a field is added
	return compact(def), nil
}

// annotations returns the canonical form of a, or nil if no hint is set.
func annotations(a *mcp.ToolAnnotations) object {
	if a == nil {
		return nil
	}
	var o object
	if a.DestructiveHint != nil {
		o = append(o, member{"destructiveHint", *a.DestructiveHint})
	}
	if a.IdempotentHint {
		o = append(o, member{"idempotentHint", true})
	}
	if a.OpenWorldHint != nil {
		o = append(o, member{"openWorldHint", *a.OpenWorldHint})
	}
	if a.ReadOnlyHint {
		o = append(o, member{"readOnlyHint", true})
	}
	if a.Title != "" {
		o = append(o, member{"title", a.Title})
	}
	return o
}

// InstructionsDefinition is the canonical form of a server's instructions:
// the string, JSON-encoded like the strings in [Definition].
func InstructionsDefinition(s string) []byte {
	return compact(s)
}

// Hash is "sha256:" followed by the lower-case hex SHA-256 of a canonical
// definition.
func Hash(def []byte) string {
	sum := sha256.Sum256(def)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Change is one tool whose definition differs from its pin.
type Change struct {
	// Tool is the tool's name, or "" for the server's instructions.
	Tool string
	// Old is the pinned definition, nil for a tool that was not pinned
	// before (a new tool).
	Old []byte
	// New is the current definition, nil for a tool the server no longer
	// lists (a removed tool).
	New []byte
}

// Compare returns the changes between pinned definitions and current ones,
// both keyed by tool name ("" for the instructions), sorted by tool name.
// Definitions are compared byte for byte, so both must be canonical. A nil
// definition counts as absent.
func Compare(pinned, current map[string][]byte) []Change {
	var changes []Change
	add := func(name string) {
		old, cur := pinned[name], current[name]
		if (old == nil) == (cur == nil) && bytes.Equal(old, cur) {
			return
		}
		changes = append(changes, Change{Tool: name, Old: old, New: cur})
	}
	for name := range pinned {
		add(name)
	}
	for name := range current {
		if _, ok := pinned[name]; !ok {
			add(name)
		}
	}
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Tool, b.Tool) })
	return changes
}

// PromptDefinition is the canonical JSON of a prompt as a model is shown
// it (name, title, description, arguments), by the rules of [Definition]:
// _meta and icons are left out.
func PromptDefinition(p *mcp.Prompt) ([]byte, error) {
	if p == nil {
		return nil, fmt.Errorf("drift: nil prompt")
	}
	return withoutMeta(p)
}

// TemplateDefinition is the canonical JSON of a resource template (name,
// title, uriTemplate, description, mimeType, annotations), by the rules
// of [Definition]: _meta and icons are left out.
func TemplateDefinition(t *mcp.ResourceTemplate) ([]byte, error) {
	if t == nil {
		return nil, fmt.Errorf("drift: nil resource template")
	}
	return withoutMeta(t)
}

// withoutMeta is the canonical JSON of v without its _meta and icons.
func withoutMeta(v any) ([]byte, error) {
	c, err := valueOf(v)
	if err != nil {
		return nil, fmt.Errorf("drift: %w", err)
	}
	o, ok := c.(object)
	if !ok {
		return nil, fmt.Errorf("drift: not an object")
	}
	o = slices.DeleteFunc(o, func(m member) bool { return m.key == "_meta" || m.key == "icons" })
	o.sort()
	return compact(o), nil
}
