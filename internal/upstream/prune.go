package upstream

import (
	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// Why this file exists.
//
// go-sdk refuses to decode any JSON-RPC message nested deeper than 1000
// levels (internal/json checkMaxDepth, run by jsonrpc.DecodeMessage). On
// stdio a message that fails to decode is fatal to the connection, so one
// tool whose inputSchema nests 10,000 levels deep takes every other tool of
// its server down with it. pruneDeep runs on the raw bytes before go-sdk
// sees them and replaces just the offending list entries with null, which
// the host already skips with a warning.
//
// Depth convention (matched byte for byte with go-sdk v1.8.0
// checkMaxDepth, and asserted by prune_test.go):
//   - every '{' or '[' outside a string adds one level, and the message is
//     refused as soon as an opener takes the depth above the limit; so the
//     top-level object itself is depth 1, and a message whose deepest
//     opener sits at depth exactly limit is accepted;
//   - '}' and ']' remove a level but never take it below zero, and nothing
//     checks that they match their opener;
//   - a '"' outside a string starts one; inside, '\' escapes the next byte
//     (whatever it is) and an unescaped '"' ends it.
// The scan works on bytes, not runes: none of the bytes that matter can
// occur inside a multi-byte UTF-8 sequence, valid or not.

// sdkMaxDepth is go-sdk's limit (defaultMaxDepth in its internal/json).
const sdkMaxDepth = 1000

// pruneBase is the depth of an element of result.<key>[i]: the message
// object (1), the result object (2) and the list (3) enclose it, so the
// element's own outermost bracket, if any, is at pruneBase+1.
const pruneBase = 3

// pruneDeep returns msg with every element of a too-deep list in a
// JSON-RPC response replaced by null.
//
// msg is one JSON-RPC message (a JSON object). If its nesting depth is <=
// limit, pruneDeep returns msg itself (same slice, no allocation) and 0:
// that check runs on every message, so it is one linear scan with no
// validation. Otherwise each element of result.<key>, for every member
// <key> of the top-level "result" object whose value is an array (tools,
// prompts, resources, resourceTemplates, ...), that would take the message
// above limit becomes the 4 bytes null, and pruned counts them.
//
// If the message would still be too deep after that (the depth is in
// result.structuredContent, in a request's params, in error.data, ...),
// pruneDeep returns msg unchanged and -1, and the caller lets go-sdk refuse
// it as it would have anyway. Invalid JSON is returned unchanged with 0:
// go-sdk refuses it on its own, and guessing at the structure of a broken
// message could turn it into a valid one that means something else.
//
// So when pruned > 0, out is valid JSON that passes go-sdk's depth check
// with this limit; when pruned is 0, out is msg, which passes it unless it
// is invalid JSON (which go-sdk refuses either way).
func pruneDeep(msg []byte, limit int) (out []byte, pruned int) {
	if !pruneTooDeep(msg, limit) {
		return msg, 0
	}
	// Only the rare too-deep message pays for a full parse.
	cuts, valid := pruneFind(msg, limit)
	if !valid {
		return msg, 0
	}
	if len(cuts) == 0 {
		return msg, -1
	}
	size := len(msg)
	for _, c := range cuts {
		size += len("null") - (c.end - c.start)
	}
	out = make([]byte, 0, size)
	prev := 0
	for _, c := range cuts {
		out = append(out, msg[prev:c.start]...)
		out = append(out, "null"...)
		prev = c.end
	}
	out = append(out, msg[prev:]...)
	// Checking the result with the very scan go-sdk's mirrors is what
	// makes the promise above hold, whatever else the message contains
	// (depth in a second "result" member, in "error", at the top level
	// of a batch, ...): pruneFind need only be right about what to cut,
	// not about whether cutting was enough.
	if pruneTooDeep(out, limit) {
		return msg, -1
	}
	return out, len(cuts)
}

// pruneTooDeep reports whether go-sdk's checkMaxDepth would refuse b for
// nesting deeper than limit. jsonscan.DeeperThan reads depth by that
// function's very rule (see the top of this file) and skips string
// contents with bytes.IndexByte, which is several times faster than
// looking at every byte: in a tools list most bytes are descriptions.
func pruneTooDeep(b []byte, limit int) bool {
	return jsonscan.DeeperThan(b, limit)
}

// pruneCut is a span msg[start:end] to be replaced by null.
type pruneCut struct{ start, end int }

// pruneFind parses msg and returns, in order, the spans of the elements of
// result.<key>[i] that take the message above limit; valid is false if
// msg is not valid JSON.
//
// It cannot use encoding/json's validation: json.Valid refuses anything
// nested deeper than 10,000 levels, which is exactly the hostile input
// this file exists for. So it validates with jsonscan at any depth
// (jsonscan.SkipDeep), which accepts what json.Valid accepts but for the
// limit, and FuzzPrune holds it to that. No input can exhaust the
// goroutine stack: the recursion below is three levels, and jsonscan is
// iterative.
//
// Every top-level "result" member is searched, duplicates included:
// which duplicate a decoder keeps is its business, and every one of them
// counts towards the depth. Keys are decoded, so an escaped key
// ("res\u0075lt"), which go-sdk's decoder reads as "result", cannot hide a
// deep list from the pruner.
func pruneFind(msg []byte, limit int) (cuts []pruneCut, valid bool) {
	skip := func(i int) (int, error) {
		end, _, err := jsonscan.SkipDeep(msg, i)
		return end, err
	}
	// An element of a list, at depth pruneBase.
	element := func(_, i int) (int, error) {
		end, depth, err := jsonscan.SkipDeep(msg, i)
		if err == nil && depth > 0 && pruneBase+depth > limit {
			cuts = append(cuts, pruneCut{i, end})
		}
		return end, err
	}
	// A member of the result object: lists are searched.
	list := func(m jsonscan.Member) (int, error) {
		if msg[m.Value] == '[' {
			return jsonscan.Array(msg, m.Value, element)
		}
		return skip(m.Value)
	}
	// A member of the message.
	top := func(m jsonscan.Member) (int, error) {
		if string(m.Key) == "result" && msg[m.Value] == '{' {
			return jsonscan.Object(msg, m.Value, list)
		}
		return skip(m.Value)
	}
	i := jsonscan.SkipSpace(msg, 0)
	var end int
	var err error
	if i < len(msg) && msg[i] == '{' {
		end, err = jsonscan.Object(msg, i, top)
	} else {
		end, err = skip(i)
	}
	if err != nil || jsonscan.SkipSpace(msg, end) != len(msg) {
		return nil, false
	}
	return cuts, true
}

// pruneFrame is the connection's filter for every message from the server
// (a stdout frame, an HTTP body, an SSE event's data): list entries nested
// deeper than go-sdk accepts become null, which the listing then skips,
// instead of go-sdk refusing the whole message (and, on stdio, the
// connection).
func (c *Conn) pruneFrame(msg []byte) []byte {
	out, n := pruneDeep(msg, sdkMaxDepth)
	if n > 0 {
		c.log.Warn("list entries nested deeper than the MCP SDK accepts were dropped", "entries", n, "limit", sdkMaxDepth)
	}
	return out
}
