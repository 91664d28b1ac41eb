package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Protocol versions this server speaks: the stateless era through
// server/discover, the session era through initialize.
const (
	protoDiscover   = "2026-07-28"
	protoInitialize = "2025-06-18"
)

// JSON-RPC error codes (JSON-RPC 2.0 §5.1; MCP's resource not found).
const (
	codeParseError       = -32700
	codeInvalidRequest   = -32600
	codeMethodNotFound   = -32601
	codeInvalidParams    = -32602
	codeInternalError    = -32603
	codeResourceNotFound = -32002
)

// maxFrame bounds what the server reads in one frame: it is hostile, not
// careless.
const maxFrame = 16 << 20

// message is any JSON-RPC 2.0 message; its kind follows from the fields
// present (JSON-RPC 2.0 §4).
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *wireError      `json:"error"`
}

// decode parses one frame. Invalid JSON is a parse error; valid JSON that
// is not a message object (a batch, a number) is an invalid request.
func decode(frame []byte) (*message, reply, bool) {
	m := new(message)
	if err := json.Unmarshal(frame, m); err != nil {
		if json.Valid(frame) {
			return nil, failure(codeInvalidRequest, "Invalid Request"), false
		}
		return nil, failure(codeParseError, "Parse error"), false
	}
	return m, reply{}, true
}

func (m *message) isRequest() bool  { return m.Method != "" && m.ID != nil }
func (m *message) isResponse() bool { return m.Method == "" && m.ID != nil }

// wireError is a JSON-RPC error object.
type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *wireError) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// A reply is the server's answer to one request: a result, an error, or a
// flood (one line of floodBytes bytes, see writeFlood).
type reply struct {
	result     []byte // raw JSON, written into the frame as is
	err        *wireError
	flood      bool
	floodBytes int64
}

func result(raw []byte) reply { return reply{result: raw} }

func failure(code int, msg string) reply { return reply{err: &wireError{code, msg}} }

// responseFrame renders the response to request id, without a newline.
// The result is spliced in unparsed, so what the mode built reaches the
// wire byte for byte.
func responseFrame(id json.RawMessage, r reply) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	if r.err != nil {
		b.WriteString(`,"error":`)
		b.Write(marshal(r.err))
	} else {
		b.WriteString(`,"result":`)
		b.Write(r.result)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// marshal encodes v without HTML escaping, so that "<IMPORTANT>" reaches
// the wire as written. Raw payloads that nest deeper than encoding/json
// allows are spliced in by hand instead (see toolDef.entry).
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("hostile: " + err.Error()) // only this package's own values get here
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// A backChannel sends requests to the client and waits for the answer. The
// stdio transport has one; stateless HTTP has none.
type backChannel interface {
	request(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// errNoBackChannel is what a tool that needs the client sees over HTTP.
var errNoBackChannel = errors.New("server-to-client requests need the stdio transport")

// server answers requests for one mode; transports own the framing.
type server struct {
	spec *spec

	// Rendered once: some listings are megabytes.
	tools, prompts, resources, templates []byte
	caps, info                           any
}

func newServer(mode string, cfg config) (*server, error) {
	sp, ok := specFor(mode, cfg)
	if !ok {
		return nil, fmt.Errorf("unknown mode %q (stdio serves every mode but %q)", mode, ModeRedirect)
	}
	l := sp.listing()
	return &server{
		spec:      sp,
		tools:     listResult("tools", l.Tools),
		prompts:   listResult("prompts", l.Prompts),
		resources: listResult("resources", l.Resources),
		templates: listResult("resourceTemplates", l.ResourceTemplates),
		caps:      map[string]any{"tools": map[string]any{}, "prompts": map[string]any{}, "resources": map[string]any{}},
		info:      map[string]any{"name": "hostile-" + mode, "version": "0.0.1"},
	}, nil
}

// listResult renders {"key":[entries...]} from entries' wire bytes.
func listResult(key string, entries []Entry) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"%s":[`, key)
	for i, e := range entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e.JSON)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// handle answers one request. back is nil over HTTP.
func (s *server) handle(ctx context.Context, m *message, back backChannel) reply {
	switch m.Method {
	case "server/discover":
		// A valid SEP-2575 discover result, as go-sdk v1.8.0's client reads
		// it (mcp/client.go, Client.discover): the versions, capabilities
		// and instructions, the server's identity in _meta.
		return result(marshal(map[string]any{
			"supportedVersions": []string{protoDiscover, protoInitialize},
			"capabilities":      s.caps,
			"instructions":      s.spec.instructions,
			"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": s.info},
			"ttlMs":             0,
			"cacheScope":        "public",
			"resultType":        "complete",
		}))
	case "initialize":
		// Always 2025-06-18, whatever the client asked: a server may answer
		// with a version it supports (MCP 2025-06-18, lifecycle).
		return result(marshal(map[string]any{
			"protocolVersion": protoInitialize,
			"capabilities":    s.caps,
			"serverInfo":      s.info,
			"instructions":    s.spec.instructions,
		}))
	case "ping":
		return result([]byte(`{}`))
	case "tools/list":
		return result(s.tools)
	case "tools/call":
		return s.callTool(ctx, m.Params, back)
	case "prompts/list":
		return result(s.prompts)
	case "prompts/get":
		return s.getPrompt(m.Params)
	case "resources/list":
		return result(s.resources)
	case "resources/templates/list":
		return result(s.templates)
	case "resources/read":
		return s.readResource(m.Params)
	}
	return failure(codeMethodNotFound, "Method not found")
}

// A call is one tools/call as a tool sees it.
type call struct {
	name string
	args json.RawMessage // the "arguments" object, or nil
	back backChannel     // nil over HTTP
}

// arg decodes argument key into v, reporting whether it was there and
// decoded.
func (c call) arg(key string, v any) bool {
	var args map[string]json.RawMessage
	if json.Unmarshal(c.args, &args) != nil {
		return false
	}
	raw, ok := args[key]
	return ok && json.Unmarshal(raw, v) == nil
}

func (s *server) callTool(ctx context.Context, params json.RawMessage, back backChannel) reply {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return failure(codeInvalidParams, "invalid tools/call params")
	}
	// Duplicate names: the first definition answers.
	for _, t := range s.spec.tools {
		if t.Name == p.Name && t.Name != "" {
			if t.call == nil {
				return textResult("called " + t.Name)
			}
			return t.call(ctx, call{name: p.Name, args: p.Arguments, back: back})
		}
	}
	return failure(codeInvalidParams, "Unknown tool")
}

func (s *server) getPrompt(params json.RawMessage) reply {
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(params, &p) != nil {
		return failure(codeInvalidParams, "invalid prompts/get params")
	}
	for _, pr := range s.spec.prompts {
		if pr.Name == p.Name {
			return result(marshal(map[string]any{
				"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": pr.text}}},
			}))
		}
	}
	return failure(codeInvalidParams, "Unknown prompt")
}

func (s *server) readResource(params json.RawMessage) reply {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil {
		return failure(codeInvalidParams, "invalid resources/read params")
	}
	for _, r := range s.spec.resources {
		if r.uri == p.URI {
			return result(marshal(map[string]any{
				"contents": []any{map[string]any{"uri": r.uri, "mimeType": "text/plain", "text": r.text}},
			}))
		}
	}
	return failure(codeResourceNotFound, "Resource not found")
}

// textResult is a successful tool result holding one text block.
func textResult(text string) reply {
	return result(marshal(map[string]any{"content": []any{textBlock(text)}}))
}

// toolError is a tool result with isError: the tool failed, the protocol
// did not.
func toolError(text string) reply {
	return result(marshal(map[string]any{"content": []any{textBlock(text)}, "isError": true}))
}

func textBlock(text string) map[string]any { return map[string]any{"type": "text", "text": text} }

// writeFlood writes to w one JSON-RPC response to id of exactly n bytes,
// without a newline: a text result padded with 'z', or n bytes of 'z' when
// n cannot hold the envelope. It streams from a single FloodChunk buffer,
// so the server never holds n bytes, and stops early when ctx is done or
// a write fails.
func writeFlood(ctx context.Context, w io.Writer, id json.RawMessage, n int64) error {
	head := []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"`)
	tail := []byte(`"}]}}`)
	if n < int64(len(head)+len(tail)) {
		head, tail = nil, nil
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	buf := bytes.Repeat([]byte{'z'}, FloodChunk)
	for pad := n - int64(len(head)+len(tail)); pad > 0; {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := min(pad, int64(len(buf)))
		if _, err := w.Write(buf[:k]); err != nil {
			return err
		}
		pad -= k
	}
	_, err := w.Write(tail)
	return err
}
