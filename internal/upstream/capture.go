package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Raw capture keeps a tool result exactly as the server sent it.
//
// go-sdk decodes every result into typed structs: unknown fields are
// dropped and a content block of an unknown type fails the whole call. A
// host must neither lose data nor fail on a server that is newer than the
// SDK, so for tools/call we take the result bytes off the wire before the
// SDK decodes them, and hand the SDK a minimal stand-in ({"content":[]})
// that it cannot fail on. The caller's context carries a *slot; the
// capture point fills it with the response to the call made under that
// context. Results that ask for more input (2026-07-28 multi-round-trip)
// are left for the SDK to handle.
//
// There are two capture points because go-sdk's Streamable HTTP client
// connection relies on an unexported method that a Connection wrapper
// would hide: stdio and legacy SSE wrap the mcp.Connection; Streamable
// HTTP filters response bodies in an http.RoundTripper.

// standIn replaces a captured result for the SDK's decoder.
var standIn = json.RawMessage(`{"content":[]}`)

type slotKey struct{}

// slot receives one call's raw result and routes its progress.
//
// Progress is routed here, on the wire, rather than through go-sdk's
// client-wide ProgressNotificationHandler: go-sdk hands notifications to
// that handler asynchronously, so the last reports of a call could arrive
// after the call has returned. On the wire they are seen in order, before
// the response, and delivered before the caller gets its result.
type slot struct {
	token    string                          // the call's progress token; "" for none
	progress func(Progress)                  // receives the call's progress; nil for none
	log      func(*mcp.LoggingMessageParams) // receives log messages on the call's stream; may be nil
	list     *listFilter                     // for listings: filters each page instead of capturing

	mu      sync.Mutex
	raw     json.RawMessage
	fault   error  // the call's response broke a cap
	done    bool   // the call has returned: deliver nothing more
	release func() // removes the slot from its connection's tables
}

func withSlot(ctx context.Context, token string, progress func(Progress)) (context.Context, *slot) {
	s := &slot{token: token, progress: progress}
	return context.WithValue(ctx, slotKey{}, s), s
}

// deliver passes one progress report to the caller, unless the call has
// returned: after finish, the caller hears nothing more.
func (s *slot) deliver(p Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done && s.progress != nil {
		s.progress(p)
	}
}

// deliverLog passes a log message sent on the call's own stream, unless
// the call has returned.
func (s *slot) deliverLog(p *mcp.LoggingMessageParams) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done && s.log != nil {
		s.log(p)
	}
}

// finish ends the call's use of the slot. It waits for a delivery under
// way, and forgets the call in the connection's tables, so a call that was
// cancelled and never answered leaves nothing behind.
func (s *slot) finish() {
	s.mu.Lock()
	s.done = true
	release := s.release
	s.release = nil
	s.mu.Unlock()
	if release != nil {
		release()
	}
}

func (s *slot) setFault(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fault == nil {
		s.fault = err
	}
}

func (s *slot) getFault() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fault
}

// wireProgress is the params of notifications/progress.
type wireProgress struct {
	ProgressToken any     `json:"progressToken"`
	Progress      float64 `json:"progress"`
	Total         float64 `json:"total"`
	Message       string  `json:"message"`
}

// parseProgress reads the params of a notifications/progress message and
// returns its string token (Switchboard's tokens are strings).
func parseProgress(params json.RawMessage) (string, Progress, bool) {
	var p wireProgress
	if json.Unmarshal(params, &p) != nil {
		return "", Progress{}, false
	}
	tok, ok := p.ProgressToken.(string)
	return tok, Progress{Progress: p.Progress, Total: p.Total, Message: p.Message}, ok
}

func slotFrom(ctx context.Context) *slot {
	s, _ := ctx.Value(slotKey{}).(*slot)
	return s
}

func (s *slot) get() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw
}

// take stores raw in the slot unless it is a multi-round-trip result, and
// returns what the SDK should decode instead.
func (s *slot) take(raw json.RawMessage) json.RawMessage {
	if s.list != nil {
		return s.list.filter(raw)
	}
	if inputRequired(raw) {
		return raw
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.raw != nil {
		return raw
	}
	s.raw = raw
	return standIn
}

// inputRequired reports whether raw is a 2026-07-28 multi-round-trip
// result (resultType "input_required"), which go-sdk must see to answer.
// The full parse runs only when the marker occurs at all.
func inputRequired(raw json.RawMessage) bool {
	// The marker may be written with escapes ("input\u005frequired").
	if !bytes.Contains(raw, []byte(`"input_required"`)) && !bytes.Contains(raw, []byte(`\u`)) {
		return false
	}
	var m map[string]json.RawMessage // exact keys, as go-sdk reads them
	var rt string
	return json.Unmarshal(raw, &m) == nil && json.Unmarshal(m["resultType"], &rt) == nil && rt == "input_required"
}

// captureTransport wraps a Transport whose Connection can be wrapped.
//
// With probe > 0 it also bounds the 2026-07-28 server/discover probe: a
// server that has not answered it within probe gets a synthetic "method
// not found" in its place, so go-sdk falls back to the legacy initialize
// on the same connection and the same process (go-sdk issue #1177: it
// would otherwise wait for the caller's deadline and then fail). A late
// answer to the probe is dropped.
//
// abort, when set, is called instead of a graceful close if the connection
// is closed before established is true: go-sdk closes the connection itself
// when a handshake fails, and a server that never completed one has
// nothing to finish (the launcher's Abort skips the grace period).
//
// modernOnly keeps the handshake to server/discover: go-sdk falls back to
// initialize when discover fails, and the connection refuses to send that
// initialize, failing the handshake with the server's answer to discover.
type captureTransport struct {
	mcp.Transport
	probe       time.Duration
	established *atomic.Bool
	abort       func()
	modernOnly  bool
	// onLog, when set, is offered each notifications/message in wire order
	// (before the responses that follow it); it reports whether it
	// delivered the message, which go-sdk then does not see.
	onLog func(*mcp.LoggingMessageParams) bool
}

func (t captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cc := &captureConn{
		Connection:  c,
		probe:       t.probe,
		established: t.established,
		abort:       t.abort,
		modernOnly:  t.modernOnly,
		onLog:       t.onLog,
		pending:     map[jsonrpc.ID]*slot{},
		tokens:      map[string]*slot{},
		probes:      map[jsonrpc.ID]*time.Timer{},
	}
	if t.probe > 0 {
		// Read must be able to wait for the server and the probe timer at
		// once, so a pump moves the server's messages to a channel.
		cc.injected = make(chan jsonrpc.Message, 1)
		cc.reads = make(chan readResult)
		cc.closed = make(chan struct{})
		go cc.pump()
	}
	return cc, nil
}

type captureConn struct {
	mcp.Connection
	probe       time.Duration
	established *atomic.Bool                         // may be nil
	abort       func()                               // may be nil
	modernOnly  bool                                 // refuse to send initialize
	onLog       func(*mcp.LoggingMessageParams) bool // may be nil
	injected    chan jsonrpc.Message                 // synthetic answers to unanswered probes
	reads       chan readResult                      // the pump's output (probe > 0 only)
	closed      chan struct{}                        // closed by Close (probe > 0 only)
	once        sync.Once
	direct      bool // the pump has handed reading back to Read (Read's goroutine only)

	mu      sync.Mutex
	pending map[jsonrpc.ID]*slot       // calls awaiting a response
	tokens  map[string]*slot           // their progress tokens
	probes  map[jsonrpc.ID]*time.Timer // unanswered server/discover requests
	dropped map[jsonrpc.ID]bool        // probes answered synthetically
	// discover and refused are the last server/discover request and the
	// server's error answer to it (modernOnly only).
	discover jsonrpc.ID
	refused  *jsonrpc.Error
}

// errModernOnly fails a handshake whose server/discover failed when the
// connection may not fall back to initialize.
var errModernOnly = errors.New("the server did not accept server/discover, and its protocolVersion pins the 2026-07-28 era (no initialize fallback)")

// refuseInitialize returns the error that replaces sending initialize on a
// modernOnly connection: the server's refusal of discover, when it gave one.
func (c *captureConn) refuseInitialize() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refused != nil {
		return fmt.Errorf("%w: %w", errModernOnly, c.refused)
	}
	return errModernOnly
}

type readResult struct {
	msg  jsonrpc.Message
	err  error
	last bool // the pump has stopped: read the connection directly from now on
}

// armProbe starts the probe timer for a server/discover request.
func (c *captureConn) armProbe(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.probes[id] = time.AfterFunc(c.probe, func() {
		c.mu.Lock()
		_, waiting := c.probes[id]
		delete(c.probes, id)
		if waiting {
			if c.dropped == nil {
				c.dropped = map[jsonrpc.ID]bool{}
			}
			c.dropped[id] = true
		}
		c.mu.Unlock()
		if waiting {
			select {
			case c.injected <- &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
				Code:    jsonrpc.CodeMethodNotFound,
				Message: fmt.Sprintf("no answer to server/discover within %v; falling back to initialize", c.probe),
			}}:
			case <-c.closed:
			}
		}
	})
}

// pump moves inner reads to the reads channel until the connection fails
// or is closed (Close unblocks the inner Read), or until the handshake is
// over and no probe can still need a synthetic answer: then it hands
// reading back to Read, so that every later message costs no goroutine
// switch.
func (c *captureConn) pump() {
	for {
		msg, err := c.Connection.Read(context.Background())
		last := err == nil && c.settled()
		select {
		case c.reads <- readResult{msg, err, last}:
		case <-c.closed:
			return
		}
		if err != nil || last {
			return
		}
	}
}

// settled reports whether the handshake is over with no probe pending.
func (c *captureConn) settled() bool {
	if c.established == nil || !c.established.Load() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.probes) == 0
}

// next returns the next message and whether it is a synthetic one.
func (c *captureConn) next(ctx context.Context) (jsonrpc.Message, bool, error) {
	if c.reads == nil || c.direct {
		msg, err := c.Connection.Read(ctx)
		return msg, false, err
	}
	select {
	case m := <-c.injected:
		return m, true, nil
	case r := <-c.reads:
		c.direct = r.last
		return r.msg, false, r.err
	case <-c.closed:
		return nil, false, mcp.ErrConnectionClosed
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

func (c *captureConn) Close() error {
	if c.closed != nil {
		c.once.Do(func() { close(c.closed) })
	}
	if c.abort != nil && c.established != nil && !c.established.Load() {
		c.abort()
	}
	return c.Connection.Close()
}

// noteRefusal keeps the server's error answer to server/discover.
func (c *captureConn) noteRefusal(m *jsonrpc.Response) {
	var we *jsonrpc.Error
	if !errors.As(m.Error, &we) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.discover.IsValid() && m.ID == c.discover {
		c.refused = we
	}
}

// settleProbe reports whether a response belongs to a probe that was
// already answered synthetically (and must be dropped).
func (c *captureConn) settleProbe(id jsonrpc.ID) (drop bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.probes[id]; ok {
		t.Stop()
		delete(c.probes, id)
	}
	if c.dropped[id] {
		delete(c.dropped, id)
		return true
	}
	return false
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && c.modernOnly {
		switch req.Method {
		case "initialize":
			return c.refuseInitialize()
		case "server/discover":
			c.mu.Lock()
			c.discover = req.ID
			c.mu.Unlock()
		}
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "server/discover" && c.probe > 0 {
		c.armProbe(req.ID)
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && (req.Method == "tools/call" || isListMethod(req.Method)) {
		if s := slotFrom(ctx); s != nil && (s.list != nil) == isListMethod(req.Method) {
			c.mu.Lock()
			c.pending[req.ID] = s
			if s.token != "" {
				c.tokens[s.token] = s
			}
			c.mu.Unlock()
			id := req.ID
			s.mu.Lock()
			s.release = func() { c.forget(id) }
			s.mu.Unlock()
		}
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		notePhase(ctx, req.Method) // what the server was last asked (phase.go)
	}
	err := c.Connection.Write(ctx, msg)
	if err != nil {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.forget(req.ID)
		}
	}
	return err
}

func (c *captureConn) forget(id jsonrpc.ID) *slot {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.pending[id]
	delete(c.pending, id)
	if s != nil && s.token != "" {
		delete(c.tokens, s.token)
	}
	return s
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, synthetic, err := c.next(ctx)
		if err != nil || synthetic {
			return msg, err
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			if c.probe > 0 && c.settleProbe(m.ID) {
				continue // the late answer to a probe already given up on
			}
			if c.modernOnly && m.Error != nil {
				c.noteRefusal(m)
			}
			if s := c.forget(m.ID); s != nil && m.Error == nil && m.Result != nil {
				m.Result = s.take(m.Result)
			}
		case *jsonrpc.Request:
			if !m.IsCall() && m.Method == "notifications/message" && c.onLog != nil {
				var p mcp.LoggingMessageParams
				if json.Unmarshal(m.Params, &p) == nil && c.onLog(&p) {
					continue
				}
			}
			if m.IsCall() || m.Method != "notifications/progress" {
				break
			}
			if tok, p, ok := parseProgress(m.Params); ok {
				c.mu.Lock()
				s := c.tokens[tok]
				c.mu.Unlock()
				if s != nil {
					s.deliver(p)
					continue // delivered: go-sdk need not see it
				}
			}
		}
		return msg, nil
	}
}

// members reads a message's top-level members with exact key matching, as
// go-sdk's decoder does (encoding/json's struct decoding would match keys
// regardless of case). It reports false when data is not a JSON object.
func members(data []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// carriesResult reports whether a message's members are those of a
// response carrying an object result.
func carriesResult(m map[string]json.RawMessage) bool {
	_, hasMethod := m["method"]
	id, hasID := m["id"]
	result := bytes.TrimSpace(m["result"])
	return !hasMethod && hasID && len(id) > 0 && len(result) > 0 && result[0] == '{' && string(bytes.TrimSpace(m["jsonrpc"])) == `"2.0"`
}

// rewriteResponse captures the result of a single JSON-RPC response in
// data and returns data with the stand-in; anything else is returned as is.
func rewriteResponse(data []byte, s *slot) []byte {
	m, ok := members(data)
	if !ok {
		return data
	}
	return rewriteMembers(data, m, s)
}

// rewriteMembers is rewriteResponse for a message already parsed into m.
func rewriteMembers(data []byte, m map[string]json.RawMessage, s *slot) []byte {
	if !carriesResult(m) {
		return data
	}
	result := m["result"]
	repl := s.take(result)
	if bytes.Equal(repl, result) {
		return data
	}
	// Rebuild in the usual member order: jsonrpc, id, result, then any
	// others (sorted), so the stream reads as the server wrote it.
	var out bytes.Buffer
	out.WriteByte('{')
	write := func(k string, v json.RawMessage) {
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		out.Write(kb)
		out.WriteByte(':')
		out.Write(v)
	}
	for _, k := range []string{"jsonrpc", "id"} {
		if v, ok := m[k]; ok {
			write(k, v)
		}
	}
	write("result", repl)
	rest := make([]string, 0, len(m))
	for k := range m {
		if k != "jsonrpc" && k != "id" && k != "result" {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		write(k, m[k])
	}
	out.WriteByte('}')
	return out.Bytes()
}

// isResponse reports whether a message's members are those of a JSON-RPC
// response, with or without a result: no "method", an "id", and a
// "result" or an "error" (exact keys).
func isResponse(m map[string]json.RawMessage) bool {
	_, hasMethod := m["method"]
	_, hasID := m["id"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	return !hasMethod && hasID && (hasResult || hasError)
}
