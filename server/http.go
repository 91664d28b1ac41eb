package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/era"
)

const (
	// maxBodyBytes bounds a request body (go-sdk's default too).
	maxBodyBytes    = 4 << 20
	sessionIDHeader = "Mcp-Session-Id"
	nameHeader      = "Mcp-Name"
)

// Handler returns the Streamable HTTP endpoint handler, serving both eras
// on one URL (mount it at any path). Each request is routed by its era:
//
//   - A request is modern when its _meta protocol version or its
//     Mcp-Protocol-Version header names a version outside the legacy list.
//     It goes to a stateless go-sdk handler, which checks the Mcp-*
//     headers (-32020 on a mismatch) and maps protocol errors to HTTP
//     statuses (404 with -32601 for an unknown method, ping included). A
//     version the server does not serve gets 400 with -32022 and the
//     supported list, or, when the server serves legacy versions only, a
//     plain 400 so that a dual-era client falls back to initialize. The
//     answer is application/json, upgraded to text/event-stream when the
//     request's _meta carries a progress token or a log level, so that
//     progress and log messages can precede the result. GET and DELETE
//     get 405: there is no stream or session in this era.
//   - Anything else (initialize, and requests of a legacy session) goes
//     to a stateful go-sdk handler, which keeps sessions (Mcp-Session-Id).
//     A POST carrying one call is answered application/json too, unless
//     its _meta carries a progress token or the server sends something
//     in the call's course (a log message, or a sampling or elicitation
//     request to the client): then the answer is an event stream carrying
//     those first, then the result, so that server-to-client requests
//     reach the client on the call's own stream, which a legacy client
//     always reads (go-sdk's JSONResponse option would send them over the
//     session's GET stream instead, which a client need not open; see
//     jsonUnlessStreamed). GET and DELETE without a session id get 405.
func (s *Server) Handler() http.Handler {
	s.httpOnce.Do(func() { s.http = newEraRouter(s) })
	return s.http
}

type eraRouter struct {
	s                                       *Server
	stateful, statelessJSON, statelessEvent http.Handler
	modern                                  []string // modern versions served
}

func newEraRouter(s *Server) *eraRouter {
	get := func(*http.Request) *mcp.Server { return s.mcp }
	stateless := func(jsonResponse bool) http.Handler {
		return mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			Stateless:                    true,
			JSONResponse:                 jsonResponse,
			PropagateRequestCancellation: true, // the POST is the whole request
			Logger:                       s.logger,
			DisableLocalhostProtection:   s.opts.DisableLocalhostProtection,
			MaxRequestBodyBytes:          maxBodyBytes,
		})
	}
	r := &eraRouter{
		s:              s,
		statelessJSON:  stateless(true),
		statelessEvent: stateless(false),
		stateful: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			SessionTimeout:             s.opts.SessionTimeout,
			Logger:                     s.logger,
			DisableLocalhostProtection: s.opts.DisableLocalhostProtection,
			MaxRequestBodyBytes:        maxBodyBytes,
		}),
	}
	for _, v := range s.versions() {
		if !IsLegacyVersion(v) {
			r.modern = append(r.modern, v)
		}
	}
	return r
}

// peek is what the router reads from a POST body.
type peek struct {
	id          json.RawMessage
	method      string
	metaVersion string
	progress    bool // _meta has a progress token
	logLevel    bool // _meta has a log level
}

func peekBody(body []byte) peek {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil { // a batch or garbage: go-sdk answers
		return peek{}
	}
	m := msg.Params.Meta
	p := peek{id: msg.ID, method: msg.Method}
	p.metaVersion, _ = m[mcp.MetaKeyProtocolVersion].(string)
	p.progress = m["progressToken"] != nil
	p.logLevel = m[mcp.MetaKeyLogLevel] != nil
	return p
}

func (h *eraRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var p peek
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "cannot read request body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		p = peekBody(body)
	}
	r, done := track(r, p)
	defer done()
	header := r.Header.Get(era.Header)
	version := p.metaVersion
	if version == "" {
		version = header
	}
	modern := version != "" && !IsLegacyVersion(version)
	if !modern {
		if (r.Method == http.MethodGet || r.Method == http.MethodDelete) && r.Header.Get(sessionIDHeader) == "" {
			w.Header().Set("Allow", "POST")
			http.Error(w, "Method Not Allowed: no session", http.StatusMethodNotAllowed)
			return
		}
		if r.Method == http.MethodPost && len(p.id) > 0 && !p.progress && acceptsJSON(r) {
			// One call, no progress asked for: JSON, unless the server
			// has something to send before the answer.
			jw := &jsonUnlessStreamed{w: w}
			defer jw.finish()
			w = jw
		}
		h.stateful.ServeHTTP(w, r)
		return
	}
	if len(h.modern) == 0 {
		// Plain, not JSON-RPC: a dual-era client then falls back to
		// initialize.
		http.Error(w, fmt.Sprintf("Bad Request: protocol version %q is not supported; this server speaks %v through initialize", version, h.s.versions()), http.StatusBadRequest)
		return
	}
	if p.metaVersion != "" && header != "" && p.metaVersion != header {
		// Disagreement first: which of the two is unsupported is
		// beside the point when they do not even agree.
		writeRPCError(w, http.StatusBadRequest, p.id, mcp.CodeHeaderMismatch,
			fmt.Sprintf("%s header %q does not match _meta protocol version %q", era.Header, header, p.metaVersion), nil)
		return
	}
	for _, v := range []string{p.metaVersion, header} {
		if v != "" && !IsLegacyVersion(v) && !slices.Contains(h.modern, v) {
			writeRPCError(w, http.StatusBadRequest, p.id, mcp.CodeUnsupportedProtocolVersion, "unsupported protocol version",
				mcp.UnsupportedProtocolVersionData{Supported: h.s.versions(), Requested: v})
			return
		}
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	// go-sdk compares Mcp-Name with the body as it is; SEP-2243 lets a
	// client send it as =?base64?…?= (required for non-ASCII names).
	if name := r.Header.Get(nameHeader); strings.HasPrefix(name, "=?base64?") && strings.HasSuffix(name, "?=") {
		dec, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(name, "=?base64?"), "?="))
		if err != nil {
			writeRPCError(w, http.StatusBadRequest, p.id, mcp.CodeHeaderMismatch, "Mcp-Name header is not valid base64", nil)
			return
		}
		r.Header.Set(nameHeader, string(dec))
	}
	if p.progress || p.logLevel {
		h.statelessEvent.ServeHTTP(w, r)
		return
	}
	h.statelessJSON.ServeHTTP(w, r)
}

// acceptsJSON reports whether r's Accept header admits application/json.
func acceptsJSON(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "application/json", "application/*", "*/*":
				return true
			}
		}
	}
	return false
}

// jsonUnlessStreamed is the ResponseWriter of a legacy POST that carries
// one call without a progress token. go-sdk's stateful handler answers
// every call with an event stream, so that the requests and notifications
// it sends in the call's course (a sampling or elicitation request, a log
// message) reach the client before the answer; its JSONResponse option
// would instead send those over the session's GET stream, which a client
// need not have open (nor have opened yet), so that a tool asking the
// client for input would fail. This writer holds the stream back until its
// first event: when that event is the answer, it goes out alone as
// application/json, as a 2026-07-28 answer does; anything else, and the
// stream goes out as it is, that event first.
type jsonUnlessStreamed struct {
	w      http.ResponseWriter
	status int // held back with the stream; 0: none yet
	buf    []byte
	mode   streamMode
}

type streamMode int

const (
	undecided streamMode = iota
	asJSON               // the answer went out as application/json
	asStream             // everything passes through
)

func (j *jsonUnlessStreamed) Header() http.Header { return j.w.Header() }

func (j *jsonUnlessStreamed) WriteHeader(code int) {
	if j.mode == undecided && code == http.StatusOK && isEventStream(j.w.Header()) {
		j.status = code
		return
	}
	if j.mode == undecided {
		j.mode = asStream
	}
	if j.mode == asStream {
		j.w.WriteHeader(code)
	}
}

func (j *jsonUnlessStreamed) Write(b []byte) (int, error) {
	switch j.mode {
	case asStream:
		return j.w.Write(b)
	case asJSON:
		// Nothing follows the answer to the one call of a POST.
		return len(b), nil
	}
	if !isEventStream(j.w.Header()) {
		return len(b), j.stream(b)
	}
	j.buf = append(j.buf, b...)
	end := bytes.Index(j.buf, []byte("\n\n"))
	if end < 0 {
		return len(b), nil // not one whole event yet
	}
	if data := eventData(j.buf[:end]); isResponse(data) {
		j.mode = asJSON
		h := j.w.Header()
		h.Set("Content-Type", "application/json")
		h.Del("Connection")
		j.w.WriteHeader(cmp.Or(j.status, http.StatusOK))
		_, err := j.w.Write(data)
		j.buf = nil
		return len(b), err
	}
	buf := j.buf
	j.buf = nil
	return len(b), j.stream(buf)
}

// stream lets the response through from now on, b first.
func (j *jsonUnlessStreamed) stream(b []byte) error {
	j.mode = asStream
	if j.status != 0 {
		j.w.WriteHeader(j.status)
	}
	_, err := j.w.Write(b)
	return err
}

// Flush flushes a response that goes out as a stream; until it is known
// to be one, there is nothing to flush.
func (j *jsonUnlessStreamed) Flush() {
	if j.mode != asStream {
		return
	}
	if f, ok := j.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (j *jsonUnlessStreamed) Unwrap() http.ResponseWriter { return j.w }

// finish sends what is held back when the handler returns before one
// whole event.
func (j *jsonUnlessStreamed) finish() {
	if j.mode == undecided && (j.status != 0 || len(j.buf) > 0) {
		j.stream(j.buf)
	}
}

func isEventStream(h http.Header) bool {
	return strings.HasPrefix(h.Get("Content-Type"), "text/event-stream")
}

// eventData returns the data of one server-sent event (its lines
// without the blank line ending it).
func eventData(event []byte) []byte {
	var data []byte
	for line := range bytes.SplitSeq(event, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
		}
	}
	return data
}

// isResponse reports whether data is a JSON-RPC response (a result or an
// error), not a request or notification.
func isResponse(data []byte) bool {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return false
	}
	_, ok := msg.(*jsonrpc.Response)
	return ok
}

// writeRPCError writes a JSON-RPC error response.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int64, msg string, data any) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": msg, "data": data},
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// Serve serves the server over Streamable HTTP at Options.Path on ln
// until ctx is done, then shuts down gracefully:
//
//  1. it stops accepting connections and requests;
//  2. it lets the calls in flight finish, for up to
//     Options.ShutdownTimeout, while keeping the legacy event streams (GET)
//     open, since a legacy client may take a lost stream for a lost session
//     and fail its calls;
//  3. it ends those streams (they never end by themselves), and once the
//     calls are done closes the idle connections;
//  4. past the deadline, it closes every connection and cancels the calls
//     left (their handlers' ctx is done);
//  5. it closes the server's legacy sessions, and waits a little (one
//     second at most) for the handlers of cancelled calls to return.
//
// The legacy sessions belong to the server, not to one Serve: a server
// served on several listeners loses them all when one Serve ends.
//
// It closes ln, and returns nil after a shutdown caused by ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	tr := &tracker{streams: streams}
	mux := http.NewServeMux()
	mux.Handle(s.opts.Path, s.Handler())
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithValue(context.Background(), trackerKey{}, tr) },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var err error
	select {
	case err = <-served:
		srv.Close()
		err = fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
		shutdown := make(chan error, 1)
		go func() { shutdown <- srv.Shutdown(sctx) }()
		tr.wait(sctx)
		endStreams()
		if <-shutdown != nil {
			// The deadline passed with calls still running: cancel them.
			// Closing the connections cancels the 2026-07-28 calls (their
			// handlers' ctx is the request's); the calls of legacy
			// sessions outlive their POST and are cancelled by hand.
			srv.Close()
			s.cancelSessionCalls()
		}
		cancel()
		<-served // http.ErrServerClosed
	}
	// Sessions outlive requests: close those left, so that none of their
	// goroutines outlives Serve. Closing a go-sdk session waits for its
	// calls, which are done or cancelled by now, unless a handler ignores
	// its ctx: bounded, as is the wait for the handlers of the requests
	// cut off.
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		for ss := range s.mcp.Sessions() {
			ss.Close()
		}
	}()
	gctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
	defer cancel()
	select {
	case <-closed:
		tr.wait(gctx)
	case <-gctx.Done():
	}
	if gctx.Err() != nil {
		s.logger.Warn("mcp: shutdown: handlers still running after cancellation; they ignore their ctx")
	}
	return err
}

// cancelGrace bounds how long Serve waits, after cancelling the calls
// that outlived the shutdown deadline, for their handlers to return.
const cancelGrace = time.Second

// tracker follows the requests of one [Server.Serve], for its shutdown:
// the eraRouter finds it in the request's context, counts calls, and ties
// long-lived streams to streams.
type tracker struct {
	streams context.Context // done when the streams must end; fixed

	mu    sync.Mutex
	calls int           // requests in flight, streams excluded
	idle  chan struct{} // closed when calls drops to 0; nil when nobody waits
}

type trackerKey struct{}

// track registers r, peeked as p, with the tracker of the Serve that
// received it, if any: a stream (GET, or a 2026-07-28 subscriptions/listen)
// gets a context that ends when the streams must end; anything else counts
// as a call until done is called.
func track(r *http.Request, p peek) (_ *http.Request, done func()) {
	t, ok := r.Context().Value(trackerKey{}).(*tracker)
	if !ok {
		return r, func() {}
	}
	if r.Method == http.MethodGet || p.method == "subscriptions/listen" {
		ctx, cancel := context.WithCancel(r.Context())
		stop := context.AfterFunc(t.streams, cancel)
		return r.WithContext(ctx), func() { stop(); cancel() }
	}
	t.add(1)
	return r, func() { t.add(-1) }
}

func (t *tracker) add(d int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls += d
	if t.calls == 0 && t.idle != nil {
		close(t.idle)
		t.idle = nil
	}
}

// wait returns when no call is in flight or ctx is done.
func (t *tracker) wait(ctx context.Context) {
	t.mu.Lock()
	if t.calls == 0 {
		t.mu.Unlock()
		return
	}
	if t.idle == nil {
		t.idle = make(chan struct{})
	}
	idle := t.idle
	t.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
	}
}

// ListenAndServe listens on addr (host:port; "127.0.0.1:0" picks a free
// port) and calls Serve. ready, if not nil, gets the bound address.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(net.Addr)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	return s.Serve(ctx, ln)
}
