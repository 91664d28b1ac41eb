package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/content"
	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
	"github.com/switchboard-mcp/switchboard/internal/policy"
	"github.com/switchboard-mcp/switchboard/internal/registry"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// CallOptions tune one call. Nil means defaults.
type CallOptions struct {
	// Progress, when set, receives the call's progress notifications, in
	// order, on a goroutine of the connection: it must not block.
	Progress func(Progress)
	// Peer, when set, answers the server's requests during the call. A
	// peer that implements InputPasser receives a 2026-07-28 server's input
	// requests as an *InputRequired error instead.
	Peer Peer
	// InputResponses and RequestState retry a call that returned
	// *InputRequired, verbatim.
	InputResponses mcp.InputResponseMap
	RequestState   string
	// Client identifies the caller for the call quota (policy.quota) and
	// the audit log; "" is the process itself. The gateway sets the
	// configured name of a named client, else the verified identity
	// ("sub:<subject>"), else nothing.
	Client string
	// Session is the caller's session, the quota key of a caller without
	// a Client (the gateway's callers it cannot tell apart); never
	// recorded. ClientName is the name the client gave itself, as it
	// declared it: recorded, never a key.
	Session, ClientName string
	// Caller is the configured name of the gateway client making the
	// call, and Profile the profile it calls through; "" for none. Policy
	// rules limited to clients and profiles match on them, and the audit
	// log keeps the profile.
	Caller, Profile string
	// SubjectToken is the caller's own access token (a JWT the gateway
	// verified), exchanged for the call's token at a server with
	// "oauth.tokenExchange" (RFC 8693); "" for none. Never recorded.
	SubjectToken string
	// Confirm overrides Options.Confirm for this call.
	Confirm Confirmer
	// Approve overrides Options.Approve for this call.
	Approve Approver
	// RawOnly leaves Result.Text empty, for callers that forward Raw and
	// never show the projection (the gateway): projecting a large result
	// costs a full decode.
	RawOnly bool
	// KeepWhole returns a large result whole instead of spilling it (see
	// config.Context.SpillBytes), for callers that show it to a person
	// rather than a model, like the CLI. Text blocks are still capped at
	// security.resultTextMaxBytes.
	KeepWhole bool

	gate gateNote // what per-call approval and the data-flow guard decided (approval.go)
}

// Result is a tool's answer.
type Result struct {
	Tool   string `json:"tool"`   // canonical ID of the tool called
	Server string `json:"server"` // server that answered
	// Raw is the MCP CallToolResult exactly as the server sent it,
	// including fields and content types Switchboard does not know, but
	// for what the guards changed (caps, checked images, credentials
	// redacted per config's security.secrets).
	Raw json.RawMessage `json:"result"`
	// IsError is the result's isError flag: the tool ran and failed.
	IsError bool `json:"isError"`
	// Text is the projection for a model: text as text, media and unknown
	// content as one descriptive line each, structured content as JSON.
	Text string `json:"text"`

	secrets []SecretDecision // credentials found in the result (screenResult)
	as      string           // who the upstream saw the call made by (CallRecord.As)
	grant   string           // the decision about the caller's own grant (CallRecord.Grant)
}

// serverUnavailable explains why a configured server cannot take requests,
// or returns nil when it can.
func (h *Host) serverUnavailable(name string) error {
	s := h.comp.Load().servers[name]
	if s == nil {
		return nil
	}
	v := s.view()
	switch {
	case v.state == StateReady:
		return nil
	case h.closed.Load():
		return fault.New(fault.CodeUnavailable, name, "", errors.New("the host is closed"))
	case v.state == StateDisabled:
		return fault.New(fault.CodeUnavailable, name, "", errors.New(`the server is disabled ("enabled": false in the configuration)`))
	case v.state == StateMisconfigured:
		return fault.New(fault.CodeUnavailable, name, "", v.err)
	case v.state == StateHeld:
		return v.err // launch_changed
	case v.catalog != nil:
		return nil // its tools are known; a call dials it
	case s.retryAfterLogin(), v.state == StateStarting:
		return fault.New(fault.CodeUnavailable, name, "", ErrStarting)
	case v.err == nil:
		return fault.New(fault.CodeUnavailable, name, "", errors.New("the server has not started yet"))
	}
	code := fault.CodeUnavailable
	switch c := fault.CodeOf(v.err); c {
	case fault.CodeRuntimeMissing, fault.CodeRuntimeTooOld, fault.CodeNeedsLogin:
		// Not retryable: it fails the same way until the machine or
		// the configuration changes, and the code says what to fix.
		code = c
	}
	return fault.New(code, name, "", privateAs(v.err, fmt.Errorf("the server failed to start: %s", withoutServer(v.err, name))))
}

// privateAs returns err, marked fault.Private when src is: a message that
// quotes a private error is private too.
func privateAs(src, err error) error {
	if fault.IsPrivate(src) {
		return &fault.Private{Err: err}
	}
	return err
}

// withoutServer renders err without a leading `server "name": `, for
// messages that already name the server.
func withoutServer(err error, name string) string {
	if err == nil {
		return "no reason recorded"
	}
	msg, _ := strings.CutPrefix(err.Error(), fmt.Sprintf("server %q: ", name))
	return msg
}

// Ready waits while the named servers are starting (connecting, their
// tools not known yet), every enabled server when none is named, in
// parallel, each bounded by ctx and its startupTimeoutMs. It returns nil
// when each can take requests (it is ready, or its tools are known from
// its saved catalogue), and otherwise why not, joined: a server's
// start-up error, or ctx's. A request that fails with [ErrStarting] names
// the server to wait for.
func (h *Host) Ready(ctx context.Context, servers ...string) error {
	if len(servers) == 0 {
		for _, sc := range h.config().Servers {
			if runnable(sc) {
				servers = append(servers, sc.Name)
			}
		}
	}
	if len(servers) == 1 {
		return h.await(ctx, servers[0])
	}
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, name := range servers {
		wg.Go(func() { errs[i] = h.await(ctx, name) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// await is Ready for one server.
func (h *Host) await(ctx context.Context, server string) error {
	s := h.comp.Load().servers[server]
	if s == nil {
		return fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server %q", server))
	}
	if s.currentState() == StateStarting && !h.closed.Load() {
		// The dial runs on a goroutine of the Host, bounded by the
		// startup timeout and Close, so that ctx bounds only the wait: a
		// dial this call would start itself could not be cut short.
		done := make(chan struct{})
		h.watchers.Go(func() {
			defer close(done)
			s.ensure(h.life) //nolint:errcheck // recorded in s
		})
		select {
		case <-done:
		case <-ctx.Done():
			return fault.New(fault.CodeTimeout, server, "connect", fmt.Errorf("the server is still starting: %w", ctx.Err()))
		}
	}
	return h.serverUnavailable(server)
}

// ErrStarting marks the unavailable failure of a request whose server is
// still starting (errors.Is); the *fault.Error it is in names the
// server, which [Host.Ready] waits for.
var ErrStarting = errors.New("the server is still starting")

// starting returns the name of the server that a request failed on
// because it is still starting (ErrStarting), or "".
func starting(err error) string {
	var fe *fault.Error
	if !errors.Is(err, ErrStarting) || !errors.As(err, &fe) {
		return ""
	}
	return fe.Server
}

// conn returns the live connection of a server, dialling it if need be
// (see ensure).
func (h *Host) conn(ctx context.Context, name string) (*upstream.Conn, error) {
	s := h.comp.Load().servers[name]
	if s == nil {
		return nil, fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server %q", name))
	}
	return s.ensure(ctx)
}

// Call calls a tool by model-facing name or canonical ID. args is the JSON
// arguments object; nil means {}. The call is bounded by the server's
// callTimeout, and cancelling ctx cancels it upstream.
//
// A server's tools may have changed behind its saved catalogue: a name
// that misses while the catalogue may be stale, or a call the server
// answers with "unknown tool", discovers the server again and is made
// again, once; a call that may have run is never made again. A server
// started for the call is discovered before anything is sent, and the
// call checked against the approved definitions.
//
// opts.Profile limits the call to that profile's view (see [View]): a
// tool outside it answers as a tool no server has. [View.Call] calls as
// one caller.
func (h *Host) Call(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*Result, error) {
	return h.call0(ctx, h.viewOf(opts), name, args, opts)
}

// call0 is Call within a view. Its record starts with the call and ends
// with it, refused or not.
func (h *Host) call0(ctx context.Context, v *View, name string, args json.RawMessage, opts *CallOptions) (out *Result, err error) {
	if h.tracer != nil {
		var span trace.Span
		ctx, span = h.tracer.Start(ctx, "tools/call "+name, trace.WithAttributes(attribute.String(AttrTool, name)))
		defer span.End()
	}
	rec := h.startCall(ctx, name, args, opts)
	defer func() { rec.end(out, err) }()
	if b := h.lookupBuiltin(v, name); b != nil {
		rec.of("", name)
		rec.sent()
		if isScriptTool(b.tool.Name) {
			// A script's row, and each of its calls', carry its run's ID.
			ctx = withRun(ctx)
			rec.ctx, rec.audited = ctx, true
		}
		return h.callBuiltin(ctx, v, b, args, opts)
	}
	t, rediscovered, err := v.lookup(ctx, name, true)
	if err != nil {
		if c := fault.CodeOf(err); c == fault.CodeDefinitionChanged || c == fault.CodeHeldInjection {
			if id, held := h.heldID(name); held {
				rec.of(id.Server, id.String())
				rec.audited = true
			}
		}
		return nil, err
	}
	rec.of(t.ID.Server, t.ID.String())
	if len(args) > 0 && !isObject(args) {
		return nil, fault.New(fault.CodeInvalidInput, t.ID.Server, fmt.Sprintf("call tool %q", t.ID.Name), errors.New("arguments must be a JSON object"))
	}
	comp := h.comp.Load()
	s := comp.servers[t.ID.Server]
	if s == nil {
		// A reload removed the server after the tool was looked up.
		return nil, fault.New(fault.CodeNotFound, t.ID.Server, fmt.Sprintf("call tool %q", t.ID.Name), errors.New("the server is no longer configured"))
	}
	rec.audited = true
	sc := s.cfg.Load() // this call's settings, whatever a reload swaps in meanwhile
	rec.argSecrets, err = h.screenArgs(sc, t.ID.Name, args)
	if err == nil {
		err = h.authorize(ctx, comp.pol, t, sc, args, opts)
	}
	if err == nil {
		opts, err = h.gated(ctx, t, sc, args, opts)
		rec.opts = opts // with what the gate decided
	}
	if err != nil {
		return nil, err
	}
	rec.sent()
	s.beginCall()
	copts, ended := h.live.begin(t.ID.Server, t.ID.String(), opts)
	out, err = h.call(ctx, s, sc, comp.pol, t, args, copts, !rediscovered)
	if out != nil {
		h.markFlow(ctx, t, sc, opts)
	}
	ended()
	s.endCall()
	switch fault.CodeOf(err) {
	case fault.CodeInvalidInput, fault.CodeNotFound, fault.CodeDefinitionChanged, fault.CodeHeldInjection:
		// The call did not fit the server's tools: says nothing of how
		// the server behaves.
	default:
		switch {
		case err != nil:
			s.trust.add(outcomeError)
		case out.IsError:
			s.trust.add(outcomeToolErr)
		default:
			s.trust.add(outcomeOK)
		}
	}
	return out, err
}

// call makes an authorized call: it dials the server if need be, checks
// the tool against the catalogue the connection holds (recheck), calls,
// and guards the result. With retry, a call the server answers with
// "unknown tool" is made once more after the server is discovered again.
func (h *Host) call(ctx context.Context, s *server, sc *config.Server, pol *policy.Engine, t *registry.Tool, args json.RawMessage, opts *CallOptions, retry bool) (*Result, error) {
	// A server started on first use may take its startup timeout on top
	// of the call's.
	conn, err := s.ensure(ctx)
	if err != nil {
		return nil, err
	}
	if t, err = h.recheck(ctx, s, sc, pol, t, args, opts); err != nil {
		return nil, err
	}
	// A server with "oauth.perCaller" is called through the caller's own
	// connection (callers.go); the server's one connection above has
	// checked the tool against its catalogue.
	var own *callerConn
	if who := perCaller(sc, identityOf(opts)); who != "" {
		if own, err = h.callerConn(ctx, s, sc, who, subjectTokenOf(opts)); err != nil {
			return nil, err
		}
		defer func() {
			if own != nil {
				h.callers.release(own)
			}
		}()
		conn = own.conn
	}
	if h.tracer != nil {
		trace.SpanFromContext(ctx).SetAttributes(attribute.String(AttrEra, upstream.EraOf(conn.Info().ProtocolVersion)))
	}
	uopts, ctx := callOptions(ctx, opts)
	res, err := conn.CallTool(ctx, t.ID.Name, args, uopts)
	if fault.CodeOf(err) == fault.CodeUnavailable && ctx.Err() == nil && own != nil {
		// The caller's connection was already gone: the call redials it,
		// once.
		h.callers.release(own)
		h.callers.forget(own)
		if own, err = h.callerConn(ctx, s, sc, own.key.caller, subjectTokenOf(opts)); err != nil {
			own = nil
			return nil, err
		}
		conn = own.conn
		res, err = conn.CallTool(ctx, t.ID.Name, args, uopts)
	} else if fault.CodeOf(err) == fault.CodeUnavailable && ctx.Err() == nil {
		// The connection was already gone, so the request was never sent
		// (a lost request is unknown_outcome, never this): this is the
		// call that redials, once.
		s.dropped(conn, s.life.currentAttempt(), err)
		if conn, err = s.ensure(ctx); err != nil {
			return nil, err
		}
		if t, err = h.recheck(ctx, s, sc, pol, t, args, opts); err != nil {
			return nil, err
		}
		res, err = conn.CallTool(ctx, t.ID.Name, args, uopts)
	}
	if retry && upstream.UnknownTool(t.ID.Name, res, err) && ctx.Err() == nil {
		// The server does not know the tool, so it never ran: its tools
		// changed behind its catalogue. Discover them again, and call
		// once more if the tool is still offered.
		h.log.Debug("server does not know a catalogued tool; discovering it again", "server", s.name, "tool", t.ID.Name)
		if err := s.rediscover(ctx, false); err != nil {
			return nil, err
		}
		return h.call(ctx, s, sc, pol, t, args, opts, false)
	}
	if err != nil {
		if own != nil {
			err = ownLogin(s.name, err)
		}
		return nil, fromUpstream(maskErr(sc, err))
	}
	// Credentials are redacted before the guard, so that no copy of the
	// result (a spilled one included) holds them.
	raw, secrets := h.screenResult(sc, t.ID.Name, res.Raw)
	if opts != nil && opts.KeepWhole {
		raw, err = h.guardResult(sc, t.ID.Name, raw, 0)
	} else {
		raw, err = h.guardAndSpill(sc, t.ID.Name, raw, false, t.Tool.OutputSchema != nil)
	}
	if err != nil {
		return nil, err
	}
	out := &Result{Tool: t.ID.String(), Server: t.ID.Server, Raw: raw, IsError: res.IsError, secrets: secrets}
	switch {
	case own != nil && own.key.exchange:
		out.as, out.grant = asWhom(own), GrantExchanged
	case own != nil:
		out.as, out.grant = asWhom(own), GrantOwn
	default:
		out.grant = h.wouldUse(ctx, sc, identityOf(opts), subjectTokenOf(opts))
	}
	if opts == nil || !opts.RawOnly {
		out.Text = content.ToolText(raw)
	}
	return out, nil
}

// isObject reports whether raw is one valid JSON object, without decoding
// it: arguments are forwarded as they are, so validity is all that counts.
func isObject(raw json.RawMessage) bool {
	for i, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return jsonscan.Valid(raw[i:])
		}
		return false
	}
	return false
}
