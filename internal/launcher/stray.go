//go:build unix

package launcher

import (
	"bytes"
	"errors"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// Why this file exists.
//
// The MCP stdio transport says a server's stdout carries nothing but
// JSON-RPC messages, one per line. Real servers break that: start-up
// banners, dotenv hints, OpenTelemetry log records written as JSON objects.
// go-sdk treats any line it cannot decode as a JSON-RPC message as fatal to
// the connection, so one such line costs the whole server. The TypeScript
// SDK's stdio client, which most MCP clients use, reports such a line and
// reads on; so does this transport. A stray line never reaches go-sdk: it
// goes to the stderr tail, marked, and is counted for [Process.Stray].

// maxStraySample bounds the stray line kept for [Process.Stray].
const maxStraySample = 200

// jsonrpcKey is the member every JSON-RPC 2.0 message has.
var jsonrpcKey = []byte(`"jsonrpc"`)

// isMessage reports whether one stdout line may be a JSON-RPC message, so
// that it must reach go-sdk: a blank line (its decoder skips whitespace),
// an object with a top-level "jsonrpc" member, or a valid JSON array that
// holds one (a batch). Anything else is stray.
//
// Every real message contains the bytes "jsonrpc" in quotes, found near
// one end of the line in O(1) (see hasJSONRPCKey): an object that contains
// them is let through unchecked (a broken one fails in go-sdk as it always did). Only
// an object without them is walked, in case its key is spelled with
// escapes, which go-sdk decodes.
func isMessage(line []byte) bool {
	i := jsonscan.SkipSpace(line, 0)
	if i == len(line) {
		return true
	}
	switch line[i] {
	case '{':
		if hasJSONRPCKey(line[i:]) {
			return true
		}
		return bytes.IndexByte(line[i:], '\\') >= 0 && hasTopLevelKey(line, i, "jsonrpc")
	case '[':
		return bytes.Contains(line[i:], jsonrpcKey) && jsonscan.Valid(line)
	}
	return false
}

// keyWindow is how far from either end of a line hasJSONRPCKey looks
// first: SDKs write "jsonrpc" as the first member (Go, Python) or among
// the last two (TypeScript: result or params, then jsonrpc and id).
const keyWindow = 64

// hasJSONRPCKey reports whether line holds the bytes "jsonrpc" in quotes,
// looking near its ends before it scans the whole of a long line.
func hasJSONRPCKey(line []byte) bool {
	if len(line) <= 2*keyWindow {
		return bytes.Contains(line, jsonrpcKey)
	}
	return bytes.Contains(line[:keyWindow], jsonrpcKey) ||
		bytes.Contains(line[len(line)-keyWindow:], jsonrpcKey) ||
		bytes.Contains(line, jsonrpcKey)
}

var errFound = errors.New("found")

// hasTopLevelKey reports whether the object at line[i] is valid up to a
// member named key.
func hasTopLevelKey(line []byte, i int, key string) bool {
	_, err := jsonscan.Object(line, i, func(m jsonscan.Member) (int, error) {
		if string(m.Key) == key {
			return 0, errFound
		}
		end, _, err := jsonscan.Skip(line, m.Value, 1)
		return end, err
	})
	return err == errFound
}

// stray keeps a line of stdout that is not JSON-RPC beside stderr, marked,
// and counts it.
func (p *Process) stray(line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	p.tail.Write(append(append([]byte("[stdout, not JSON-RPC] "), line...), '\n'))
	p.mu.Lock()
	p.strays++
	first := p.strays == 1
	if first {
		p.straySample = string(line[:min(len(line), maxStraySample)])
	}
	p.mu.Unlock()
	if first {
		p.spec.Logger.Warn("server wrote a line on stdout that is not JSON-RPC; skipped and kept with its stderr",
			"pid", p.pid, "line", p.mask(Escape(string(line[:min(len(line), maxStraySample)]))))
	}
}

// Stray says how many lines the server wrote on stdout that were not
// JSON-RPC messages, and the start of the first, escaped and masked. Such
// lines are skipped, never fatal, and kept in the stderr tail
// ([Process.StderrTail]) marked "[stdout, not JSON-RPC]".
func (p *Process) Stray() (n int, first string) {
	p.mu.Lock()
	n, first = p.strays, p.straySample
	p.mu.Unlock()
	if n == 0 {
		return 0, ""
	}
	return n, p.mask(Escape(first))
}
