package server

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/era"
)

// IsLegacyVersion reports whether v is a protocol version of the legacy,
// session-based era: 2024-11-05, 2025-03-26, 2025-06-18 or 2025-11-25.
// [Server.Handler] serves requests that name one of these (or none) in
// sessions; any other version is of the sessionless era, or refused.
func IsLegacyVersion(v string) bool { return era.KnownLegacy(v) }

// call is what a handler's context carries about its request.
type call struct {
	req     mcp.Request
	modern  bool   // the request is of the 2026-07-28 era
	version string // its protocol version, if modern
	ctx     context.Context

	// promptDesc is the description a prompt handler gave its result
	// (SetPromptDescription); nil when it gave none. Written and read on
	// the handler's goroutine only.
	promptDesc *string
}

type callKey struct{}

// withCall returns ctx carrying the request req.
func withCall(ctx context.Context, req mcp.Request) context.Context {
	c := &call{req: req}
	c.version, c.modern = requestEra(req)
	ctx = context.WithValue(ctx, callKey{}, c)
	c.ctx = ctx
	return ctx
}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// requestEra returns the protocol version a request names, in its _meta or
// its Mcp-Protocol-Version header (era.Requested), and whether that makes
// it modern (era.Modern).
func requestEra(req mcp.Request) (string, bool) {
	if req == nil {
		return "", false
	}
	meta, header := "", ""
	if p := req.GetParams(); p != nil {
		if m := p.GetMeta(); m != nil {
			meta, _ = m[mcp.MetaKeyProtocolVersion].(string)
		}
	}
	if x := req.GetExtra(); x != nil && x.Header != nil {
		header = x.Header.Get(era.Header)
	}
	v := era.Requested(meta, header)
	if !era.Modern(v) {
		return "", false
	}
	return v, true
}

// Headers returns the HTTP headers of the request being handled, or nil
// when it did not come over HTTP (stdio).
func Headers(ctx context.Context) http.Header {
	if c := callFrom(ctx); c != nil {
		if x := c.req.GetExtra(); x != nil {
			return x.Header
		}
	}
	return nil
}

// Caller returns the authenticated caller that the transport attached to
// the request (for example go-sdk's auth.RequireBearerToken middleware in
// front of [Server.Handler]), or nil.
func Caller(ctx context.Context) *auth.TokenInfo {
	if c := callFrom(ctx); c != nil {
		if x := c.req.GetExtra(); x != nil {
			return x.TokenInfo
		}
	}
	return nil
}

// ProtocolVersion returns the protocol version of a 2026-07-28-era
// request, and "" for a legacy one (whose version belongs to its session).
func ProtocolVersion(ctx context.Context) string {
	if c := callFrom(ctx); c != nil {
		return c.version
	}
	return ""
}

// IsModern reports whether the request being handled is of the
// 2026-07-28 (sessionless) era.
func IsModern(ctx context.Context) bool {
	c := callFrom(ctx)
	return c != nil && c.modern
}

// ClientInfo returns the client's self-reported identity on a
// 2026-07-28-era request, and nil on a legacy one. Use it for logs, never
// for decisions: any client can claim to be any other.
func ClientInfo(ctx context.Context) *mcp.Implementation {
	c := callFrom(ctx)
	if c == nil || !c.modern {
		return nil
	}
	if r, ok := c.req.(interface{ ClientInfo() *mcp.Implementation }); ok {
		return r.ClientInfo()
	}
	return nil
}

// ClientCapabilities returns the capabilities a 2026-07-28-era request
// declares (empty, not nil, when it declares none), and nil on a legacy
// request.
func ClientCapabilities(ctx context.Context) *mcp.ClientCapabilities {
	c := callFrom(ctx)
	if c == nil || !c.modern {
		return nil
	}
	if r, ok := c.req.(interface {
		ClientCapabilities() *mcp.ClientCapabilities
	}); ok {
		if caps := r.ClientCapabilities(); caps != nil {
			return caps
		}
	}
	return &mcp.ClientCapabilities{}
}

// Session returns the go-sdk session the request arrived on (an ephemeral
// one for a 2026-07-28 request over HTTP), or nil outside a handler.
func Session(ctx context.Context) *mcp.ServerSession {
	if c := callFrom(ctx); c != nil {
		if ss, ok := c.req.GetSession().(*mcp.ServerSession); ok {
			return ss
		}
	}
	return nil
}

// Request returns the go-sdk request being handled (for example a
// *mcp.CallToolRequest), or nil outside a handler: an escape hatch for
// what this package does not wrap, such as RequestExtra.CloseSSEStream.
func Request(ctx context.Context) mcp.Request {
	if c := callFrom(ctx); c != nil {
		return c.req
	}
	return nil
}

// InputResponses returns the client's answers to the input requests of a
// previous round ([InputRequired]), or nil.
func InputResponses(ctx context.Context) mcp.InputResponseMap {
	c := callFrom(ctx)
	if c == nil {
		return nil
	}
	switch p := c.req.GetParams().(type) {
	case *mcp.CallToolParamsRaw:
		return p.InputResponses
	case *mcp.GetPromptParams:
		return p.InputResponses
	case *mcp.ReadResourceParams:
		return p.InputResponses
	}
	return nil
}

// RequestState returns the requestState the client sent back from a
// previous round ([InputRequired]), or "".
func RequestState(ctx context.Context) string {
	c := callFrom(ctx)
	if c == nil {
		return ""
	}
	switch p := c.req.GetParams().(type) {
	case *mcp.CallToolParamsRaw:
		return p.RequestState
	case *mcp.GetPromptParams:
		return p.RequestState
	case *mcp.ReadResourceParams:
		return p.RequestState
	}
	return ""
}

// Progress reports progress of the request being handled to the client.
type Progress struct {
	ctx     context.Context
	session *mcp.ServerSession
	token   any
}

// ProgressReporter returns a reporter for the request being handled, or
// nil when the client sent no progress token (then nobody listens).
func ProgressReporter(ctx context.Context) *Progress {
	c := callFrom(ctx)
	if c == nil {
		return nil
	}
	p := c.req.GetParams()
	if p == nil {
		return nil
	}
	tok := p.GetMeta()["progressToken"]
	ss, _ := c.req.GetSession().(*mcp.ServerSession)
	if tok == nil || ss == nil {
		return nil
	}
	// Bind the handler's context: on Streamable HTTP it routes the
	// notification to this request's response stream.
	return &Progress{ctx: ctx, session: ss, token: tok}
}

// Token returns the progress token the client sent in the request's _meta
// (a string or a number, as sent), for a handler that passes progress on
// by other means; nil for a nil Progress.
func (p *Progress) Token() any {
	if p == nil {
		return nil
	}
	return p.token
}

// SetPromptDescription sets the description of the result a prompt handler
// returns, in place of the Prompt's own: for a description that depends on
// the arguments. Called from anything but a prompt handler, it does
// nothing.
func SetPromptDescription(ctx context.Context, description string) {
	if c := callFrom(ctx); c != nil {
		if _, ok := c.req.(*mcp.GetPromptRequest); ok {
			c.promptDesc = &description
		}
	}
}

// Report sends a progress notification: done out of total (0 if unknown),
// with an optional message. It is best effort; the error says why the
// notification could not be sent.
func (p *Progress) Report(done, total float64, message string) error {
	return p.session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{
		ProgressToken: p.token,
		Progress:      done,
		Total:         total,
		Message:       message,
	})
}

// Log sends a log message to the client, if it asked for messages of this
// level (logging/setLevel on a legacy session, _meta logLevel on a
// 2026-07-28 request); otherwise go-sdk drops it.
func Log(ctx context.Context, level mcp.LoggingLevel, data any) error {
	ss := Session(ctx)
	if ss == nil {
		return nil
	}
	return ss.Log(ctx, &mcp.LoggingMessageParams{Level: level, Data: data})
}
