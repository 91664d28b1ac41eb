package upstream

import (
	"bytes"
	"encoding/json"
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
// nesting deeper than limit. It follows that function's rules exactly (see
// the top of this file) but skips string contents with bytes.IndexByte,
// which is several times faster than looking at every byte: in a tools
// list most bytes are descriptions.
func pruneTooDeep(b []byte, limit int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			// Jump from quote to quote. A quote is escaped exactly when
			// an odd run of backslashes precedes it: the byte before the
			// run is the opening quote or a byte that is not a backslash,
			// so the run starts unescaped and its backslashes pair up.
			// The opening quote bounds the backward count, and each
			// run is counted once, so the scan stays linear.
			for {
				j := bytes.IndexByte(b[i+1:], '"')
				if j < 0 {
					// Unterminated: go-sdk's scan ends inside the string too,
					// having seen no further brackets.
					return false
				}
				i += 1 + j
				k := i - 1
				for b[k] == '\\' {
					k--
				}
				if (i-1-k)%2 == 0 {
					break
				}
			}
		case '{', '[':
			depth++
			if depth > limit {
				return true
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}

// pruneCut is a span msg[start:end] to be replaced by null.
type pruneCut struct{ start, end int }

// Parser states of pruneFind: what may come next.
const (
	pruneWantValue        = iota // a value
	pruneWantValueOrClose        // a value or ']', just after '['
	pruneWantKeyOrClose          // a key or '}', just after '{'
	pruneWantKey                 // a key, after ',' in an object
	pruneWantColon               // ':' after a key
	pruneWantNext                // after a value: ',', the closer, or the end
)

// pruneFind parses msg and returns, in order, the spans of the elements of
// result.<key>[i] that take the message above limit; valid is false if
// msg is not valid JSON.
//
// It is its own validator because encoding/json's cannot serve: json.Valid
// refuses anything nested deeper than 10,000 levels, which is exactly the
// hostile input this file exists for. It accepts what json.Valid accepts
// (RFC 8259 syntax; bytes are not checked for UTF-8, as encoding/json does
// not) at any depth, and FuzzPrune holds it to that. It is one loop over
// an explicit stack of open brackets, so no input can exhaust the
// goroutine stack.
//
// Every top-level "result" member is searched, duplicates included:
// which duplicate a decoder keeps is its business, and every one of them
// counts towards the depth.
func pruneFind(msg []byte, limit int) (cuts []pruneCut, valid bool) {
	var (
		open  []byte // the open '{' and '['; len(open) is the depth
		state = pruneWantValue

		// Where the parse is on the path result.<key>[i]. isResult: the
		// last top-level key was "result". inResult: open[1] is that
		// member's object. inList: open[2] is an array member of it.
		// elem: start of the current element of that array, -1 outside
		// one; elemDepth: the deepest level reached inside it.
		isResult, inResult, inList bool
		elem, elemDepth            = -1, 0
	)
	i := 0
	for {
		i = pruneSpace(msg, i)
		if i == len(msg) {
			return cuts, state == pruneWantNext && len(open) == 0
		}
		c := msg[i]
		switch state {
		case pruneWantKeyOrClose, pruneWantKey:
			if c == '}' && state == pruneWantKeyOrClose {
				break // closed below
			}
			end := pruneString(msg, i)
			if end < 0 {
				return nil, false
			}
			if len(open) == 1 {
				isResult = pruneKeyIs(msg[i:end], "result")
			}
			i, state = end, pruneWantColon
			continue
		case pruneWantColon:
			if c != ':' {
				return nil, false
			}
			i, state = i+1, pruneWantValue
			continue
		case pruneWantNext:
			if len(open) == 0 {
				return nil, false // something after the top-level value
			}
			if c == ',' {
				i, state = i+1, pruneWantValue
				if open[len(open)-1] == '{' {
					state = pruneWantKey
				}
				continue
			}
			// else the closer, below
		default: // pruneWantValue, pruneWantValueOrClose
			if c == ']' && state == pruneWantValueOrClose {
				break // closed below
			}
			depth := len(open)
			if depth == 3 && inList {
				elem, elemDepth = i, 0
			}
			end := -1
			switch {
			case c == '{' || c == '[':
				open = append(open, c)
				depth++
				if elem >= 0 {
					elemDepth = max(elemDepth, depth)
				}
				switch {
				case c == '{' && depth == 2 && isResult:
					inResult = true
				case c == '[' && depth == 3 && inResult:
					inList = true
				}
				i, state = i+1, pruneWantKeyOrClose
				if c == '[' {
					state = pruneWantValueOrClose
				}
				continue
			case c == '"':
				end = pruneString(msg, i)
			case c == '-' || '0' <= c && c <= '9':
				end = pruneNumber(msg, i)
			case c == 't':
				end = pruneLiteral(msg, i, "true")
			case c == 'f':
				end = pruneLiteral(msg, i, "false")
			case c == 'n':
				end = pruneLiteral(msg, i, "null")
			}
			if end < 0 {
				return nil, false
			}
			i, state = end, pruneWantNext
			if elem >= 0 && depth == 3 {
				elem = -1 // a scalar element adds no depth
			}
			continue
		}

		// c closes the innermost container.
		if len(open) == 0 || c != open[len(open)-1]+2 { // '['+2 == ']', '{'+2 == '}'
			return nil, false
		}
		open = open[:len(open)-1]
		i, state = i+1, pruneWantNext
		switch len(open) {
		case 3:
			if elem >= 0 {
				if elemDepth > limit {
					cuts = append(cuts, pruneCut{elem, i})
				}
				elem = -1
			}
		case 2:
			inList = false
		case 1:
			inResult = false
		}
	}
}

// pruneString returns the index just past the JSON string whose opening
// quote is b[i], or -1 if it is not one.
func pruneString(b []byte, i int) int {
	if b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1 // control characters must be escaped
		case c == '\\':
			i++
			if i == len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// pruneNumber returns the index just past the JSON number starting at
// b[i], or -1. What may follow it is the caller's business.
func pruneNumber(b []byte, i int) int {
	digits := func(i int) (int, bool) {
		j := i
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		return j, j > i
	}
	if b[i] == '-' {
		i++
	}
	var ok bool
	switch {
	case i < len(b) && b[i] == '0':
		i++
	default:
		if i, ok = digits(i); !ok {
			return -1
		}
	}
	if i < len(b) && b[i] == '.' {
		if i, ok = digits(i + 1); !ok {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, ok = digits(i); !ok {
			return -1
		}
	}
	return i
}

// pruneLiteral returns the index just past lit if b continues with it at
// i, or -1.
func pruneLiteral(b []byte, i int, lit string) int {
	if !bytes.HasPrefix(b[i:], []byte(lit)) {
		return -1
	}
	return i + len(lit)
}

// pruneKeyIs reports whether the quoted, valid key decodes to name.
func pruneKeyIs(key []byte, name string) bool {
	raw := key[1 : len(key)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == name
	}
	// An escaped key ("res\u0075lt") is legal and go-sdk's decoder reads
	// it as "result", so it must be found here too, or a server could
	// hide its deep list from the pruner. Rare enough to leave to
	// encoding/json, which unescapes keys as go-sdk's decoder does.
	var s string
	return json.Unmarshal(key, &s) == nil && s == name
}

// pruneSpace returns the index of the first byte at or after i that is
// not JSON whitespace.
func pruneSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
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
