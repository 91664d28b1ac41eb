package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/resultguard"
)

// The raw upstream tools/call (docs/PERFORMANCE.md, "Raw upstream
// tools/call").
//
// go-sdk's client encodes a tools/call by marshalling the params, which
// compacts the arguments twice (json.RawMessage re-validates and compacts
// on every Marshal), and decodes every response; the HTTP capture point
// then parses the response event into a map to take the result off the
// wire. For a call whose shape this file can reproduce exactly, CallTool
// instead writes the JSON-RPC request itself with the caller's argument
// bytes spliced in, and reads the response itself: the result bytes are
// validated once and returned as sent, never decoded.
//
// It is used where the exchange is one POST whose answer comes back on
// that POST, through the same http.Client stack as go-sdk's (the
// configured headers, the SSRF guard, the body caps and the status
// recording of captureRoundTripper):
//   - a Streamable HTTP server on the 2026-07-28 era, which is stateless
//     (no session id, no standalone stream), with the headers go-sdk would
//     send (Mcp-Protocol-Version, Mcp-Method, Mcp-Name) and the
//     per-request _meta it would add (SEP-2575: protocolVersion,
//     clientInfo and clientCapabilities, the latter two copied from the
//     server/discover request go-sdk sent at connect time, so they are
//     exactly go-sdk's);
//   - a Streamable HTTP server on a legacy version (2025-11-25 and
//     before), with go-sdk's session: the session's ID and the negotiated
//     version in the headers, no _meta but the progress token. go-sdk's
//     session keeps the rest (initialize, the standalone stream, list
//     calls, closing); a request the server makes on the call's stream
//     (sampling, elicitation, roots, ping) is answered by go-sdk's client
//     code through relay.go and posted on the session, as go-sdk posts it.
//
// A stdio server on the 2026-07-28 era takes the same request frame over
// the child's stdin (rawstdio.go). Everything else goes to go-sdk:
// legacy-era stdio servers, legacy HTTP+SSE servers, a 2026-07-28 tool
// whose input schema carries x-mcp-header annotations (go-sdk derives
// Mcp-Param-* headers from them), a tool name that is not plain printable
// ASCII, arguments that are not one JSON object, and any 2026-07-28
// connection whose discover request could not be read.
//
// Each go-sdk behaviour on that path is reproduced here; rawcall_test.go
// runs the same calls both ways against real servers and compares them.
//   - Status: 429, 500, 502, 503 and 504 are transient refusals; another
//     non-2xx status whose body is a JSON-RPC error surfaces that error;
//     any other non-2xx status also breaks the connection (go-sdk's
//     streamableClientConn.fail), so the host redials.
//   - Responses: a JSON body or an SSE stream (events capped at
//     MaxFrame); on the stream, the call's progress is delivered in wire
//     order before the result, log messages go to the call's peer, list
//     changes and resource updates to the connection's handlers.
//   - Input-required results (SEP-2322) are decoded and answered as on
//     the go-sdk path, and the call is retried raw.
//   - A stream that ends or breaks before the response is resumed when
//     the server numbered its events: GET with Last-Event-ID after the
//     server's retry delay or go-sdk's backoff, at most 5 reconnections
//     without progress (rawResume).
//   - Cancellation and callTimeout: the POST carries the call's context;
//     when it ends, notifications/cancelled is sent as go-sdk sends it
//     (best effort, bounded).
//
// Where it knowingly differs: a stream or body that ends or breaks before
// the response, and cannot be resumed, is unknown_outcome here (the server may have run the tool),
// where go-sdk's synthetic "request terminated without response" is
// classified server_error; a message that is not JSON is server_error here,
// where go-sdk would also break the connection; and a server-to-client
// request on a 2026-07-28 call's stream, which that era replaced with
// input-required results, is logged and ignored rather than answered.
// A legacy server's request on the call's stream is answered with the
// call's peer found as go-sdk's handlers find it (the client of the calls
// in flight), not from the stream it came on. A legacy session the server
// has forgotten (404) ends the connection with go-sdk's ErrSessionMissing,
// but through go-sdk's session Close, which still sends the DELETE that
// go-sdk's own transport would skip (the server answers it 404).
//
// The request ID is a number from a range go-sdk's per-session counter
// never reaches (rawIDBase), so it cannot collide with go-sdk's own IDs.

// rawIDBase starts the raw path's request IDs.
const rawIDBase = 1 << 40

// rawVersion is the 2026-07-28 era's version; the raw path speaks it over
// HTTP and stdio, and the legacy versions over HTTP only.
const rawVersion = "2026-07-28"

// rawState is a connection's state for the raw path.
type rawState struct {
	client *http.Client // the server's HTTP stack, as go-sdk's transport has it; set at connect

	ids atomic.Int64 // the last raw request ID, from rawIDBase

	mu          sync.Mutex
	discoverMet bool               // a server/discover request was seen
	version     string             // its _meta protocolVersion
	clientInfo  json.RawMessage    // its _meta clientInfo, as go-sdk encoded it; nil when absent
	clientCaps  json.RawMessage    // its _meta clientCapabilities, as go-sdk encoded it
	headerTools map[string]bool    // tools whose schema has x-mcp-header annotations, from Discover
	metaJSON    map[metaKey][]byte // encoded request _meta without a progress token (rawRequestMeta); cleared by noteDiscover

	stdio stdioRaw // the stdio path's pending calls (rawstdio.go)

	relay     relayState // answers a legacy server's requests on call streams (relay.go)
	relayAsks sync.Map   // relayKey of a server's request being answered → *relayAsk

	bgMu     sync.Mutex
	bgClosed bool           // Close is waiting for bg: start nothing more
	bg       sync.WaitGroup // cancellation notices and connection teardowns in flight
}

// goBG runs f in the background, owned by the connection: Close waits for
// it. Once Close has begun, f is not run.
func (r *rawState) goBG(f func()) {
	r.bgMu.Lock()
	defer r.bgMu.Unlock()
	if r.bgClosed {
		return
	}
	r.bg.Go(f)
}

// wait stops new background work and waits for what is running.
func (r *rawState) wait() {
	r.bgMu.Lock()
	r.bgClosed = true
	r.bgMu.Unlock()
	r.bg.Wait()
	r.relay.close()
}

// noteDiscover records the _meta of the server/discover request go-sdk
// sent. The last one wins (go-sdk may retry discover once with another
// version).
func (r *rawState) noteDiscover(body []byte) {
	var msg struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.discoverMet = true
	r.version, r.clientInfo, r.clientCaps = "", nil, nil
	r.metaJSON = nil
	if json.Unmarshal(body, &msg) != nil {
		return
	}
	m := msg.Params.Meta
	var v string
	if json.Unmarshal(m[mcp.MetaKeyProtocolVersion], &v) != nil || len(m[mcp.MetaKeyClientCapabilities]) == 0 {
		return
	}
	r.version = v
	r.clientInfo = m[mcp.MetaKeyClientInfo]
	r.clientCaps = m[mcp.MetaKeyClientCapabilities]
}

// noteTools records which tools go-sdk would send Mcp-Param-* headers for.
func (r *rawState) noteTools(tools []*mcp.Tool) {
	m := map[string]bool{}
	for _, t := range tools {
		if t == nil || t.InputSchema == nil {
			continue
		}
		b, err := json.Marshal(t.InputSchema)
		if err != nil || bytes.Contains(b, []byte("x-mcp-header")) {
			m[t.Name] = true
		}
	}
	r.mu.Lock()
	r.headerTools = m
	r.mu.Unlock()
}

// rawMeta returns what noteDiscover saw, and whether the raw path may use it.
func (r *rawState) meta(version string) (clientInfo, clientCaps json.RawMessage, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.discoverMet || r.version != version || r.clientCaps == nil {
		return nil, nil, false
	}
	return r.clientInfo, r.clientCaps, true
}

// rawEligible reports whether CallTool may take the raw path for this call.
func (c *Conn) rawEligible(name string, args json.RawMessage) bool {
	if c.opts.NoRawCalls || c.raw == nil {
		return false
	}
	legacy := c.rawLegacy()
	switch c.server.Transport {
	case config.TransportHTTP:
		if c.raw.client == nil || (!legacy && c.session.ID() != "") {
			return false
		}
	case config.TransportStdio:
		if c.proc == nil || legacy {
			return false
		}
	default:
		return false
	}
	if !legacy {
		if c.info.ProtocolVersion != rawVersion {
			return false
		}
		if _, _, ok := c.raw.meta(c.info.ProtocolVersion); !ok {
			return false
		}
	}
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] <= ' ' || name[i] > '~' {
			return false // go-sdk's header value would differ or fail
		}
	}
	if !legacy {
		c.raw.mu.Lock()
		header := c.raw.headerTools[name]
		c.raw.mu.Unlock()
		if header {
			return false
		}
	}
	if len(args) == 0 {
		return true
	}
	i := skipSpace(args, 0)
	return i < len(args) && args[i] == '{' && resultguard.Valid(args)
}

// errRejected is go-sdk's "rejected by transport" (jsonrpc2.ErrRejected):
// the request did not get an answer from the server's MCP layer.
var errRejected = &jsonrpc.Error{Code: codeRejected, Message: "rejected by transport"}

// callRaw is CallTool on the raw path; rawEligible has said yes.
func (c *Conn) callRaw(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*ToolResult, error) {
	op := "call tool " + strconv.Quote(name) // fmt's %q, without fmt: on every call
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	token := ""
	if opts.Progress != nil {
		token = fmt.Sprintf("sb-%d", c.progressSeq.Add(1))
		c.progress.Store(token, opts.Progress)
		defer c.progress.Delete(token)
	}
	// The slot is not put in the context: captureRoundTripper must not
	// rewrite this exchange.
	s := &slot{token: token, progress: opts.Progress}
	peer := peerFrom(ctx)
	if peer != nil && c.opts.Forward {
		s.log = func(lp *mcp.LoggingMessageParams) { peer.Log(ctx, c.server.Name, lp) }
	}
	defer s.finish()
	if peer != nil {
		defer c.track(peer)()
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	responses, state := opts.InputResponses, opts.RequestState
	for round := 1; ; round++ {
		var raw json.RawMessage
		var err error
		if c.server.Transport == config.TransportStdio {
			raw, err = c.rawStdioExchange(ctx, op, name, args, token, peer, responses, state, s)
		} else {
			raw, err = c.rawExchange(ctx, op, name, args, token, peer, responses, state, s)
		}
		if err != nil {
			return nil, err
		}
		if !inputRequired(raw) {
			isError, ferr := isErrorFlag(raw)
			if ferr != nil {
				return nil, fault.New(fault.CodeServerError, c.server.Name, op, ferr)
			}
			return &ToolResult{Raw: raw, IsError: isError}, nil
		}
		// A 2026-07-28 server asks for input (SEP-2322): decoded as
		// go-sdk would, answered as on the go-sdk path.
		var res mcp.CallToolResult
		if err := res.UnmarshalJSON(raw); err != nil {
			return nil, c.classify(ctx, op, fmt.Errorf("calling %q: %w", "tools/call", err))
		}
		if len(res.InputRequests) == 0 {
			out, err := json.Marshal(&res)
			if err != nil {
				return nil, fault.New(fault.CodeServerError, c.server.Name, op, err)
			}
			return &ToolResult{Raw: out, IsError: res.IsError}, nil
		}
		responses, err = c.answerInput(ctx, peer, op, round, res.InputRequests, res.RequestState)
		if err != nil {
			return nil, err
		}
		state = res.RequestState
	}
}

// rawRequest encodes the tools/call request. args is one valid JSON
// object and goes in as it is.
func (c *Conn) rawRequest(id int64, name string, args json.RawMessage, token string, peer Peer, responses mcp.InputResponseMap, state string) ([]byte, error) {
	return c.rawRequestID(strconv.AppendInt(nil, id, 10), name, args, token, peer, responses, state)
}

// rawRequestID is rawRequest with the ID as JSON (a number on HTTP, a
// string on stdio).
func (c *Conn) rawRequestID(idJSON []byte, name string, args json.RawMessage, token string, peer Peer, responses mcp.InputResponseMap, state string) ([]byte, error) {
	// The _meta go-sdk would send: Switchboard's own entries (requestMeta),
	// the progress token, then, in the 2026-07-28 era, the SEP-2575 triple
	// where absent. A legacy request has none unless there is a token.
	metaJSON, err := c.rawRequestMeta(peer, token)
	if err != nil {
		return nil, err
	}
	nameJSON, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	var tail []byte
	if len(responses) > 0 {
		b, err := json.Marshal(responses)
		if err != nil {
			return nil, err
		}
		tail = append(append(tail, `,"inputResponses":`...), b...)
	}
	if state != "" {
		b, err := json.Marshal(state)
		if err != nil {
			return nil, err
		}
		tail = append(append(tail, `,"requestState":`...), b...)
	}
	buf := make([]byte, 0, len(args)+len(metaJSON)+len(nameJSON)+len(tail)+len(idJSON)+96)
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, idJSON...)
	buf = append(buf, `,"method":"tools/call","params":{`...)
	if metaJSON != nil {
		buf = append(buf, `"_meta":`...)
		buf = append(buf, metaJSON...)
		buf = append(buf, ',')
	}
	buf = append(buf, `"name":`...)
	buf = append(buf, nameJSON...)
	buf = append(buf, `,"arguments":`...)
	buf = append(buf, args...)
	buf = append(buf, tail...)
	buf = append(buf, "}}"...)
	return buf, nil
}

// rawRequestMeta is the request's _meta, nil for none.
func (c *Conn) rawRequestMeta(peer Peer, token string) ([]byte, error) {
	if c.rawLegacy() {
		if token == "" {
			return nil, nil
		}
		return append(append([]byte(`{"progressToken":`), strconv.AppendQuote(nil, token)...), '}'), nil
	}
	var key metaKey
	if token == "" {
		key = metaKeyOf(peer)
		c.raw.mu.Lock()
		b, ok := c.raw.metaJSON[key]
		c.raw.mu.Unlock()
		if ok {
			return b, nil
		}
	}
	b, err := c.encodeRequestMeta(peer, token)
	if err == nil && token == "" {
		c.raw.mu.Lock()
		if c.raw.metaJSON == nil || len(c.raw.metaJSON) >= metaJSONEntries {
			c.raw.metaJSON = map[metaKey][]byte{}
		}
		c.raw.metaJSON[key] = b
		c.raw.mu.Unlock()
	}
	return b, err
}

// metaKey is what a 2026-07-28 request's _meta depends on besides the
// connection and the progress token: whether the peer reports its client's
// capabilities, and the ones Switchboard forwards (forwardedCapabilities),
// by identity. The gateway hands every call of one client the same
// capability values (its metaCache), and nothing changes them once made,
// so equal keys mean equal _meta.
type metaKey struct {
	reporter bool
	s        *mcp.SamplingCapabilities
	e        *mcp.ElicitationCapabilities
	r        *mcp.RootCapabilities
}

// metaJSONEntries bounds rawState.metaJSON; then it starts over.
const metaJSONEntries = 64

func metaKeyOf(peer Peer) metaKey {
	r, ok := peer.(CapabilityReporter)
	if !ok {
		return metaKey{}
	}
	k := metaKey{reporter: true}
	if cc := r.ClientCapabilities(); cc != nil {
		k.s, k.e, k.r = cc.Sampling, cc.Elicitation, cc.RootsV2
	}
	return k
}

// encodeRequestMeta is rawRequestMeta for the 2026-07-28 era, unremembered.
func (c *Conn) encodeRequestMeta(peer Peer, token string) ([]byte, error) {
	clientInfo, clientCaps, _ := c.raw.meta(c.info.ProtocolVersion)
	meta := map[string]json.RawMessage{}
	for k, v := range c.requestMeta(peer) {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		meta[k] = b
	}
	if token != "" {
		meta["progressToken"] = strconv.AppendQuote(nil, token)
	}
	if _, ok := meta[mcp.MetaKeyProtocolVersion]; !ok {
		meta[mcp.MetaKeyProtocolVersion] = strconv.AppendQuote(nil, c.info.ProtocolVersion)
	}
	if _, ok := meta[mcp.MetaKeyClientInfo]; !ok && clientInfo != nil {
		meta[mcp.MetaKeyClientInfo] = clientInfo
	}
	if _, ok := meta[mcp.MetaKeyClientCapabilities]; !ok {
		meta[mcp.MetaKeyClientCapabilities] = clientCaps
	}
	return json.Marshal(meta) // small; keys sorted, as go-sdk's map
}

// rawExchange makes one POST and returns the response's result bytes.
func (c *Conn) rawExchange(ctx context.Context, op, name string, args json.RawMessage, token string, peer Peer, responses mcp.InputResponseMap, state string, s *slot) (json.RawMessage, error) {
	const summary = `sending "tools/call"`
	id := rawIDBase + c.raw.ids.Add(1)
	body, err := c.rawRequest(id, name, args, token, peer, responses, state)
	if err != nil {
		// go-sdk fails to marshal before sending: nothing was sent.
		return nil, c.classify(ctx, op, fmt.Errorf("calling %q: %w", "tools/call", err))
	}
	// The request's own context, so that the rest of a stream can be
	// abandoned once the response is in.
	reqCtx, reqCancel := context.WithCancel(ctx)
	defer reqCancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.server.URL, bytes.NewReader(body))
	if err != nil {
		return nil, c.classify(ctx, op, fmt.Errorf("%s: %w: %w", summary, errRejected, err))
	}
	c.rawHeaders(req.Header, "tools/call", name)
	resp, err := c.raw.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			c.rawCancelled(ctx, id)
			return nil, c.classify(ctx, op, ctx.Err())
		}
		if errors.Is(err, ErrResponseTooLarge) {
			// As on the go-sdk path, where the capture records the cap.
			return nil, fault.New(fault.CodeServerError, c.server.Name, op, err)
		}
		return nil, c.classify(ctx, op, fmt.Errorf("calling %q: %s: %w: %w", "tools/call", summary, errRejected, err))
	}
	defer resp.Body.Close()
	if err := c.rawStatus(resp, summary); err != nil {
		return nil, c.classify(ctx, op, fmt.Errorf("calling %q: %w", "tools/call", err))
	}
	var raw json.RawMessage
	switch ct := mediaType(resp.Header.Get("Content-Type")); ct {
	case "application/json":
		// captureRoundTripper has capped and read the body.
		data, rerr := io.ReadAll(resp.Body)
		if rerr == nil {
			var done bool
			raw, done, err = c.rawMessage(ctx, data, id, s)
			if err == nil && !done {
				err = errNoResponse
			}
		} else {
			err = rerr
		}
	case "text/event-stream":
		var st sseState
		raw, err = c.rawStream(ctx, resp.Body, id, s, reqCancel, &st)
		raw, err = c.rawResume(ctx, summary, raw, err, id, s, &st)
	default:
		err = fmt.Errorf("%s: unsupported content type %q", summary, ct)
	}
	if err != nil {
		if ctx.Err() != nil {
			c.rawCancelled(ctx, id)
			return nil, c.classify(ctx, op, ctx.Err())
		}
		var rpc *jsonrpc.Error
		switch {
		case errors.Is(err, ErrResponseTooLarge):
			return nil, fault.New(fault.CodeServerError, c.server.Name, op, err)
		case errors.As(err, &rpc):
			return nil, c.classify(ctx, op, fmt.Errorf("calling %q: %w", "tools/call", err))
		case errors.Is(err, errNoResponse):
			// The stream ended without an answer: the server may have
			// run the tool, or not.
			return nil, fault.New(fault.CodeUnknownOutcome, c.server.Name, op, err)
		}
		if c.life.Err() != nil {
			return nil, c.classify(ctx, op, err)
		}
		if errors.Is(err, errBadMessage) {
			return nil, fault.New(fault.CodeServerError, c.server.Name, op, err)
		}
		// The body broke off mid-call.
		return nil, fault.New(fault.CodeUnknownOutcome, c.server.Name, op, err)
	}
	return raw, nil
}

var (
	errNoResponse = errors.New("request terminated without response")
	errBadMessage = errors.New("malformed message from the server")
)

// rawStatus turns a refused POST into go-sdk's error for it
// (streamableClientConn.checkResponse); the round tripper has recorded the
// status for classify.
func (c *Conn) rawStatus(resp *http.Response, summary string) error {
	st := resp.StatusCode
	switch st {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable,
		http.StatusGatewayTimeout, http.StatusTooManyRequests:
		return fmt.Errorf("%w: %s: %v", errRejected, summary, http.StatusText(st))
	}
	if st >= 200 && st < 300 {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, int64(c.opts.MaxFrame)))
	if msg, err := jsonrpc.DecodeMessage(body); err == nil {
		if r, ok := msg.(*jsonrpc.Response); ok && r.Error != nil {
			return fmt.Errorf("%s: %w: %w: %v", summary, r.Error, errRejected, http.StatusText(st))
		}
	}
	// go-sdk breaks the connection over any other refusal: do the same,
	// so that the host redials as it would have. A legacy session the
	// server no longer knows is go-sdk's ErrSessionMissing.
	err := fmt.Errorf("%s: %v", summary, http.StatusText(st))
	if id := c.session.ID(); st == http.StatusNotFound && id != "" && c.rawLegacy() {
		err = fmt.Errorf("%s: failed to connect (session ID: %v): %w", summary, id, mcp.ErrSessionMissing)
	}
	c.rawFail(err)
	return err
}

// rawFail ends the connection as go-sdk ends it when its transport fails,
// recording err as the reason.
func (c *Conn) rawFail(err error) {
	c.mu.Lock()
	if c.rawErr == nil {
		c.rawErr = err
	}
	c.mu.Unlock()
	c.raw.goBG(func() { c.session.Close() })
}

// rawLegacy reports whether the connection is on a legacy protocol
// version (before 2026-07-28): a session over Streamable HTTP.
func (c *Conn) rawLegacy() bool { return c.info.ProtocolVersion < rawVersion }

// rawHeaders sets the headers go-sdk sets on a POST of method (name: the
// tool's, for tools/call): the standard ones (Mcp-Method, Mcp-Name) in the
// 2026-07-28 era, the session's ID in a legacy one.
func (c *Conn) rawHeaders(h http.Header, method, name string) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	c.sessionHeaders(h)
	if c.rawLegacy() {
		return
	}
	h.Set("Mcp-Method", method)
	if name != "" {
		h.Set("Mcp-Name", name)
	}
}

// sessionHeaders sets what go-sdk sets on every request of a connection
// (setMCPHeaders): the negotiated version and, in a legacy session, its
// ID. (A raw 2026-07-28 connection has no session ID.)
func (c *Conn) sessionHeaders(h http.Header) {
	h.Set("Mcp-Protocol-Version", c.info.ProtocolVersion)
	if id := c.session.ID(); id != "" {
		h.Set("Mcp-Session-Id", id)
	}
}

// rawCancelled tells the server that call id was abandoned, as go-sdk does
// (notifications/cancelled, best effort, within 5 s, off the caller's
// path; Close waits for it).
func (c *Conn) rawCancelled(ctx context.Context, id int64) {
	reason := ctx.Err().Error()
	c.raw.goBG(func() {
		body, err := json.Marshal(map[string]any{
			"jsonrpc": "2.0",
			"method":  "notifications/cancelled",
			"params":  map[string]any{"requestId": id, "reason": reason},
		})
		if err != nil {
			return
		}
		// Sent also when the call ends because the connection is
		// closing, as go-sdk sends it then: a server blocked on a
		// question to the client learns that nobody will answer.
		c.rawPost(context.Background(), body, "notifications/cancelled")
	})
}

// rawPost sends a message that gets no answer (a notification, or a
// response to the server's request; method "") on the connection's
// session, as go-sdk sends it, within ctx and 5 s.
func (c *Conn) rawPost(ctx context.Context, body []byte, method string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.server.URL, bytes.NewReader(body))
	if err != nil {
		return
	}
	c.rawHeaders(req.Header, method, "")
	resp, err := c.raw.client.Do(req)
	if err != nil {
		c.log.Debug("post to the server failed", "err", err)
		return
	}
	defer resp.Body.Close()
	summary := "sending jsonrpc response"
	if method != "" {
		summary = fmt.Sprintf("sending %q", method)
	}
	// A refusal is go-sdk's too: a session the server has forgotten, or
	// any other non-transient status, ends the connection (rawStatus).
	if err := c.rawStatus(resp, summary); err != nil {
		c.log.Warn("message to the server refused", "err", err)
		return
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusNoContent {
		c.log.Warn("unexpected status from the server for a message without answer", "status", resp.StatusCode)
	}
}

// rawMessage handles one message from the server: the call's response
// (returned, done), or a notification for the call or the connection.
func (c *Conn) rawMessage(ctx context.Context, data []byte, id int64, s *slot) (json.RawMessage, bool, error) {
	if !resultguard.Valid(data) {
		// go-sdk fails to decode it and the call never completes.
		return nil, false, fmt.Errorf("%w: invalid JSON", errBadMessage)
	}
	m, ok := topMembers(data)
	if !ok {
		return nil, false, fmt.Errorf("%w: not a JSON object", errBadMessage)
	}
	if method, has := m["method"]; has {
		var name string
		if json.Unmarshal(method, &name) != nil {
			return nil, false, nil
		}
		if _, isCall := m["id"]; isCall {
			if c.rawLegacy() {
				// A legacy server asks the client something during
				// the call (sampling, elicitation, roots, ping):
				// answered as go-sdk's client answers it (relay.go).
				c.relayRequest(ctx, data)
				return nil, false, nil
			}
			// A server-to-client request on a 2026-07-28 stream, which
			// that era replaced with input-required results.
			c.log.Warn("request from the server on a 2026-07-28 call stream ignored", "method", name)
			return nil, false, nil
		}
		c.rawNotification(ctx, name, m["params"], s)
		return nil, false, nil
	}
	if string(bytes.TrimSpace(m["id"])) != strconv.FormatInt(id, 10) {
		c.log.Debug("response to another request on a call stream ignored")
		return nil, false, nil
	}
	if e, has := m["error"]; has && string(bytes.TrimSpace(e)) != "null" {
		var we jsonrpc.Error
		if err := json.Unmarshal(e, &we); err != nil {
			return nil, false, fmt.Errorf("%w: %v", errBadMessage, err)
		}
		return nil, true, &we
	}
	result := bytes.TrimSpace(m["result"])
	if len(result) == 0 || result[0] != '{' {
		return nil, false, fmt.Errorf("%w: the result is not a JSON object", errBadMessage)
	}
	return json.RawMessage(result), true, nil
}

// rawNotification routes a notification seen on a call's stream, as the
// capture and go-sdk's handlers would.
func (c *Conn) rawNotification(ctx context.Context, method string, params json.RawMessage, s *slot) {
	switch method {
	case "notifications/progress":
		tok, p, ok := parseProgress(params)
		if !ok {
			return
		}
		if tok == s.token && s.token != "" {
			s.deliver(p)
		} else if f, ok := c.progress.Load(tok); ok {
			f.(func(Progress))(p)
		}
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if json.Unmarshal(params, &p) != nil {
			return
		}
		if s.log != nil {
			s.deliverLog(&p)
			return
		}
		c.onLog(context.Background(), &mcp.LoggingMessageRequest{Params: &p})
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		if f := c.opts.OnListChanged; f != nil {
			f(c.server.Name)
		}
	case "notifications/cancelled":
		// A legacy server gave up a request it made during the call.
		c.relayCancelled(params)
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		if f := c.opts.OnResourceUpdated; f != nil && json.Unmarshal(params, &p) == nil {
			f(c.server.Name, p.URI)
		}
	}
}

// rawStream reads an SSE response until the call's response, handling
// what comes before it. Events are capped at MaxFrame. Once the response
// is in, the rest of the stream is drained briefly (so the HTTP connection
// can be reused) and then abandoned.
func (c *Conn) rawStream(ctx context.Context, body io.Reader, id int64, s *slot, abandon context.CancelFunc, st *sseState) (json.RawMessage, error) {
	br := sseReaders.Get().(*bufio.Reader)
	br.Reset(body)
	defer func() {
		br.Reset(nil)
		sseReaders.Put(br)
	}()
	max := int64(c.opts.MaxFrame)
	var data []byte
	hasData := false
	name, eventID := "", ""
	var size int64
	dispatch := func() (json.RawMessage, bool, error) {
		defer func() { data, hasData, name, eventID, size = data[:0], false, "", "", 0 }()
		if eventID != "" {
			st.last = eventID
		}
		if !hasData || len(data) == 0 || (name != "" && name != "message") {
			return nil, false, nil
		}
		return c.rawMessage(ctx, data, id, s)
	}
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				if size+int64(len(long)) > max {
					return nil, fmt.Errorf("SSE event exceeds %s cap: %w", sizeString(max), ErrResponseTooLarge)
				}
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		size += int64(len(line))
		if size > max {
			return nil, fmt.Errorf("SSE event exceeds %s cap: %w", sizeString(max), ErrResponseTooLarge)
		}
		t := bytes.TrimRight(line, "\r\n")
		switch {
		case len(t) == 0 && len(line) > 0:
			raw, done, derr := dispatch()
			if derr != nil || done {
				if done && derr == nil {
					rawDrain(br, abandon)
				}
				return raw, derr
			}
		case len(t) == 0 || t[0] == ':':
			// the end of the stream, or a comment
		default:
			field, value := t, []byte(nil)
			if i := bytes.IndexByte(t, ':'); i >= 0 {
				field, value = t[:i], t[i+1:]
				if len(value) > 0 && value[0] == ' ' {
					value = value[1:]
				}
			}
			switch string(field) {
			case "data":
				if hasData {
					data = append(data, '\n')
				}
				data = append(data, value...)
				hasData = true
			case "event":
				name = string(value)
			case "id":
				eventID = string(value)
			case "retry":
				if n, err := strconv.ParseInt(string(value), 10, 64); err == nil && n >= 0 {
					st.retry = time.Duration(n) * time.Millisecond
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				raw, done, derr := dispatch()
				if derr != nil || done {
					return raw, derr
				}
				return nil, errNoResponse
			}
			return nil, err
		}
	}
}

// sseReaders holds the read buffers of call streams: 64 KiB each, which
// allocated per call was most of the raw path's own garbage at small
// payloads. Nothing read through one outlives the call's rawStream: an
// event's data is copied out of it.
var sseReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// sseState is what a call's SSE stream said about resuming it: the last
// event ID and the reconnection delay the server asked for.
type sseState struct {
	last  string
	retry time.Duration
}

// rawMaxRetries is go-sdk's default StreamableClientTransport.MaxRetries.
const rawMaxRetries = 5

// rawResume resumes a call's stream that ended or broke before the
// response, as go-sdk's client does (streamableClientConn.handleSSE): when
// the server numbered its events, a GET with Last-Event-ID, after the
// delay the server asked for or go-sdk's backoff, until the response comes
// or rawMaxRetries reconnections in a row make no progress; a failure to
// reconnect ends the connection, as in go-sdk.
func (c *Conn) rawResume(ctx context.Context, summary string, raw json.RawMessage, err error, id int64, s *slot, st *sseState) (json.RawMessage, error) {
	prev, retries := "", 0
	for err != nil && st.last != "" && ctx.Err() == nil && c.life.Err() == nil {
		var rpc *jsonrpc.Error
		if errors.Is(err, ErrResponseTooLarge) || errors.Is(err, errBadMessage) || errors.As(err, &rpc) {
			return raw, err
		}
		if st.last != prev {
			prev, retries = st.last, 0
		} else if retries++; retries > rawMaxRetries {
			ferr := fmt.Errorf("%s: exceeded %d retries without progress (session ID: %v)", summary, rawMaxRetries, c.session.ID())
			c.rawFail(ferr)
			return nil, ferr
		}
		resp, gerr := c.rawReconnect(ctx, st.last, st.retry)
		if gerr != nil {
			if ctx.Err() == nil {
				ferr := fmt.Errorf("%s: failed to reconnect (session ID: %v): %v", summary, c.session.ID(), gerr)
				c.rawFail(ferr)
				return nil, ferr
			}
			return nil, gerr
		}
		if serr := c.rawStatus(resp, summary); serr != nil {
			resp.Body.Close()
			c.rawFail(serr)
			return nil, serr
		}
		gctx, gcancel := context.WithCancel(ctx)
		stop := context.AfterFunc(gctx, func() { resp.Body.Close() })
		raw, err = c.rawStream(ctx, resp.Body, id, s, gcancel, st)
		stop()
		gcancel()
		resp.Body.Close()
	}
	return raw, err
}

// rawReconnect opens the GET that resumes a stream after lastID, trying
// rawMaxRetries times (streamableClientConn.connectSSE).
func (c *Conn) rawReconnect(ctx context.Context, lastID string, delay time.Duration) (*http.Response, error) {
	if delay <= 0 {
		delay = rawBackoff(1)
	}
	var lastErr error
	for attempt := 1; attempt <= rawMaxRetries; attempt++ {
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-c.life.Done():
			t.Stop()
			return nil, errors.New("connection closed by client during reconnect")
		case <-t.C:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.server.URL, nil)
		if err != nil {
			return nil, err
		}
		c.sessionHeaders(req.Header)
		req.Header.Set("Last-Event-ID", lastID)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := c.raw.client.Do(req)
		if err != nil {
			lastErr = err
			delay = rawBackoff(attempt + 1)
			continue
		}
		return resp, nil
	}
	return nil, fmt.Errorf("connection failed after %d attempts: %w", rawMaxRetries, lastErr)
}

// rawBackoff is go-sdk's reconnection delay for an attempt
// (calculateReconnectDelay): 1 s growing by 1.5 a time, at most 30 s, plus
// full jitter.
func rawBackoff(attempt int) time.Duration {
	d := min(time.Duration(float64(time.Second)*math.Pow(1.5, float64(attempt-1))), 30*time.Second)
	return d + rand.N(d)
}

// rawDrain reads what is left of a stream whose response is in, for at
// most a moment, so that its connection goes back to the pool.
func rawDrain(r io.Reader, abandon context.CancelFunc) {
	t := time.AfterFunc(100*time.Millisecond, abandon)
	defer t.Stop()
	io.Copy(io.Discard, io.LimitReader(r, 1<<20))
}

// topMembers splits a JSON object into its top-level members, with exact
// keys (the last duplicate wins, as in encoding/json), without decoding
// the values. data must be valid JSON. A key written with escapes sends it
// to encoding/json.
func topMembers(data []byte) (map[string]json.RawMessage, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	m := make(map[string]json.RawMessage, 4)
	i++
	for {
		i = skipSpace(data, i)
		if i < len(data) && data[i] == '}' {
			return m, true
		}
		if i >= len(data) || data[i] != '"' {
			return nil, false
		}
		end := stringEnd(data, i)
		if end < 0 {
			return nil, false
		}
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return members(data)
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		vend := valueEnd(data, i)
		if vend < 0 {
			return nil, false
		}
		m[string(key)] = data[i:vend]
		i = skipSpace(data, vend)
		if i < len(data) && data[i] == ',' {
			i++
		}
	}
}
