package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/mcphttp"
)

// The raw tools/call path for legacy sessions.
//
// Clients of the legacy era (protocol 2025-06-18 and 2025-11-25 over
// Streamable HTTP: Claude Code, Claude Desktop and Cursor today) hold a
// session with go-sdk's stateful handler. Through go-sdk, every tools/call
// of theirs is decoded twice on the way in and its result decoded and
// encoded again on the way out. The raw path (raw.go) serves the plain ones
// itself, as it does for 2026-07-28 clients, on these terms:
//
//   - the session was made through this endpoint and go-sdk holds it
//     (Gateway.sessionBorn, and it is forgotten when go-sdk ends it), and
//     the client has initialized it;
//   - HTTP: POST with its Mcp-Session-Id, Mcp-Protocol-Version 2025-06-18 or
//     2025-11-25, no Mcp-Method, no Last-Event-ID, Content-Type
//     application/json, an Accept listing JSON and SSE, and a Host that
//     passes go-sdk's DNS-rebinding check;
//   - body: parseCallEnvelope's, with a _meta (if any) holding no
//     io.modelcontextprotocol/ key (which go-sdk checks);
//   - the client has not set a log level (logging/setLevel): go-sdk then
//     sends it log messages on the call's stream, which the raw path does
//     not write;
//   - go-sdk has served a POST of the session within the last half of
//     mcphttp.SessionTimeout. go-sdk closes a session that it has not
//     served a POST for in SessionTimeout; calls served here do not count
//     there, so now and then one goes to go-sdk, which keeps the session
//     alive while it is in use;
//   - the tool is one rawCalls.tool accepts.
//
// The call runs parked (park.go). If it ends without asking the client
// anything, the answer is written as go-sdk writes it to a legacy session:
// one SSE event, no event ID, the result as the upstream sent it less the
// protocol's _meta keys (passThrough), or encoded from go-sdk's types
// (encodeLegacy); a JSON-RPC error as an event too.
//
// If the upstream asks the client something first (sampling, elicitation,
// roots, or the gateway's own confirmation), or reports progress on a call
// with a progressToken, nothing has been written yet: the request goes to
// go-sdk after all, marked with a handover token (handoverHeader). go-sdk
// calls Gateway.callTool with it, which adopts the running call instead of
// starting it again: the question, and any after it, go to the session,
// and the progress reports (the first one kept until then) to the
// progressToken, on the request's own stream, as for a call served by
// go-sdk from the start (Gateway.adopt). So calls that answer at once are
// served raw, and slow ones, whose time is the upstream's anyway, end on
// go-sdk's path.
//
// A client's notifications/cancelled for a call served here cancels it (and
// goes on to go-sdk, which answers it). A client that goes away does not
// cancel the call, as with go-sdk (a legacy stream's end is no
// cancellation); questions asked after that are refused.

const (
	sessionHeader = "Mcp-Session-Id"
	// handoverHeader carries a handover token from the raw path to
	// callTool, through go-sdk; a client's own is removed on arrival.
	handoverHeader = "Switchboard-Handover"
)

// errClientGone answers an upstream's question whose client went away.
var errClientGone = errors.New("the client's request ended before the question could be put to it")

// legacySession is a legacy session as the raw path knows it.
type legacySession struct {
	ss      *mcp.ServerSession
	init    atomic.Pointer[mcp.InitializeParams] // once the client has initialized
	lastSDK atomic.Int64                         // when go-sdk last served a POST of the session (UnixNano)
	logs    atomic.Bool                          // the client set a log level

	mu    sync.Mutex
	calls map[string]*rawLegacyCall // calls served raw in flight, by JSON-RPC id as written
}

// rawLegacyCall is a call served raw, for a notifications/cancelled.
type rawLegacyCall struct{ cancel func() }

// legacySessions are the sessions made through an endpoint with the raw
// path, by ID.
type legacySessions struct {
	mu sync.Mutex
	m  map[string]*legacySession
}

func (s *legacySessions) get(id string) *legacySession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id]
}

// sessionBorn notes the session go-sdk has just made (its ID is in the
// initialize response's headers) and forgets it when go-sdk ends it.
func (g *Gateway) sessionBorn(id string) {
	for ss := range g.server.Sessions() {
		if ss.ID() != id {
			continue
		}
		ls := &legacySession{ss: ss, calls: map[string]*rawLegacyCall{}}
		ls.lastSDK.Store(time.Now().UnixNano())
		g.legacy.mu.Lock()
		if _, dup := g.legacy.m[id]; dup {
			g.legacy.mu.Unlock()
			return
		}
		g.legacy.m[id] = ls
		g.legacy.mu.Unlock()
		go func() {
			ss.Wait()
			g.legacy.mu.Lock()
			delete(g.legacy.m, id)
			g.legacy.mu.Unlock()
		}()
		return
	}
}

// noteLogLevel is receiving middleware that marks a legacy session whose
// client sets a log level (see the top of the file).
func (g *Gateway) noteLogLevel(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "logging/setLevel" {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
				if ls := g.legacy.get(ss.ID()); ls != nil {
					ls.logs.Store(true)
				}
			}
		}
		return next(ctx, method, req)
	}
}

// initialized returns the session's initialize parameters once the client
// has initialized it, else nil.
func (ls *legacySession) initialized() *mcp.InitializeParams {
	if p := ls.init.Load(); p != nil {
		return p
	}
	p := ls.ss.InitializeParams()
	if p != nil {
		ls.init.Store(p)
	}
	return p
}

// fresh reports whether go-sdk served a POST of the session recently
// enough (see the top of the file).
func (ls *legacySession) fresh() bool {
	return time.Since(time.Unix(0, ls.lastSDK.Load())) < mcphttp.SessionTimeout/2
}

func (ls *legacySession) track(id string, c *rawLegacyCall) {
	ls.mu.Lock()
	ls.calls[id] = c
	ls.mu.Unlock()
}

func (ls *legacySession) untrack(id string, c *rawLegacyCall) {
	ls.mu.Lock()
	if ls.calls[id] == c {
		delete(ls.calls, id)
	}
	ls.mu.Unlock()
}

// cancelled cancels the raw call a notifications/cancelled body names, if
// it is one.
func (ls *legacySession) cancelled(body []byte) {
	ls.mu.Lock()
	n := len(ls.calls)
	ls.mu.Unlock()
	if n == 0 || !bytes.Contains(body, []byte("notifications/cancelled")) {
		return
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "notifications/cancelled" {
		return
	}
	var id bytes.Buffer
	if json.Compact(&id, msg.Params.RequestID) != nil {
		return
	}
	ls.mu.Lock()
	c := ls.calls[id.String()]
	ls.mu.Unlock()
	if c != nil {
		c.cancel()
	}
}

// serveSession handles a request that names a legacy session.
func (rc *rawCalls) serveSession(w http.ResponseWriter, r *http.Request, id string) {
	ls := rc.g.legacy.get(id)
	if ls == nil || r.Method != http.MethodPost {
		rc.next.ServeHTTP(w, r)
		return
	}
	body, err := readBody(r)
	if err != nil {
		// Not reached behind the front door, which has read the body.
		http.Error(w, "failed to read body", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if ls.fresh() && legacyCandidate(r) && !ls.logs.Load() {
		if params := ls.initialized(); params != nil {
			if c, meta, ok := parseCallEnvelope(body); ok && legacyMeta(meta) {
				if t, ok := rc.tool(c.name); ok {
					c.caps = params.Capabilities
					rc.serveLegacy(w, r, body, c, t, progressToken(meta) != nil, ls, id)
					return
				}
			}
		}
	}
	ls.cancelled(body)
	rc.next.ServeHTTP(w, r)
	ls.lastSDK.Store(time.Now().UnixNano())
}

// legacyCandidate checks the HTTP side of a legacy session's request (see
// the top of the file).
func legacyCandidate(r *http.Request) bool {
	h := r.Header
	if v := h.Get("Mcp-Protocol-Version"); v != "2025-11-25" && v != "2025-06-18" {
		return false
	}
	if len(h.Values("Mcp-Method")) > 0 || len(h.Values("Last-Event-ID")) > 0 {
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

// legacyMeta checks a legacy request's _meta (see the top of the file).
func legacyMeta(meta []byte) bool {
	if meta == nil {
		return true
	}
	return eachMember(meta, func(key, _ []byte) bool {
		var k string
		if json.Unmarshal(key, &k) != nil {
			return false
		}
		return !strings.HasPrefix(k, protocolMeta)
	})
}

// progressToken returns the progressToken of a legacy request's _meta
// (checked by legacyMeta), nil when there is none or it is null.
func progressToken(meta []byte) []byte {
	var tok []byte
	if meta != nil {
		eachMember(meta, func(key, value []byte) bool {
			if string(key) == `"progressToken"` {
				tok = value
			}
			return true
		})
	}
	if string(tok) == "null" {
		return nil
	}
	return tok
}

// progressSink holds a raw call's progress reports until go-sdk adopts the
// call (see the top of the file), and sends them on after that.
type progressSink struct {
	mu      sync.Mutex
	send    func(host.Progress) // set by adopt
	pending []host.Progress     // before that; at most maxPendingProgress
	first   chan struct{}       // closed on the first report
}

// maxPendingProgress bounds the reports a call keeps before it is adopted
// (or while it runs on for a client that went away).
const maxPendingProgress = 16

func newProgressSink() *progressSink { return &progressSink{first: make(chan struct{})} }

// report is the call's host.CallOptions.Progress.
func (s *progressSink) report(pr host.Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.send != nil {
		s.send(pr)
		return
	}
	if len(s.pending) == 0 {
		close(s.first)
	}
	if len(s.pending) < maxPendingProgress {
		s.pending = append(s.pending, pr)
	}
}

// adopt sends the reports kept and any later ones with send.
func (s *progressSink) adopt(send func(host.Progress)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pr := range s.pending {
		send(pr)
	}
	s.pending, s.send = nil, send
}

// serveLegacy makes a legacy session's call and writes the answer, or
// hands the request to go-sdk when the upstream asks the client something.
func (rc *rawCalls) serveLegacy(w http.ResponseWriter, r *http.Request, body []byte, c *rawCall, t host.Tool, progress bool, ls *legacySession, session string) {
	g := rc.g
	g.log.Debug(rawServedMsg, "tool", t.ID)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	p := g.newPeer(ctx, ls.ss, c.caps, ls.initialized().ProtocolVersion)
	opts := &host.CallOptions{Peer: &rawPeer{p}, RawOnly: true, Confirm: g.confirmer(p), Client: session}
	var sink *progressSink
	var first <-chan struct{} // nil: no progress asked for
	if progress {
		sink = newProgressSink()
		opts.Progress, first = sink.report, sink.first
	}
	pc := g.startParked(ctx, p, func(bg context.Context) (*host.Result, error) {
		return g.host.Call(bg, t.ID, c.args, opts)
	})
	// Tracked until the call ends: a client that went away may still
	// cancel it.
	key, call := string(c.id), &rawLegacyCall{cancel: func() { cancel(); pc.cancel() }}
	ls.track(key, call)
	select {
	case out := <-pc.done:
		select {
		case <-first:
			// It reported progress and ended at once: go-sdk would have
			// sent the reports before the result, and so does adopt.
			pc.done <- out
			rc.handOver(w, r, body, &handover{pc: pc, progress: sink, session: session})
			ls.lastSDK.Store(time.Now().UnixNano())
		default:
			rc.writeLegacy(w, ctx, c.id, t, out)
		}
		ls.untrack(key, call)
	case q := <-pc.asks:
		rc.handOver(w, r, body, &handover{pc: pc, q: q, progress: sink, session: session})
		ls.untrack(key, call)
		ls.lastSDK.Store(time.Now().UnixNano())
	case <-first:
		rc.handOver(w, r, body, &handover{pc: pc, progress: sink, session: session})
		ls.untrack(key, call)
		ls.lastSDK.Store(time.Now().UnixNano())
	case <-ctx.Done():
		// The client went away, or cancelled the call (which ends it).
		go func() {
			drain(pc)
			ls.untrack(key, call)
		}()
	}
}

// drain lets a call whose client is gone run to its end, refusing its
// questions.
func drain(pc *parkedCall) {
	for {
		select {
		case <-pc.done:
			return
		case q := <-pc.asks:
			q.reply <- answer{err: errClientGone}
		}
	}
}

// writeLegacy writes a call's end as go-sdk writes it to a legacy session.
func (rc *rawCalls) writeLegacy(w http.ResponseWriter, ctx context.Context, id json.RawMessage, t host.Tool, out outcome) {
	if out.err == nil {
		if event, ok := rc.passThrough(id, out.res.Raw, true); ok {
			writeEvent(w, event)
			return
		}
	}
	res, err := rc.g.toolResult(ctx, t, out.res, out.err)
	if err != nil {
		if ctx.Err() == nil {
			rc.writeLegacyError(w, id, err)
		}
		return
	}
	msg, err := encodeLegacy(id, res)
	if err != nil {
		rc.g.log.Warn("raw tools/call: result not encodable", "tool", t.ID, "err", err)
		rc.writeLegacyError(w, id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
		return
	}
	writeEvent(w, slices.Concat([]byte(eventPrefix), msg, []byte(eventSuffix)))
}

// encodeLegacy builds the response message for a result made with
// go-sdk's types as go-sdk's server does for a legacy session: content is
// [] at least, nothing is added.
func encodeLegacy(id json.RawMessage, res *mcp.CallToolResult) ([]byte, error) {
	if res.Content == nil {
		r := *res
		r.Content = []mcp.Content{}
		res = &r
	}
	data, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	return slices.Concat([]byte(`{"jsonrpc":"2.0","id":`), id, []byte(`,"result":`), data, []byte("}")), nil
}

// writeLegacyError writes a JSON-RPC error as go-sdk does on a legacy
// session: as an SSE event.
func (rc *rawCalls) writeLegacyError(w http.ResponseWriter, id json.RawMessage, err error) {
	writeEvent(w, slices.Concat([]byte(eventPrefix), rpcError(id, err), []byte(eventSuffix)))
}

// handover is a raw call on its way to go-sdk, with the question it
// stopped at (nil if it stopped at a progress report); pc is nil once the
// raw path withdrew it.
type handover struct {
	pc       *parkedCall
	q        *question
	progress *progressSink // nil: no progress asked for
	session  string
}

// handOver sends the request to go-sdk with a token that lets callTool
// adopt the running call (see the top of the file).
func (rc *rawCalls) handOver(w http.ResponseWriter, r *http.Request, body []byte, h *handover) {
	g := rc.g
	raw := make([]byte, 16)
	rand.Read(raw)
	token := hex.EncodeToString(raw)
	g.handoverMu.Lock()
	g.handovers[token] = h
	g.handoverMu.Unlock()
	r.Header.Set(handoverHeader, token)
	r.Body = io.NopCloser(bytes.NewReader(body))
	rc.next.ServeHTTP(w, r)
	if h := g.withdrawHandover(token); h != nil {
		// go-sdk answered without calling the tool (the session ended,
		// say): the call ends here.
		if h.q != nil {
			h.q.reply <- answer{err: errClientGone}
		}
		h.pc.cancel()
		go drain(h.pc)
	}
}

// handoverWithdrawn is how long a withdrawn handover's token is kept, so
// that a go-sdk handler that starts late with it ends instead of calling
// the tool again.
const handoverWithdrawn = time.Minute

// takeHandover returns and forgets the handover of token for session. A
// handover the raw path withdrew returns an error; a token it never made
// (a client's own header, where the raw path is off) returns nil.
func (g *Gateway) takeHandover(token, session string) (*handover, error) {
	g.handoverMu.Lock()
	defer g.handoverMu.Unlock()
	h := g.handovers[token]
	if h == nil || h.session != session {
		return nil, nil
	}
	delete(g.handovers, token)
	if h.pc == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the call ended before go-sdk could take it over"}
	}
	return h, nil
}

// withdrawHandover takes back a handover go-sdk did not take, leaving its
// token withdrawn for a while; nil if go-sdk took it.
func (g *Gateway) withdrawHandover(token string) *handover {
	g.handoverMu.Lock()
	defer g.handoverMu.Unlock()
	h := g.handovers[token]
	if h == nil {
		return nil
	}
	g.handovers[token] = &handover{session: h.session}
	time.AfterFunc(handoverWithdrawn, func() {
		g.handoverMu.Lock()
		delete(g.handovers, token)
		g.handoverMu.Unlock()
	})
	return h
}

// handoverOf returns the handover token go-sdk passed on with req, if any.
func handoverOf(req *mcp.CallToolRequest) string {
	if req.Extra == nil {
		return ""
	}
	return req.Extra.Header.Get(handoverHeader)
}

// adopt finishes a call that the raw path started and handed over: the
// question it stopped at, and any after it, are put to the client's
// session on this request's stream.
func (g *Gateway) adopt(ctx context.Context, t host.Tool, p *peer, req *mcp.CallToolRequest, h *handover) (*mcp.CallToolResult, error) {
	pc, q := h.pc, h.q
	if tok := req.Params.GetProgressToken(); tok != nil && h.progress != nil {
		h.progress.adopt(func(pr host.Progress) {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: tok, Progress: pr.Progress, Total: pr.Total, Message: pr.Message,
			})
			if err != nil {
				g.log.Debug("progress not forwarded", "tool", t.ID, "err", err)
			}
		})
	}
	for {
		if q != nil {
			resp, err := p.answer(q.req)
			q.reply <- answer{resp: resp, err: err}
			q = nil
		}
		select {
		case out := <-pc.done:
			return g.toolResult(ctx, t, out.res, out.err)
		case q = <-pc.asks:
		case <-ctx.Done():
			pc.cancel()
			go drain(pc)
			return nil, ctx.Err()
		}
	}
}
