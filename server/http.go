package server

import (
	"bytes"
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
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// maxBodyBytes bounds a request body (go-sdk's default too).
	maxBodyBytes = 4 << 20
	// shutdownTimeout bounds how long Serve lets requests finish.
	shutdownTimeout = 5 * time.Second
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
//     to a stateful go-sdk handler, which keeps sessions (Mcp-Session-Id)
//     and answers over event streams, so that server-to-client requests
//     (sampling, elicitation) reach the client. GET and DELETE without a
//     session id get 405.
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
	metaVersion string
	progress    bool // _meta has a progress token
	logLevel    bool // _meta has a log level
}

func peekBody(body []byte) peek {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil { // a batch or garbage: go-sdk answers
		return peek{}
	}
	m := msg.Params.Meta
	p := peek{id: msg.ID}
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
	header := r.Header.Get(protocolVersionHeader)
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
			fmt.Sprintf("%s header %q does not match _meta protocol version %q", protocolVersionHeader, header, p.metaVersion), nil)
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
// until ctx is done, then shuts down: it stops accepting, lets requests in
// flight finish for up to five seconds, and closes the sessions left. It
// closes ln, and returns nil after a shutdown caused by ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle(s.opts.Path, s.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var err error
	select {
	case err = <-served:
		err = fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		// Legacy event streams (GET) never end by themselves: close the
		// sessions first so that their handlers return.
		for ss := range s.mcp.Sessions() {
			ss.Close()
		}
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
		cancel()
		<-served
	}
	for ss := range s.mcp.Sessions() {
		ss.Close()
	}
	return err
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
