// Package profile converts a list of MCP tools into the tool-definition
// format of a model provider (OpenAI, Anthropic, Gemini), normalising
// what that provider rejects, and leads the provider's tool calls back to
// the original tools: [Convert] returns the converted list and a
// [Mapping] whose Resolve turns a provider-side name and arguments into
// the original tool name and arguments.
//
// It serves `switchboard tools --format` and the same call in the Go
// API. It is pure: no I/O, no clock, no randomness; the same
// input gives the same bytes. It imports nothing from Switchboard but
// internal/jsonscan (the JSON reader) and internal/names (the rule that
// fits a name with a hash suffix), and must not: the host calls it,
// not the other way round. A schema or arguments object that repeats a
// key is refused.
//
// # What each format does
//
// mcp: the identity. Names, titles, descriptions and both schemas as
// given (compacted); nothing to resolve.
//
// openai, openai-responses and anthropic take JSON Schema, so the schema
// is changed only where these providers, or the OpenAI-compatible servers
// that read the openai shape, are known to fail:
//   - every "$ref" is inlined and "$defs"/"definitions" (and $id, $schema,
//     anchors, $comment) dropped. OpenAI and Anthropic themselves resolve
//     local references, but many OpenAI-compatible servers do not, and an
//     inlined schema is the one shape every consumer reads. A reference
//     that recurses is expanded twice on a path, then cut: replaced by a
//     permissive schema ({"description":"Any JSON value (a recursive
//     reference ... not expanded further)."}) that accepts any value, so
//     deeper arguments still pass and the tool validates them. Expansion
//     stops the same way after 4096 schema nodes, against exponential
//     growth.
//   - "allOf", "anyOf", "oneOf" at the top level are merged into the
//     top-level object: all branches' properties, and as required only
//     what every anyOf/oneOf branch requires (Anthropic: "input_schema
//     does not support oneOf, allOf, or anyOf at the top level").
//   - the top level is {"type":"object","properties":{...}}; nested
//     object schemas get "properties": {} and array schemas "items": {}
//     when they lack them (OpenAI: "array schema missing items").
//   - strict mode is not set: it would require every property to be
//     required and additionalProperties false, which changes the tool.
//
// None of these changes the shape of the arguments: for these formats
// Resolve returns them byte for byte.
//
// gemini converts to Gemini's Schema, a subset of OpenAPI 3.0:
//   - references inlined as above; allOf merged; anyOf/oneOf flattened
//     (a null branch sets "nullable"; object branches merged as above;
//     branches of one scalar type merged, enums united; otherwise the
//     first branch); type arrays such as ["string","null"] become one
//     type and "nullable";
//   - types in upper case (STRING, NUMBER, INTEGER, BOOLEAN, ARRAY,
//     OBJECT), and only the keywords type, format, description, nullable,
//     enum, items, properties, required, minItems, maxItems, minLength,
//     maxLength, minimum and maximum are kept; "title" becomes the
//     description when there is none; enums are kept only on strings
//     (others are listed in the description, "Allowed values: 1, 2."),
//     formats only where Gemini accepts them (others are named in the
//     description);
//   - "required" lists only properties that exist;
//   - property names that Vertex AI does not accept
//     (^[a-zA-Z_][a-zA-Z0-9_]{0,63}$) are renamed like tool names;
//   - what Gemini cannot express (a value of any type, an object with no
//     declared properties, a cut recursion, an array without items)
//     becomes a STRING described as "A JSON value, encoded as a string.";
//   - a tool without parameters gets no "parameters" (Gemini rejects an
//     OBJECT with empty properties: "should be non-empty for OBJECT
//     type"), and one whose input is a free-form map gets a single
//     required string parameter "arguments" holding it as JSON.
//
// Renamed properties, JSON strings and the "arguments" wrapper change the
// arguments' shape; Resolve undoes them (renames back, JSON strings
// decoded, the wrapper unwrapped). A value that is not of the shape the
// converted schema declared passes through unchanged, for the tool to
// reject.
//
// # Names
//
// A tool name the provider rejects gets a new name: each unsupported
// character becomes "_" (runs collapse), a leading "_" is added where the
// provider wants a letter first, the result is cut to leave room, and "_"
// plus the first 8 hex digits of SHA-256 of the original name is
// appended. Names that fit are kept as they are and win any clash; the
// others are assigned in sorted order, taking more hash digits on the
// (improbable) clash, so the mapping depends only on the set of names.
//
//	openai, anthropic  ^[a-zA-Z0-9_-]{1,64}$
//	gemini             ^[a-zA-Z_][a-zA-Z0-9_-]{0,62}$
//
// # Sources
//
// Read in November 2026 through the project's documentation search:
//   - OpenAI function name: "Must be a-z, A-Z, 0-9, or contain underscores
//     and dashes, with a maximum length of 64" (the API reference, as
//     generated into client libraries, e.g. docs.rs openai-client-base
//     ChatCompletionFunctions); the API's own error quotes the pattern
//     ^[a-zA-Z0-9_-]{1,64}$. "array schema missing items": OpenAI's error
//     for an array schema without items (e.g. sigoden/aichat#1049,
//     mark3labs/mcphost#35).
//   - Anthropic tool name: "Must match the regex ^[a-zA-Z0-9_-]{1,64}$"
//     (Messages API Tool object); top-level oneOf/allOf/anyOf rejected
//     (error text quoted in anthropics/claude-code#5319 and
//     anthropics/claude-code#5973).
//   - Gemini function name: "Must start with a letter or an underscore.
//     Must be a-z, A-Z, 0-9, or contain underscores, dots and dashes, with
//     a maximum length of 64" (Vertex AI FunctionDeclaration; the Gemini
//     API's older reference says "underscores and dashes, with a maximum
//     length of 63"; dots are not taken here, and 63 is). Parameter names
//     "must start with a letter or an underscore and must only contain
//     chars a-z, A-Z, 0-9, or underscores with a maximum length of 64"
//     (same page). Schema: "a select subset of an OpenAPI 3.0 schema
//     object" with the fields listed above (Vertex AI v1 Schema; js-genai
//     Schema); enum is "Possible values of the element of Type.STRING";
//     string format "must be either 'enum' or 'date-time'" with the Gemini
//     Developer API (Firebase AI SchemaShared). Parameters may be left
//     unset for a function with no parameters, and an OBJECT with empty
//     properties is rejected (error quoted in agno-agi/agno#2112,
//     pipecat-ai/pipecat-flows#110).
//
// testdata/README.md lists the golden files and how to regenerate them.
package profile
