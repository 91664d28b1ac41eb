// Package mcphttp serves a go-sdk MCP server over Streamable HTTP in both
// protocol eras on one endpoint, and shuts it down gracefully. It is the one
// implementation of both: package server and the gateway serve HTTP through
// it.
//
// go-sdk serves the 2026-07-28 (sessionless) era only from a stateless
// handler and the legacy era (initialize, sessions, server-to-client
// requests) only from a stateful one, so [Handler] routes each request by
// the version it names (package era): its _meta protocol version, else its
// Mcp-Protocol-Version header. A modern client sends the header on
// every request, server/discover included (go-sdk's setMCPHeaders); a
// stateful handler alone would answer server/discover with legacy versions
// only, and the client would fall back to initialize. Only versions the
// server serves reach the stateless handler, so go-sdk's own era check
// (at least 2026-07-28) agrees with the router.
//
// Both handlers keep go-sdk's DNS-rebinding protection unless told
// otherwise. It imports internal/era and go-sdk, nothing else of
// Switchboard's.
package mcphttp

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/bytesize"
	"github.com/switchboard-mcp/switchboard/internal/era"
	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// Defaults of [HandlerOptions] and [Options].
const (
	// DefaultPath is where Serve serves the MCP endpoint.
	DefaultPath = "/mcp"
	// DefaultSessionTimeout closes legacy sessions that have had no request
	// for this long, so that clients that vanish without a DELETE do not
	// leak them. As go-sdk counts it: from the end of the session's last
	// POST, none running.
	DefaultSessionTimeout = 10 * time.Minute
	// DefaultMaxBodyBytes bounds a request body (go-sdk's default too).
	DefaultMaxBodyBytes = 4 << 20
	// DefaultShutdownTimeout is how long Serve lets the calls in flight
	// finish once its ctx is done.
	DefaultShutdownTimeout = 5 * time.Second
)

const (
	sessionIDHeader = "Mcp-Session-Id"
	nameHeader      = "Mcp-Name"
	methodHeader    = "Mcp-Method"
)

// HandlerOptions configure a [Handler]. Nil means defaults.
type HandlerOptions struct {
	// Versions are the protocol versions the server serves, as given to
	// go-sdk (ServerOptions.SupportedProtocolVersions); default all that
	// go-sdk knows. With no modern version among them, a modern request
	// gets a plain 400, so that a dual-era client falls back to
	// initialize.
	Versions []string
	// SessionTimeout closes legacy sessions idle this long; default
	// DefaultSessionTimeout.
	SessionTimeout time.Duration
	// MaxBodyBytes bounds a request body (413 past it); default
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Logger receives go-sdk's HTTP logs and shutdown warnings; default:
	// discard.
	Logger *slog.Logger
	// DisableLocalhostProtection turns off go-sdk's DNS-rebinding guard
	// (a loopback listener refuses non-loopback Host headers); default on.
	DisableLocalhostProtection bool
	// Sessions bounds the legacy sessions, shared with other Handlers
	// (a gateway's profiles); default limits of the Handler's own, with
	// every caller one client (see SessionLimitOptions).
	Sessions *SessionLimits
}

// Handler is the Streamable HTTP endpoint of one go-sdk server, serving
// both eras on one URL (mount it at any path). Each request is routed by
// its era:
//
//   - A request that names a version, other than one of the four legacy
//     ones, is modern: an unknown version of either era is refused here
//     as the spec asks (-32022), never handed to a session. It goes to a
//     stateless go-sdk handler, which checks the Mcp-* headers
//     (-32020 on a mismatch) and maps protocol errors to HTTP statuses (404
//     with -32601 for an unknown method, ping included). A _meta version
//     that disagrees with the header gets 400 with -32020; a version the
//     server does not serve gets 400 with -32022 and the supported list,
//     or, when the server serves legacy versions only, a plain 400 so that
//     a dual-era client falls back to initialize. An Mcp-Name header sent
//     as =?base64?…?= (SEP-2243) is decoded before go-sdk compares it. The
//     answer is application/json, upgraded to text/event-stream when the
//     request's _meta carries a progress token or a log level, so that
//     progress and log messages can precede the result. GET and DELETE get
//     405: there is no stream or session in this era.
//   - Anything else (initialize, and requests of a legacy session) goes to
//     a stateful go-sdk handler, which keeps sessions (Mcp-Session-Id). A
//     POST carrying one call is answered application/json too, unless its
//     _meta carries a progress token or the server sends something in the
//     call's course (a log message, or a sampling or elicitation request
//     to the client): then the answer is an event stream carrying those
//     first, then the result, so that server-to-client requests reach the
//     client on the call's own stream, which a legacy client always reads
//     (go-sdk's JSONResponse option would send them over the session's GET
//     stream instead, which a client need not open; see
//     jsonUnlessStreamed). GET and DELETE without a session id get 405.
//
// A body over MaxBodyBytes gets 413. Legacy sessions are bounded
// (HandlerOptions.Sessions): a client at its cap that opens another loses
// its idlest one, and a new session past the global cap gets 503 with
// Retry-After.
type Handler struct {
	// Fixed at creation.
	server                                  *mcp.Server
	logger                                  *slog.Logger
	maxBody                                 int64
	versions                                []string // served
	modern                                  []string // the modern ones among them
	stateful, statelessJSON, statelessEvent http.Handler
	calls                                   *sessionCalls
	sessions                                *SessionLimits
}

// NewHandler returns the endpoint handler of server. It adds a receiving
// middleware to server that lets [Serve] cancel the calls of legacy
// sessions at its deadline (closing a go-sdk session waits for its calls
// instead of cancelling them); middleware added before NewHandler sees that
// cancellation in its ctx.
func NewHandler(server *mcp.Server, opts *HandlerOptions) *Handler {
	var o HandlerOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if len(o.Versions) == 0 {
		o.Versions = mcp.SupportedProtocolVersions()
	}
	if o.Sessions == nil {
		o.Sessions = NewSessionLimits(nil)
	}
	get := func(*http.Request) *mcp.Server { return server }
	stateless := func(jsonResponse bool) http.Handler {
		return mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			Stateless:    true,
			JSONResponse: jsonResponse,
			// The POST is the whole request in this era: when the client
			// goes away, cancel the handler.
			PropagateRequestCancellation: true,
			Logger:                       o.Logger,
			DisableLocalhostProtection:   o.DisableLocalhostProtection,
			MaxRequestBodyBytes:          o.MaxBodyBytes,
		})
	}
	h := &Handler{
		server:         server,
		logger:         o.Logger,
		maxBody:        o.MaxBodyBytes,
		versions:       slices.Clone(o.Versions),
		statelessJSON:  stateless(true),
		statelessEvent: stateless(false),
		stateful: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			SessionTimeout:             o.SessionTimeout,
			Logger:                     o.Logger,
			DisableLocalhostProtection: o.DisableLocalhostProtection,
			MaxRequestBodyBytes:        o.MaxBodyBytes,
		}),
		calls:    newSessionCalls(),
		sessions: o.Sessions,
	}
	for _, v := range h.versions {
		if era.Modern(v) {
			h.modern = append(h.modern, v)
		}
	}
	server.AddReceivingMiddleware(h.calls.middleware)
	return h
}

// peek is what the router reads from a POST body.
type peek struct {
	id          json.RawMessage
	method      string
	metaVersion string
	progress    bool // _meta has a progress token
	logLevel    bool // _meta has a log level
}

// peekBody reads the few members the router needs in place: a request's
// arguments can be megabytes, and decoding them here would double what
// go-sdk does with them. Keys match exactly, as go-sdk matches them. A
// batch or a body that is not one valid JSON object peeks as nothing (and
// go-sdk answers it).
func peekBody(body []byte) peek {
	var p peek
	end, err := jsonscan.Object(body, jsonscan.SkipSpace(body, 0), func(m jsonscan.Member) (int, error) {
		switch string(m.Key) {
		case "id":
			end, _, err := jsonscan.Skip(body, m.Value, 1)
			p.id = body[m.Value:end]
			return end, err
		case "method":
			// A repeated key counts as its last occurrence, as for
			// encoding/json (and so go-sdk), even when that is no string.
			end, s, _, err := stringAt(body, m.Value, 1)
			p.method = s
			return end, err
		case "params":
			p.metaVersion, p.progress, p.logLevel = "", false, false // the last "params" counts
			if body[m.Value] != '{' {
				break
			}
			return jsonscan.Object(body, m.Value, func(pm jsonscan.Member) (int, error) {
				if string(pm.Key) == "_meta" {
					p.metaVersion, p.progress, p.logLevel = "", false, false // the last "_meta" counts
				}
				if string(pm.Key) != "_meta" || body[pm.Value] != '{' {
					end, _, err := jsonscan.Skip(body, pm.Value, 2)
					return end, err
				}
				return jsonscan.Object(body, pm.Value, func(mm jsonscan.Member) (int, error) {
					switch string(mm.Key) {
					case mcp.MetaKeyProtocolVersion:
						end, s, _, err := stringAt(body, mm.Value, 3)
						p.metaVersion = s
						return end, err
					case "progressToken":
						p.progress = body[mm.Value] != 'n'
					case mcp.MetaKeyLogLevel:
						p.logLevel = body[mm.Value] != 'n'
					}
					end, _, err := jsonscan.Skip(body, mm.Value, 3)
					return end, err
				})
			})
		}
		end, _, err := jsonscan.Skip(body, m.Value, 1)
		return end, err
	})
	if err != nil || jsonscan.SkipSpace(body, end) != len(body) {
		return peek{}
	}
	return p
}

// stringAt scans the value at d[i], nested in outer containers, and
// returns it decoded when it is a string.
func stringAt(d []byte, i, outer int) (end int, s string, ok bool, err error) {
	if d[i] != '"' {
		end, _, err = jsonscan.Skip(d, i, outer)
		return end, "", false, err
	}
	end, info, err := jsonscan.ScanString(d, i)
	if err != nil {
		return end, "", false, err
	}
	body := d[i+1 : end-1]
	if info.Plain() {
		return end, string(body), true, nil
	}
	return end, string(jsonscan.AppendUnquote(nil, body, math.MaxInt)), true, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var p peek
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				http.Error(w, "request body exceeds "+bytesize.Format(mbe.Limit), http.StatusRequestEntityTooLarge)
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
	version := era.Requested(p.metaVersion, header)
	if version == "" || era.KnownLegacy(version) {
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
		h.sessions.serveStateful(h, w, r, p.method)
		return
	}
	if len(h.modern) == 0 {
		// Plain, not JSON-RPC: a dual-era client then falls back to
		// initialize.
		http.Error(w, fmt.Sprintf("Bad Request: protocol version %q is not supported; this server speaks %v through initialize", version, h.versions), http.StatusBadRequest)
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
		if v != "" && !slices.Contains(h.modern, v) {
			writeRPCError(w, http.StatusBadRequest, p.id, mcp.CodeUnsupportedProtocolVersion, "unsupported protocol version",
				mcp.UnsupportedProtocolVersionData{Supported: slices.Clone(h.versions), Requested: v})
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
