// Package schema checks and normalises the JSON Schemas that MCP servers
// advertise for their tools (inputSchema and outputSchema), before the host
// registers a tool.
//
// Servers are untrusted, so a schema is treated as hostile input. The
// checks run cheapest and safest first, so that no step can be made to do
// unbounded work:
//
//  1. size, from len(raw) alone, before a byte is read;
//  2. nesting depth, object count and compact size, in one non-recursive
//     pass over the bytes that stops at the first limit exceeded;
//  3. JSON validity (and UTF-8), now that depth is known to be bounded;
//  4. the meaning: an object schema of type "object", no duplicate keys,
//     and no reference that points outside the document. This walk
//     recurses, which is safe only because step 2 bounded the depth.
//
// A schema that passes is returned compact and otherwise byte-for-byte as
// the server sent it, apart from the normalisations documented on [Input]
// and [Output]: the output is spliced from the input, never re-encoded, so
// big numbers, key order, unknown keywords and escapes survive exactly.
//
// The package does no I/O and never fetches anything. In particular a
// "$ref" is never resolved, over a network or otherwise: it is only
// required to be a local fragment ("#..."), so that no validator that the
// schema is later handed to has a reason to fetch either. A "$id" may
// still name an absolute URL: it sets a base URI, but a fragment-only
// reference resolves within its own (embedded) schema resource whatever the
// base, so $id cannot make a checked reference remote.
//
// internal/jsonscan measures and walks the bytes.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// Defaults for the zero fields of [Limits].
const (
	DefaultMaxDepth      = 32
	DefaultMaxBytes      = 256 << 10
	DefaultMaxSubschemas = 2048
)

// rawSlack is how much larger than MaxBytes the raw input may be: a
// pretty-printed schema is larger than its compact form, and its compact
// size is only known after a pass over the bytes. Input larger than
// rawSlack*MaxBytes is rejected without being read at all.
const rawSlack = 4

// Limits bound the work a schema can cause. A field that is zero (or
// negative, which is meaningless) takes its default.
type Limits struct {
	// MaxDepth is the deepest nesting of JSON objects and arrays in the
	// document; a top-level {} has depth 1. Default [DefaultMaxDepth].
	MaxDepth int
	// MaxBytes is the size of the compact document, before and after
	// normalisation. Raw input of more than 4*MaxBytes is rejected before
	// it is scanned. Default [DefaultMaxBytes].
	MaxBytes int
	// MaxSubschemas is the number of JSON objects anywhere in the
	// document, schemas or not: it bounds the semantic walk and whatever
	// validator the schema is later compiled by. Default
	// [DefaultMaxSubschemas].
	MaxSubschemas int
}

// WithDefaults returns l with each zero (or negative) field set to its
// default.
func (l Limits) WithDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxSubschemas <= 0 {
		l.MaxSubschemas = DefaultMaxSubschemas
	}
	return l
}

// Values of [Error].Which.
const (
	WhichInput  = "inputSchema"
	WhichOutput = "outputSchema"
)

// Values of [Error].Reason. They are stable: callers may switch on them and
// record them.
const (
	ReasonMissing           = "missing"             // Input got nothing, or null
	ReasonInvalidJSON       = "invalid_json"        // not JSON, not UTF-8, or an object with a duplicate key
	ReasonNotObject         = "not_object"          // not a JSON object, or "type" is not "object"
	ReasonInvalidSchema     = "invalid_schema"      // a top-level keyword MCP relies on has the wrong shape
	ReasonTooDeep           = "too_deep"            // nesting deeper than Limits.MaxDepth
	ReasonTooLarge          = "too_large"           // more bytes than Limits.MaxBytes
	ReasonTooManySubschemas = "too_many_subschemas" // more objects than Limits.MaxSubschemas
	ReasonRemoteRef         = "remote_ref"          // a reference that is not a local fragment
)

// Error says why a schema was rejected. Reason is one of the Reason
// constants and is stable; Detail is for humans, and anything in it that
// came from the server is quoted and clipped.
type Error struct {
	Which  string // WhichInput or WhichOutput
	Reason string // a Reason constant
	Detail string // e.g. `$ref "https://evil.example/x.json" is not a local fragment`
}

func (e *Error) Error() string {
	return "schema: " + e.Which + " rejected (" + e.Reason + "): " + e.Detail
}

// Input checks and normalises a tool's inputSchema, given as raw JSON.
//
// The schema must be a JSON object whose "type" is "object". An absent
// "type" is added as the first key; a type array is accepted only when it
// is exactly ["object"], and is rewritten to "object". An absent
// "properties" is added as {} right after "type"; a present one must be an
// object. Every other key and value is kept byte-for-byte and in order.
// The result is compact JSON, and Input of the result returns it unchanged.
//
// Empty raw input, or null, is rejected as [ReasonMissing]: MCP requires
// every tool to have an input schema. Errors are of type *[Error].
func Input(raw []byte, l Limits) (json.RawMessage, error) {
	out, err := check(WhichInput, raw, l.WithDefaults(), true)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Output checks and normalises a tool's outputSchema, given as raw JSON.
// Nil, empty or null raw input means the tool declares no output schema,
// and Output returns (nil, nil).
//
// MCP requires an output schema to be an object schema too, so the rules
// of [Input] apply, except that "properties" is not added when absent.
func Output(raw []byte, l Limits) (json.RawMessage, error) {
	out, err := check(WhichOutput, raw, l.WithDefaults(), false)
	switch {
	case err == nil:
		return out, nil
	case err.Reason == ReasonMissing:
		return nil, nil
	default:
		return nil, err
	}
}

// check runs the checks in the order the package comment gives, and
// splices the normalised document. l has its defaults applied. It returns
// the concrete type so that callers cannot wrap a nil *Error in an error.
func check(which string, raw []byte, l Limits, addProperties bool) (json.RawMessage, *Error) {
	fail := func(reason, format string, args ...any) (json.RawMessage, *Error) {
		return nil, &Error{Which: which, Reason: reason, Detail: fmt.Sprintf(format, args...)}
	}

	// 1. Size, before reading anything. (The guard keeps the product from
	// overflowing for absurd limits.)
	if l.MaxBytes <= maxInt/rawSlack && len(raw) > rawSlack*l.MaxBytes {
		return fail(ReasonTooLarge, "%d bytes > %d, %d× the limit of %d allowing for whitespace",
			len(raw), rawSlack*l.MaxBytes, rawSlack, l.MaxBytes)
	}
	if t := trimSpace(raw); len(t) == 0 || string(t) == "null" {
		return fail(ReasonMissing, "no schema")
	}

	// 2. Depth, object count and compact size, without recursion.
	st, err := scan(raw, l)
	if err != nil {
		err.Which = which
		return nil, err
	}

	// 3. Validity. The walk and the splice work on the compact form: no
	// insignificant whitespace, nothing else changed (json.Compact does
	// not escape or re-encode). A document whose compact size is its
	// length has no whitespace to remove, and is its own compact form when
	// it is valid: servers send compact JSON, so the common case costs one
	// validating scan and no copy.
	doc := raw
	if st.Size != len(raw) || !jsonscan.Valid(raw) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return fail(ReasonInvalidJSON, "%v", err)
		}
		doc = buf.Bytes()
	}
	if !utf8.Valid(doc) {
		return fail(ReasonInvalidJSON, "not valid UTF-8")
	}

	// 4. Meaning.
	if doc[0] != '{' {
		return fail(ReasonNotObject, "the schema is %s, not an object", kindOf(doc))
	}
	top := make([]member, 0, 8)
	if _, err := walkObject(doc, 0, false, &top); err != nil {
		detail := err.detail
		if p := err.pointer(); p != "" {
			detail += " (at " + strconv.Quote(p) + ")"
		}
		return fail(err.reason, "%s", detail)
	}

	var typ, props []byte
	for _, m := range top {
		switch string(m.key) {
		case "type":
			typ = m.val
		case "properties":
			props = m.val
		}
	}
	if typ != nil && !isObjectType(typ) {
		return fail(ReasonNotObject, `type %s is not "object"`, show(typ))
	}
	if props != nil && props[0] != '{' {
		return fail(ReasonInvalidSchema, `"properties" is %s, not an object`, kindOf(props))
	}

	out := splice(doc, top, typ == nil, addProperties && props == nil)

	// Normalisation added bytes, and "properties":{} adds an object and
	// may add a level: the result must still be within the limits, or
	// Input(Input(x)) would fail where Input(x) succeeded. The figures are
	// upper bounds (rewriting ["object"] can only lower the depth).
	if props == nil && addProperties {
		st.Objects++
		st.Depth = max(st.Depth, 2)
	}
	switch {
	case len(out) > l.MaxBytes:
		return fail(ReasonTooLarge, "%d bytes > %d after normalisation", len(out), l.MaxBytes)
	case st.Depth > l.MaxDepth:
		return fail(ReasonTooDeep, "depth %d > %d after normalisation", st.Depth, l.MaxDepth)
	case st.Objects > l.MaxSubschemas:
		return fail(ReasonTooManySubschemas, "%d objects > %d after normalisation", st.Objects, l.MaxSubschemas)
	}
	return out, nil
}

const maxInt = int(^uint(0) >> 1)

// isObjectType reports whether a "type" value means exactly "object":
// the string, or an array holding only that string. Values are decoded, so
// an escaped spelling ("\u006fbject") counts too.
func isObjectType(v []byte) bool {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s == "object"
	}
	var a []string
	return json.Unmarshal(v, &a) == nil && len(a) == 1 && a[0] == "object"
}

// splice builds the normalised document from the compact doc and its
// top-level members, copying every member's bytes except "type", which is
// written canonically (its value has been checked to mean "object").
func splice(doc []byte, top []member, addType, addProperties bool) []byte {
	const (
		typeMember  = `"type":"object"`
		propsMember = `"properties":{}`
	)
	out := make([]byte, 0, len(doc)+len(typeMember)+len(propsMember)+2)
	out = append(out, '{')
	if addType {
		out = append(out, typeMember...)
		if addProperties {
			out = append(out, ","+propsMember...)
		}
	}
	for i, m := range top {
		if i > 0 || addType {
			out = append(out, ',')
		}
		if string(m.key) == "type" {
			out = append(out, typeMember...)
			if addProperties {
				out = append(out, ","+propsMember...)
			}
			continue
		}
		out = append(out, m.raw...)
	}
	return append(out, '}')
}

// trimSpace trims JSON whitespace, which is narrower than bytes.TrimSpace's.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// kindOf names the kind of a valid JSON value, for messages.
func kindOf(v []byte) string {
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// maxShow is how much of a server's bytes a message quotes.
const maxShow = 64

// show renders a raw JSON value from the server for a message: clipped,
// and quoted unless it is plain printable ASCII, so that it cannot carry
// terminal escapes or bidi overrides into logs.
func show(v []byte) string {
	clipped := len(v) > maxShow
	if clipped {
		v = v[:maxShow]
	}
	s := string(v)
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			s = strconv.QuoteToASCII(s)
			break
		}
	}
	if clipped {
		s += "..."
	}
	return s
}

// clip shortens a decoded string from the server for a message, at a rune
// boundary; the caller quotes it.
func clip(s string) string {
	if len(s) <= maxShow {
		return s
	}
	i := maxShow
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}
