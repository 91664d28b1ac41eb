package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
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
//   - the session was made through this endpoint (noteSession), go-sdk
//     still holds it, and the client has initialized it with a legacy
//     version;
//   - HTTP: POST with its Mcp-Session-Id, Mcp-Protocol-Version 2025-06-18 or
//     2025-11-25, no Mcp-Method, no Last-Event-ID, Content-Type
//     application/json, an Accept listing JSON and SSE, and a Host that
//     passes go-sdk's DNS-rebinding check;
//   - body: parseCallEnvelope's, with a _meta (if any) holding no
//     io.modelcontextprotocol/ key (which go-sdk checks), and an id that no
//     call of the session served here is using;
//   - the client has not set a log level (logging/setLevel): go-sdk then
//     sends it log messages on the call's stream, which the raw path does
//     not write;
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
// A client's notifications/cancelled for a call served here cancels it,
// and the call is answered with an error, as go-sdk answers (the
// notification goes on to go-sdk, which acknowledges it). A client that
// goes away does not cancel the call, as with go-sdk (a legacy stream's
// end is no cancellation); questions asked after that are refused. The
// session's end (a DELETE go-sdk accepts, idle, shutdown) cancels its
// calls, as the end of go-sdk's connection cancels the handlers in flight.
//
// Idle sessions: go-sdk closes a session none of whose POSTs has run for
// mcphttp.SessionTimeout, counting only the POSTs it serves. Here it does
// not count at all (mcphttp.Options.InterceptTimesOut): each session made
// through this endpoint has the same timer, and every POST of the session,
// served raw or by go-sdk, holds it (legacySession.begin and end).

const (
	sessionHeader = "Mcp-Session-Id"
	// handoverHeader carries a handover token from the raw path to
	// callTool, through go-sdk; a client's own is removed on arrival.
	handoverHeader = "Switchboard-Handover"
	// endpointHeader marks, with Gateway.endpointMark, a request that came
	// through the raw path's endpoint (noteSession); a client's own is
	// removed on arrival.
	endpointHeader = "Switchboard-Endpoint"
)

// errClientGone answers an upstream's question whose client went away.
var errClientGone = errors.New("the client's request ended before the question could be put to it")

// errCancelled answers a call the client cancelled; errSessionEnded a call
// whose session ended (a DELETE, idle, shutdown) while it ran.
var (
	errCancelled    = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client cancelled the call"}
	errSessionEnded = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the session ended while the call ran"}
)

// legacySession is a legacy session as the raw path knows it.
type legacySession struct {
	ss     *mcp.ServerSession
	active atomic.Bool                          // made through an endpoint with the raw path (noteSession)
	init   atomic.Pointer[mcp.InitializeParams] // once the client has initialized
	logs   atomic.Bool                          // the client set a log level
	// deleting counts DELETEs of the session that go-sdk is answering.
	deleting atomic.Int32

	mu        sync.Mutex
	calls     map[jsonrpc.ID]*rawLegacyCall // calls served raw in flight
	withdrawn []string                      // handover tokens withdrawn, kept while the session lives
	ended     bool
	refs      int         // POSTs running
	idle      *time.Timer // closes the session; nil until active
}

// rawLegacyCall is a call served raw, for a notifications/cancelled or
// the session's end: cancel ends it with a cause, errCancelled or
// errSessionEnded.
type rawLegacyCall struct {
	cancel    func(cause error)
	cancelled atomic.Bool
	pc        atomic.Pointer[parkedCall]
}

// legacySessions are the gateway's legacy sessions, by ID.
type legacySessions struct {
	mu sync.Mutex
	m  map[string]*legacySession
}

func (s *legacySessions) get(id string) *legacySession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id]
}

// noteSession is receiving middleware that notes every session go-sdk
// makes over HTTP as it is initialized (before the client has its ID), and
// the sessions whose client sets a log level. A session initialized
// through the raw path's endpoint is one the raw path serves from then on.
func (g *Gateway) noteSession(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize", "logging/setLevel":
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
				ls := g.sessionOf(ss)
				switch extra := req.GetExtra(); {
				case method == "logging/setLevel":
					ls.logs.Store(true)
				case extra != nil && extra.Header.Get(endpointHeader) == g.endpointMark:
					g.activate(ss.ID(), ls)
				}
			}
		}
		return next(ctx, method, req)
	}
}

// sessionOf returns ss's entry, made on first sight; the entry is
// forgotten, and the session's raw calls cancelled, when go-sdk ends it.
func (g *Gateway) sessionOf(ss *mcp.ServerSession) *legacySession {
	id := ss.ID()
	g.legacy.mu.Lock()
	defer g.legacy.mu.Unlock()
	if ls := g.legacy.m[id]; ls != nil {
		return ls
	}
	ls := &legacySession{ss: ss, calls: map[jsonrpc.ID]*rawLegacyCall{}}
	g.legacy.m[id] = ls
	go func() {
		ss.Wait()
		g.forgetSession(id, ls)
	}()
	return ls
}

// forgetSession drops a session that ended or is ending: its raw calls are
// cancelled, its withdrawn handover tokens forgotten.
func (g *Gateway) forgetSession(id string, ls *legacySession) {
	g.legacy.mu.Lock()
	if g.legacy.m[id] == ls {
		delete(g.legacy.m, id)
	}
	g.legacy.mu.Unlock()
	ls.mu.Lock()
	ls.ended = true
	calls := ls.calls
	ls.calls = map[jsonrpc.ID]*rawLegacyCall{}
	withdrawn := ls.withdrawn
	ls.withdrawn = nil
	if ls.idle != nil {
		ls.idle.Stop()
	}
	ls.mu.Unlock()
	for _, c := range calls {
		c.cancel(errSessionEnded)
	}
	g.handoverMu.Lock()
	for _, token := range withdrawn {
		delete(g.handovers, token)
	}
	g.handoverMu.Unlock()
}

// activate makes a session one the raw path serves, and starts its idle
// timer.
func (g *Gateway) activate(id string, ls *legacySession) {
	if ls.active.Swap(true) {
		return
	}
	ls.mu.Lock()
	if !ls.ended {
		ls.idle = time.AfterFunc(time.Duration(g.sessionIdle.Load()), func() {
			g.log.Debug("legacy session idle: closed", "session", id)
			ls.ss.Close()
		})
	}
	ls.mu.Unlock()
}

// begin and end bracket each POST of an active session: the session is
// not idle while one runs, and its timer starts again when the last ends
// (go-sdk's sessionInfo.startPOST and endPOST).
func (ls *legacySession) begin() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.idle != nil && ls.refs == 0 {
		ls.idle.Stop()
	}
	ls.refs++
}

func (ls *legacySession) end(idle time.Duration) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.refs--
	if ls.idle != nil && ls.refs == 0 && !ls.ended {
		ls.idle.Reset(idle)
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

// track notes a raw call by its id; false if the id is in use (or the
// session ended).
func (ls *legacySession) track(id jsonrpc.ID, c *rawLegacyCall) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if _, dup := ls.calls[id]; dup || ls.ended {
		return false
	}
	ls.calls[id] = c
	return true
}

func (ls *legacySession) untrack(id jsonrpc.ID, c *rawLegacyCall) {
	ls.mu.Lock()
	if ls.calls[id] == c {
		delete(ls.calls, id)
	}
	ls.mu.Unlock()
}

// rpcID reads a JSON-RPC id as go-sdk does (jsonrpc.MakeID): 5, 5.0 and
// 5e0 are one id.
func rpcID(raw []byte) (jsonrpc.ID, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil && id.IsValid()
}

// cancelled cancels the raw call a notifications/cancelled body names, if
// it is one.
func (ls *legacySession) cancelled(body []byte) {
	ls.mu.Lock()
	n := len(ls.calls)
	ls.mu.Unlock()
	if n == 0 || !bytes.Contains(body, []byte("cancelled")) {
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
	id, ok := rpcID(msg.Params.RequestID)
	if !ok {
		return
	}
	ls.mu.Lock()
	c := ls.calls[id]
	ls.mu.Unlock()
	if c != nil {
		c.cancel(errCancelled)
	}
}

// serveSession handles a request that names a legacy session.
func (rc *rawCalls) serveSession(w http.ResponseWriter, r *http.Request, id string) {
	g := rc.g
	ls := g.legacy.get(id)
	if ls == nil || !ls.active.Load() {
		rc.next.ServeHTTP(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		// No call is served raw while go-sdk decides; if it ends the
		// session, the raw path forgets it before the client has the answer.
		ls.deleting.Add(1)
		sw := &statusWriter{ResponseWriter: w}
		rc.next.ServeHTTP(sw, r)
		if sw.status == http.StatusNoContent {
			g.forgetSession(id, ls)
		}
		ls.deleting.Add(-1)
		return
	default:
		rc.next.ServeHTTP(w, r)
		return
	}
	ls.begin()
	defer ls.end(time.Duration(g.sessionIdle.Load()))
	body, err := readBody(r)
	if err != nil {
		// Not reached behind the front door, which has read the body.
		http.Error(w, "failed to read body", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if legacyCandidate(r) && !ls.logs.Load() && ls.deleting.Load() == 0 {
		if params := ls.initialized(); params != nil && params.ProtocolVersion < rawVersion {
			if c, meta, ok := parseCallEnvelope(body); ok && legacyMeta(meta) {
				if t, ok := rc.tool(c.name); ok {
					c.caps = params.Capabilities
					if rc.serveLegacy(w, r, body, c, t, progressToken(meta) != nil, ls, id) {
						return
					}
				}
			}
		}
	}
	ls.cancelled(body)
	rc.next.ServeHTTP(w, r)
}

// legacyCandidate checks the HTTP side of a legacy session's request (see
// the top of the file).
func legacyCandidate(r *http.Request) bool {
	h := r.Header
	if v := h.Get("Mcp-Protocol-Version"); v != "2025-11-25" && v != "2025-06-18" {
		return false
	}
	return len(h.Values("Mcp-Method")) == 0 && plainPost(r)
}

// legacyMeta checks a legacy request's _meta (see the top of the file).
func legacyMeta(meta []byte) bool {
	if meta == nil {
		return true
	}
	// Keys written with escapes go to go-sdk: progressToken reads them
	// as written.
	return eachMember(meta, func(key, _ []byte) bool {
		return bytes.IndexByte(key, '\\') < 0 && !bytes.HasPrefix(key, []byte(`"`+protocolMeta))
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
// hands the request to go-sdk when the upstream asks the client something
// or reports progress. It reports false, having done nothing, when the
// call's id is in use.
func (rc *rawCalls) serveLegacy(w http.ResponseWriter, r *http.Request, body []byte, c *rawCall, t host.Tool, progress bool, ls *legacySession, session string) bool {
	g := rc.g
	id, ok := rpcID(c.id)
	if !ok {
		return false
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	call := &rawLegacyCall{}
	call.cancel = func(cause error) {
		call.cancelled.Store(true)
		cancel(cause)
		if pc := call.pc.Load(); pc != nil {
			pc.cancel()
		}
	}
	if !ls.track(id, call) {
		return false
	}
	g.log.Debug(rawServedMsg, "tool", t.ID)
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
	call.pc.Store(pc)
	if call.cancelled.Load() {
		pc.cancel() // cancelled before it had started
	}
	handOver := func(q *question) {
		// Still tracked while go-sdk takes the call over: a cancellation
		// in between reaches it here (adopt answers it as cancelled).
		rc.handOver(w, r, body, &handover{pc: pc, q: q, progress: sink, session: session, ls: ls, call: call})
		ls.untrack(id, call)
	}
	select {
	case out := <-pc.done:
		select {
		case <-first:
			// It reported progress and ended at once: go-sdk would have
			// sent the reports before the result, and so does adopt.
			pc.done <- out
			handOver(nil)
		default:
			ls.untrack(id, call)
			rc.writeLegacy(w, r.Context(), ctx, c.id, t, out)
		}
	case q := <-pc.asks:
		handOver(q)
	case <-first:
		handOver(nil)
	case <-ctx.Done():
		if r.Context().Err() == nil {
			// Cancelled by the client's notifications/cancelled, or the
			// session ended: answered with an error, as go-sdk answers.
			rc.writeLegacyError(w, c.id, context.Cause(ctx))
		}
		// Tracked until the call ends: a client that went away may still
		// cancel it.
		go func() {
			drain(pc)
			ls.untrack(id, call)
		}()
	}
	return true
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
//
// ctx is the call's, req the HTTP request's: the client may have cancelled
// the call (then failure answers errCancelled) with its request still
// open.
func (rc *rawCalls) writeLegacy(w http.ResponseWriter, req, ctx context.Context, id json.RawMessage, t host.Tool, out outcome) {
	if out.err == nil {
		if event, ok := rc.passThrough(id, out.res.Raw, true); ok {
			writeEvent(w, event)
			return
		}
	}
	res, err := rc.g.toolResult(ctx, t, out.res, out.err)
	if err != nil {
		if req.Err() == nil {
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
	data, err := marshal(withContent(res))
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
	ls       *legacySession // nil for a 2026-07-28 call
	call     *rawLegacyCall // nil for a 2026-07-28 call
}

// handOver sends the request to go-sdk with a token that lets callTool
// adopt the running call (see the top of the file).
func (rc *rawCalls) handOver(w http.ResponseWriter, r *http.Request, body []byte, h *handover) {
	g := rc.g
	token := newToken()
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
	if h.pc == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the call ended before go-sdk could take it over"}
	}
	delete(g.handovers, token)
	return h, nil
}

// handoverWithdrawn is how long a withdrawn token of a 2026-07-28 call
// (which has no session) is kept.
const handoverWithdrawn = time.Minute

// withdrawHandover takes back a handover go-sdk did not take; its token
// stays withdrawn while the session lives (or handoverWithdrawn), so that
// a go-sdk handler that starts late with it ends instead of calling the
// tool again. Nil if go-sdk took it.
func (g *Gateway) withdrawHandover(token string) *handover {
	g.handoverMu.Lock()
	h := g.handovers[token]
	if h == nil {
		g.handoverMu.Unlock()
		return nil
	}
	g.handovers[token] = &handover{session: h.session}
	g.handoverMu.Unlock()
	if h.ls == nil {
		// A 2026-07-28 call: no session to keep the token with.
		g.forgetWithdrawn(token)
		return h
	}
	h.ls.mu.Lock()
	ended := h.ls.ended
	if !ended {
		h.ls.withdrawn = append(h.ls.withdrawn, token)
	}
	h.ls.mu.Unlock()
	if ended {
		// Forgotten with the session already: kept for a while instead.
		g.forgetWithdrawn(token)
	}
	return h
}

// forgetWithdrawn forgets a withdrawn token after handoverWithdrawn.
func (g *Gateway) forgetWithdrawn(token string) {
	time.AfterFunc(handoverWithdrawn, func() {
		g.handoverMu.Lock()
		delete(g.handovers, token)
		g.handoverMu.Unlock()
	})
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
	if p.modern() {
		// A 2026-07-28 call handed over at its first progress report: its
		// questions are parked, as callTool's would be.
		out, ask, err := g.await(ctx, t.ID, pc, nil)
		if out == nil {
			return ask, err
		}
		return g.toolResult(ctx, t, out.res, out.err)
	}
	for {
		if q != nil {
			resp, err := p.answer(q.req)
			q.reply <- answer{resp: resp, err: err}
			q = nil
		}
		select {
		case out := <-pc.done:
			if h.call != nil && h.call.cancelled.Load() {
				// Cancelled while go-sdk was taking it over.
				return nil, errCancelled
			}
			return g.toolResult(ctx, t, out.res, out.err)
		case q = <-pc.asks:
		case <-ctx.Done():
			pc.cancel()
			go drain(pc)
			return nil, errCancelled
		}
	}
}

// statusWriter notes the status of a response (a DELETE's, which has no
// body to flush).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
