package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/resultguard"
)

// The raw tools/call path.
//
// Through go-sdk, a tool call crosses a go-sdk server on the way in: the
// request is decoded (arguments included), the handler's result is decoded
// from the upstream's raw bytes into an mcp.CallToolResult (toolResult),
// and go-sdk encodes it again; at 100 KB that is most of the gateway's
// cost (docs/PERFORMANCE.md). The raw path answers the common case itself:
// it finds the few members it needs in the request without decoding the
// arguments, makes the same host.Call the go-sdk handler makes (policy,
// quotas, confirmation, result guard, audit and error mapping all happen
// there, unchanged), and writes the upstream's result bytes back under the
// client's request ID, with the envelope go-sdk's stateless server would
// have written.
//
// It serves a request only when go-sdk would certainly have accepted it and
// called Gateway.callTool with it, and everything else goes to go-sdk
// untouched (rawCandidate, parseRawCall, rawCalls.tool):
//   - HTTP: POST, Mcp-Protocol-Version exactly 2026-07-28 (so the
//     sessionless era: no session state to validate), Mcp-Method
//     "tools/call", an Mcp-Name equal to the body's name, Content-Type
//     application/json, an Accept listing JSON and SSE, no Last-Event-ID,
//     and a Host that passes go-sdk's DNS-rebinding check;
//   - body: valid JSON; one request object with exactly jsonrpc "2.0", an
//     id (a plain string or an integer), method "tools/call" and params
//     (no batch, no unknown or duplicate members); params with exactly
//     name, arguments (an object or null) and _meta;
//   - _meta: protocolVersion "2026-07-28", clientCapabilities an object
//     that go-sdk and encoding/json read alike (ASCII keys, no case
//     variants of its field names), clientInfo absent or an object; no
//     logLevel (log messages travel on go-sdk's session) and no other
//     io.modelcontextprotocol/ key; other keys are ignored, as callTool
//     ignores them, but for progressToken (below);
//   - the tool: registered on the go-sdk server under that name (Sync), known
//     to the host under the same model-facing name, and with no x-mcp-header
//     parameters (whose headers go-sdk validates).
//
// What it does then is callTool's 2026-07-28 branch: the call runs parked
// (park.go), so that an upstream's questions and a confirmation are put to
// the client as input-required results; a sealed requestState or
// inputResponses in the request sends it to go-sdk instead. Cancellation:
// the call follows the HTTP request's context, as go-sdk's handler does
// with PropagateRequestCancellation; a client that went away gets nothing.
// A call with a progressToken that reports progress before it ends is
// handed to go-sdk, which adopts it (as for legacy sessions: legacy.go),
// so its reports travel on go-sdk's stream before the answer.
//
// The answer:
//   - a result whose content is text blocks only (type, text, _meta) and
//     whose other members are those go-sdk knows (content,
//     structuredContent, isError, _meta, resultType "complete") is copied
//     through: its bytes are not decoded; _meta loses the
//     io.modelcontextprotocol/ keys (stripProtocolMeta) and gains the
//     gateway's serverInfo, and resultType is "complete", as go-sdk adds
//     them (annotateServerInfo, setCompleteResultType);
//   - any other result, a failure, and an input-required result go through
//     toolResult/failure/await as on the go-sdk path, are encoded with
//     go-sdk's types and get the same two additions (resultType
//     "input_required" for the last);
//   - JSON-RPC errors are written as go-sdk writes them for this era: HTTP
//     400 or 404 with an application/json body for the codes SEP-2575 maps
//     to a status (extractErrorStatus), else an SSE event;
//   - results are written as one SSE event ("event: message"), the framing
//     go-sdk's stateless handler uses.
//
// A result copied through keeps the members of its text blocks and the
// precision of its structuredContent numbers exactly as the upstream sent
// them, where go-sdk would re-encode them; in meaning it is the same.
//
// Calls of legacy sessions (2025-06-18 and 2025-11-25 clients) take the
// same path on their own terms: see legacy.go.
//
// Receiving middleware added to the go-sdk server (Server().
// AddReceivingMiddleware) does not see the calls served here: whatever
// must see every tools/call belongs in host.Call, which both paths make.
// raw_test.go sends the same requests through both paths and compares the
// answers.

const (
	rawVersion     = "2026-07-28"
	protocolMeta   = "io.modelcontextprotocol/"
	serverInfoKey  = protocolMeta + "serverInfo"
	metaVersionKey = protocolMeta + "protocolVersion"
	metaCapsKey    = protocolMeta + "clientCapabilities"
	metaClientKey  = protocolMeta + "clientInfo"

	// rawServedMsg is logged (debug) for every call the raw path serves.
	rawServedMsg    = "tools/call served raw"
	metaProgressKey = "progressToken"
)

// rawCalls is the endpoint handler in front of mcphttp's era router.
type rawCalls struct {
	g          *Gateway
	next       http.Handler    // the era router: everything rawCalls does not serve
	serverInfo json.RawMessage // the gateway's mcp.Implementation, as go-sdk puts it in every result's _meta
	metas      metaCache
}

// rawIntercept returns the mcphttp.Options.Intercept that installs the raw
// path. It learns the serverInfo go-sdk announces by asking the server
// itself, in memory, once.
func (g *Gateway) rawIntercept(ctx context.Context) (func(http.Handler) http.Handler, error) {
	info, err := g.announcedServerInfo(ctx)
	if err != nil {
		return nil, err
	}
	return func(next http.Handler) http.Handler {
		return &rawCalls{g: g, next: next, serverInfo: info}
	}, nil
}

// announcedServerInfo returns the serverInfo go-sdk sends for the gateway,
// encoded.
func (g *Gateway) announcedServerInfo(ctx context.Context) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.server.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "switchboard-self", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	info := cs.InitializeResult().ServerInfo
	if info == nil {
		return nil, errors.New("the gateway's server announced no serverInfo")
	}
	return json.Marshal(info)
}

func (rc *rawCalls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Only the raw path sets these (legacy.go).
	if _, ok := r.Header[handoverHeader]; ok {
		r.Header.Del(handoverHeader)
	}
	if _, ok := r.Header[endpointHeader]; ok {
		r.Header.Del(endpointHeader)
	}
	if !rawCandidate(r) {
		if id := r.Header.Get(sessionHeader); id != "" {
			rc.serveSession(w, r, id)
			return
		}
		if r.Method == http.MethodPost {
			// An initialize here makes a session of this endpoint.
			r.Header.Set(endpointHeader, rc.g.endpointMark)
		}
		rc.next.ServeHTTP(w, r)
		return
	}
	body, err := readBody(r)
	if err != nil {
		// Not reached behind the front door, which has read the body
		// already; answered as go-sdk answers it.
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, fmt.Sprintf("failed to read body: %v", err), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body)) // for go-sdk, if it is not served here
	call, ok := parseRawCall(body, r.Header.Get("Mcp-Name"), &rc.metas)
	if !ok {
		rc.next.ServeHTTP(w, r)
		return
	}
	t, ok := rc.tool(call.name)
	if !ok {
		rc.next.ServeHTTP(w, r)
		return
	}
	rc.serve(w, r, body, call, t)
}

// readBody reads a request's body whole, in one allocation when its length
// is known (the front door sets it).
func readBody(r *http.Request) ([]byte, error) {
	defer r.Body.Close()
	if n := r.ContentLength; n > 0 && n < 1<<30 {
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, err
		}
		// Anything past the declared length is an error, as for ReadAll
		// through http's body reader.
		if m, _ := r.Body.Read(make([]byte, 1)); m > 0 {
			return nil, errors.New("body longer than its Content-Length")
		}
		return body, nil
	}
	return io.ReadAll(r.Body)
}

// rawCandidate checks the HTTP side of a request (see the top of the file).
func rawCandidate(r *http.Request) bool {
	h := r.Header
	if r.Method != http.MethodPost || h.Get("Mcp-Protocol-Version") != rawVersion ||
		h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Name") == "" {
		return false
	}
	return plainPost(r)
}

// plainPost checks what go-sdk checks of every POST in both eras: no
// Last-Event-ID, Content-Type application/json, an Accept listing JSON and
// SSE, and (DNS rebinding) a loopback Host on a loopback listener; the
// front door makes its own checks first.
func plainPost(r *http.Request) bool {
	h := r.Header
	if len(h.Values("Last-Event-ID")) > 0 {
		return false
	}
	if ct, _, err := mime.ParseMediaType(h.Get("Content-Type")); err != nil || ct != "application/json" {
		return false
	}
	if jsonOK, streamOK := accepts(h.Values("Accept")); !jsonOK || !streamOK {
		return false
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil && isLoopback(la.String()) && !isLoopback(r.Host) {
		return false
	}
	return true
}

// accepts is go-sdk's reading of the Accept header (streamableAccepts).
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for raw := range strings.SplitSeq(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// isLoopback is go-sdk's loopback test of an address or Host header.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// rawCall is a tools/call request the raw path can serve.
type rawCall struct {
	id       json.RawMessage // as the client wrote it: a plain string or an integer
	name     string
	args     json.RawMessage // nil for absent or null
	caps     *mcp.ClientCapabilities
	progress bool // the request has a progressToken (not null)
}

// parseRawCall reads a request body (see the top of the file), or reports
// false for anything the raw path leaves to go-sdk.
func parseRawCall(body []byte, nameHeader string, metas *metaCache) (*rawCall, bool) {
	c, meta, ok := parseCallEnvelope(body)
	if !ok || meta == nil || c.name != nameHeader {
		return nil, false
	}
	if c.caps, ok = metas.get(meta); !ok {
		return nil, false
	}
	c.progress = progressToken(meta) != nil
	return c, true
}

// parseCallEnvelope reads what both eras' raw paths need of a tools/call
// request body: one request object with exactly jsonrpc "2.0", a plain id,
// method "tools/call" and params, whose members are exactly name (a
// string), arguments (an object or null) and _meta (an object, returned
// unread; nil when absent). Anything else reports false.
func parseCallEnvelope(body []byte) (*rawCall, []byte, bool) {
	if !resultguard.Valid(body) {
		return nil, nil, false
	}
	var (
		c                         rawCall
		version, method, params   []byte
		seenID, seenArgs, seenMet bool
		meta                      []byte
	)
	once := func(seen *bool) bool {
		if *seen {
			return false
		}
		*seen = true
		return true
	}
	ok := eachMember(body, func(key, value []byte) bool {
		switch string(key) {
		case `"jsonrpc"`:
			if version != nil {
				return false
			}
			version = value
		case `"id"`:
			if !once(&seenID) || !plainID(value) {
				return false
			}
			c.id = value
		case `"method"`:
			if method != nil {
				return false
			}
			method = value
		case `"params"`:
			if params != nil {
				return false
			}
			params = value
		default:
			return false
		}
		return true
	})
	if !ok || string(version) != `"2.0"` || !seenID || string(method) != `"tools/call"` || len(params) == 0 || params[0] != '{' {
		return nil, nil, false
	}
	var name []byte
	ok = eachMember(params, func(key, value []byte) bool {
		switch string(key) {
		case `"name"`:
			if name != nil || value[0] != '"' {
				return false
			}
			name = value
		case `"arguments"`:
			if !once(&seenArgs) {
				return false
			}
			switch {
			case string(value) == "null":
			case value[0] == '{':
				c.args = value
			default:
				return false
			}
		case `"_meta"`:
			if !once(&seenMet) || value[0] != '{' {
				return false
			}
			meta = value
		default:
			return false
		}
		return true
	})
	if !ok || name == nil || json.Unmarshal(name, &c.name) != nil {
		return nil, nil, false
	}
	return &c, meta, true
}

// plainID reports whether a JSON-RPC id is one the raw path echoes as is:
// a string without escapes, or an integer that a float64 holds exactly.
func plainID(v []byte) bool {
	if len(v) >= 2 && v[0] == '"' {
		return bytes.IndexByte(v[1:len(v)-1], '\\') < 0
	}
	digits := v
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return false
	}
	for _, b := range digits {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}

// metaCache remembers what rawMeta made of the _meta objects seen last: a
// client sends the same _meta with every call, and reading it is a good
// part of the raw path's own cost at small payloads.
type metaCache struct {
	mu sync.Mutex
	m  map[string]*mcp.ClientCapabilities // nil: refused
}

const (
	metaCacheEntries = 256     // then the cache starts over
	metaCacheMaxLen  = 4 << 10 // a larger _meta is read every time
)

// get is rawMeta, remembered. The capabilities returned are the caller's
// own (a shallow copy; the nested values are shared and never changed).
func (mc *metaCache) get(raw []byte) (*mcp.ClientCapabilities, bool) {
	mc.mu.Lock()
	caps, hit := mc.m[string(raw)]
	mc.mu.Unlock()
	if !hit {
		var ok bool
		if caps, ok = rawMeta(raw); !ok {
			caps = nil
		}
		// A progressToken differs from call to call: such a _meta is read
		// every time, and not kept.
		if len(raw) <= metaCacheMaxLen && !bytes.Contains(raw, []byte(`"`+metaProgressKey+`"`)) {
			mc.mu.Lock()
			if mc.m == nil || len(mc.m) >= metaCacheEntries {
				mc.m = map[string]*mcp.ClientCapabilities{}
			}
			mc.m[string(raw)] = caps
			mc.mu.Unlock()
		}
	}
	if caps == nil {
		return nil, false
	}
	c := *caps
	return &c, true
}

// rawMeta checks a request's _meta and returns the client's capabilities.
func rawMeta(raw []byte) (*mcp.ClientCapabilities, bool) {
	// Keys written with escapes go to go-sdk: progressToken reads keys as
	// written.
	if !eachMember(raw, func(key, _ []byte) bool { return bytes.IndexByte(key, '\\') < 0 }) {
		return nil, false
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(raw, &meta) != nil {
		return nil, false
	}
	var version string
	if json.Unmarshal(meta[metaVersionKey], &version) != nil || version != rawVersion {
		return nil, false
	}
	for k := range meta {
		if strings.HasPrefix(k, protocolMeta) && k != metaVersionKey && k != metaCapsKey && k != metaClientKey {
			return nil, false
		}
	}
	if ci, ok := meta[metaClientKey]; ok {
		var impl mcp.Implementation
		if len(ci) == 0 || ci[0] != '{' || json.Unmarshal(ci, &impl) != nil {
			return nil, false
		}
	}
	capsRaw := meta[metaCapsKey]
	if len(capsRaw) == 0 || capsRaw[0] != '{' || !exactKeys(capsRaw) {
		return nil, false
	}
	// go-sdk's clientCapabilitiesV2 and its toV1.
	var v2 struct {
		mcp.ClientCapabilities
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}
	if json.Unmarshal(capsRaw, &v2) != nil {
		return nil, false
	}
	caps := v2.ClientCapabilities
	caps.RootsV2 = v2.Roots
	if v2.Roots != nil {
		caps.Roots = *v2.Roots
	}
	return &caps, true
}

// exactKeys reports whether encoding/json, which matches keys to struct
// fields regardless of case, reads every key of the capabilities object
// as go-sdk's decoder, which matches them exactly, does: each key is ASCII
// without capitals, or is "listChanged" itself (the one field name of
// ClientCapabilities with a capital).
func exactKeys(data []byte) bool {
	var walk func(v []byte) bool
	walk = func(v []byte) bool {
		switch v[0] {
		case '{':
			return eachMember(v, func(key, value []byte) bool {
				var k string
				if json.Unmarshal(key, &k) != nil {
					return false
				}
				if k != "listChanged" {
					if strings.EqualFold(k, "listChanged") {
						return false
					}
					for i := 0; i < len(k); i++ {
						if k[i] >= 0x80 || ('A' <= k[i] && k[i] <= 'Z') {
							return false
						}
					}
				}
				return walk(value)
			})
		case '[':
			return eachElement(v, walk)
		}
		return true
	}
	return walk(data)
}

// servedTool is a tool as the gateway registered it on the go-sdk server.
type servedTool struct {
	tool   host.Tool
	header bool // its input schema has x-mcp-header annotations
}

// tool returns the tool a raw call may be served for (see the top of the
// file): the one go-sdk would call Gateway.callTool with.
func (rc *rawCalls) tool(name string) (host.Tool, bool) {
	g := rc.g
	g.syncMu.Lock()
	st, ok := g.served[name]
	g.syncMu.Unlock()
	if !ok || st.header {
		return host.Tool{}, false
	}
	return st.tool, true
}

// rawPeer is the peer of a raw call. Log messages go nowhere: a 2026-07-28
// request without a logLevel gets none through go-sdk either
// (ServerSession.Log), and one with a logLevel is not served raw.
type rawPeer struct{ *peer }

func (*rawPeer) Log(context.Context, string, *mcp.LoggingMessageParams) {}

// serve makes the call, as callTool's 2026-07-28 branch does, and writes
// the answer.
func (rc *rawCalls) serve(w http.ResponseWriter, r *http.Request, body []byte, c *rawCall, t host.Tool) {
	g := rc.g
	ctx := r.Context()
	g.log.Debug(rawServedMsg, "tool", t.ID)
	p := g.newPeer(ctx, nil, c.caps, rawVersion)
	// Client "": a 2026-07-28 client has no session; go-sdk's session ID is
	// "" for it too.
	opts := &host.CallOptions{Peer: &rawPeer{p}, RawOnly: true, Confirm: g.confirmer(p)}
	var sink *progressSink
	var first <-chan struct{} // nil: no progress asked for
	if c.progress {
		sink = newProgressSink()
		opts.Progress, first = sink.report, sink.first
	}
	pc := g.startParked(ctx, p, func(bg context.Context) (*host.Result, error) {
		return g.host.Call(bg, t.ID, c.args, opts)
	})
	out, ask, err := g.await(ctx, t.ID, pc, first)
	if err == errProgress {
		rc.handOver(w, r, body, &handover{pc: pc, progress: sink})
		return
	}
	if ctx.Err() != nil {
		return // the client went away: go-sdk sends nothing either
	}
	var res *mcp.CallToolResult
	switch {
	case out == nil && err != nil:
		rc.writeError(w, c.id, err)
		return
	case out == nil:
		res = ask
	default:
		if out.err == nil {
			if event, ok := rc.passThrough(c.id, out.res.Raw, false); ok {
				writeEvent(w, event)
				return
			}
		}
		if res, err = g.toolResult(ctx, t, out.res, out.err); err != nil {
			if ctx.Err() == nil {
				rc.writeError(w, c.id, err)
			}
			return
		}
	}
	msg, err := rc.encode(c.id, res)
	if err != nil {
		g.log.Warn("raw tools/call: result not encodable", "tool", t.ID, "err", err)
		rc.writeError(w, c.id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
		return
	}
	writeEvent(w, slices.Concat([]byte(eventPrefix), msg, []byte(eventSuffix)))
}

// passThrough builds the SSE event of the response around a result's own
// bytes, or reports false when the result is not one it copies (see the top
// of the file).
//
// For a legacy session (legacy true) go-sdk adds nothing: _meta only loses
// the protocol's keys (and is left out when that empties it), and a
// resultType is kept as the upstream sent it.
func (rc *rawCalls) passThrough(id, raw json.RawMessage, legacy bool) ([]byte, bool) {
	var content, structured, isError, meta, resultType []byte
	ok := eachMember(raw, func(key, value []byte) bool {
		var slot *[]byte
		switch string(key) {
		case `"content"`:
			slot = &content
		case `"structuredContent"`:
			slot = &structured
		case `"isError"`:
			if string(value) != "true" && string(value) != "false" {
				return false
			}
			slot = &isError
		case `"_meta"`:
			if value[0] != '{' && string(value) != "null" {
				return false
			}
			slot = &meta
		case `"resultType"`:
			if string(value) != `"complete"` {
				return false
			}
			slot = &resultType
		default:
			return false
		}
		if *slot != nil {
			return false // a duplicate member
		}
		*slot = value
		return true
	})
	if !ok || content == nil || !textOnly(content) {
		return nil, false
	}
	var metaOut []byte
	if legacy {
		metaOut, ok = legacyResultMeta(meta)
	} else {
		metaOut, ok = rc.resultMeta(meta)
	}
	if !ok {
		return nil, false
	}
	var b bytes.Buffer
	b.Grow(len(raw) + len(metaOut) + len(id) + 128)
	b.WriteString(eventPrefix)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"result":{"content":`)
	if err := appendCompact(&b, content); err != nil {
		return nil, false
	}
	if structured != nil && string(structured) != "null" {
		b.WriteString(`,"structuredContent":`)
		if err := appendCompact(&b, structured); err != nil {
			return nil, false
		}
	}
	if string(isError) == "true" {
		b.WriteString(`,"isError":true`)
	}
	if metaOut != nil {
		b.WriteString(`,"_meta":`)
		b.Write(metaOut)
	}
	if !legacy || resultType != nil {
		b.WriteString(`,"resultType":"complete"`)
	}
	b.WriteString(`}}`)
	b.WriteString(eventSuffix)
	return b.Bytes(), true
}

// appendCompact appends a value, compacted only when it holds a line
// break: an SSE data line must not contain one, and a line break in valid
// JSON is always whitespace between tokens.
func appendCompact(b *bytes.Buffer, v []byte) error {
	if bytes.IndexByte(v, '\n') < 0 && bytes.IndexByte(v, '\r') < 0 {
		b.Write(v)
		return nil
	}
	return json.Compact(b, v)
}

// textOnly reports whether content is an array of text blocks with only
// the members go-sdk's TextContent keeps: type, text and _meta.
func textOnly(content []byte) bool {
	return eachElement(content, func(block []byte) bool {
		var typ, text, meta bool
		return eachMember(block, func(key, value []byte) bool {
			var seen *bool
			switch string(key) {
			case `"type"`:
				if string(value) != `"text"` {
					return false
				}
				seen = &typ
			case `"text"`:
				if value[0] != '"' {
					return false
				}
				seen = &text
			case `"_meta"`:
				if value[0] != '{' || string(value) == "{}" {
					return false
				}
				seen = &meta
			default:
				return false
			}
			if *seen {
				return false
			}
			*seen = true
			return true
		}) && typ && text
	})
}

// resultMeta returns a result's _meta as go-sdk sends it: without the
// protocol's keys (stripProtocolMeta), with the gateway's serverInfo.
func (rc *rawCalls) resultMeta(raw []byte) ([]byte, bool) {
	m, ok := ownMeta(raw)
	switch {
	case !ok:
		return nil, false
	case len(m) == 0:
		return slices.Concat([]byte(`{"`+serverInfoKey+`":`), rc.serverInfo, []byte("}")), true
	}
	m[serverInfoKey] = rc.serverInfo
	out, err := marshal(m)
	return out, err == nil
}

// legacyResultMeta returns a result's _meta as go-sdk sends it to a
// legacy session: without the protocol's keys (stripProtocolMeta), nil
// when nothing is left.
func legacyResultMeta(raw []byte) ([]byte, bool) {
	m, ok := ownMeta(raw)
	if !ok || len(m) == 0 {
		return nil, ok
	}
	out, err := marshal(m)
	return out, err == nil
}

// ownMeta returns the members of a result's _meta that are not the
// protocol's (stripProtocolMeta); none (nil) when it is absent or null.
func ownMeta(raw []byte) (map[string]json.RawMessage, bool) {
	// Commonly the upstream's own serverInfo is all there is (go-sdk adds
	// it to every result): every key is a protocol key written plainly.
	if raw == nil || string(raw) == "null" || eachMember(raw, func(key, _ []byte) bool {
		return bytes.HasPrefix(key, []byte(`"`+protocolMeta)) && bytes.IndexByte(key, '\\') < 0
	}) {
		return nil, true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	for k := range m {
		if strings.HasPrefix(k, protocolMeta) {
			delete(m, k)
		}
	}
	return m, true
}

// encode builds the response message for a result made with go-sdk's
// types, with what go-sdk's server does to it in this era
// (handleMultiRoundTripResult and Server.callTool, then
// setCompleteResultType and annotateServerInfo): a result with input
// requests is input_required and may not have content, any other is
// complete and has content, [] at least.
func (rc *rawCalls) encode(id json.RawMessage, res *mcp.CallToolResult) ([]byte, error) {
	inputRequired := res.InputRequests != nil
	switch {
	case inputRequired && (len(res.Content) > 0 || res.StructuredContent != nil):
		return nil, errors.New("server bug: result has both content and inputRequests")
	case !inputRequired:
		res = withContent(res)
	}
	data, err := marshal(res)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	m["resultType"] = json.RawMessage(`"complete"`)
	if inputRequired {
		m["resultType"] = json.RawMessage(`"input_required"`)
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := m["_meta"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, err
		}
	}
	if _, ok := meta[serverInfoKey]; !ok {
		meta[serverInfoKey] = rc.serverInfo
	}
	if m["_meta"], err = marshal(meta); err != nil {
		return nil, err
	}
	result, err := marshal(m)
	if err != nil {
		return nil, err
	}
	return slices.Concat([]byte(`{"jsonrpc":"2.0","id":`), id, []byte(`,"result":`), result, []byte("}")), nil
}

// withContent returns res with content [] where it has none, as go-sdk's
// Server.callTool sends a complete result ("avoid null").
func withContent(res *mcp.CallToolResult) *mcp.CallToolResult {
	if res.Content != nil {
		return res
	}
	r := *res
	r.Content = []mcp.Content{}
	return &r
}

// marshal is json.Marshal without HTML escaping (of <, > and &), as go-sdk
// encodes its messages.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// The framing of one SSE event, as go-sdk writes a message (writeEvent in
// mcp/event.go; no event ID in the sessionless era).
const (
	eventPrefix = "event: message\ndata: "
	eventSuffix = "\n\n"
)

// writeEvent writes a response as go-sdk's stateless handler does: one SSE
// event (framed by the caller) on a text/event-stream response. The event
// is the whole response, so it goes with its length and without a flush
// of its own: headers and event leave in one write when the handler
// returns, where a flush costs a write for the event and another for the
// end of the chunked body.
func writeEvent(w http.ResponseWriter, event []byte) {
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
	h.Set("Content-Length", strconv.Itoa(len(event)))
	w.WriteHeader(http.StatusOK)
	w.Write(event)
}

// rpcError returns the error response message for a call's failure. An
// error that is not a JSON-RPC error (none is expected) is an internal
// error, where go-sdk would send code 0.
func rpcError(id json.RawMessage, err error) []byte {
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		rpc = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	e, merr := marshal(rpc)
	if merr != nil {
		e = []byte(`{"code":` + strconv.FormatInt(jsonrpc.CodeInternalError, 10) + `,"message":"internal error"}`)
	}
	return slices.Concat([]byte(`{"jsonrpc":"2.0","id":`), id, []byte(`,"error":`), e, []byte("}"))
}

// writeError writes a JSON-RPC error as go-sdk does for a 2026-07-28
// request: with the HTTP status SEP-2575 gives its code, as a plain JSON
// body, else as an SSE event.
func (rc *rawCalls) writeError(w http.ResponseWriter, id json.RawMessage, err error) {
	msg := rpcError(id, err)
	var code int64 = jsonrpc.CodeInternalError
	if rpc := (*jsonrpc.Error)(nil); errors.As(err, &rpc) {
		code = rpc.Code
	}
	status := 0
	switch code {
	case jsonrpc.CodeMethodNotFound:
		status = http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		status = http.StatusBadRequest
	}
	if status == 0 {
		writeEvent(w, slices.Concat([]byte(eventPrefix), msg, []byte(eventSuffix)))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(msg)
}
