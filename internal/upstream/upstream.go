// Package upstream holds one live connection to one upstream MCP server,
// over go-sdk's client: stdio (through the launcher), Streamable HTTP and
// legacy HTTP+SSE, in both protocol eras.
//
// It fills go-sdk's gaps for a host: a stdio handshake chosen by era (a
// server/discover probe for 2026-07-28 unless the server is pinned; a
// probe that goes unanswered falls back to initialize on the same
// process, see captureTransport, and one refused restarts on the legacy
// handshake), a legacy twin
// connection for the calls of legacy clients (twin.go), a default
// timeout on every request, progress routed to the call that asked for it
// (go-sdk routes progress per client, not per call), lossless tool results
// (see capture.go), bounded HTTP responses, and failures classified as
// *fault.Error values naming the server, in one place (classify.go).
//
// A Conn does not reconnect; supervision belongs to the caller. This
// package may import config, fault, internal/catalog, internal/era,
// internal/jsonscan, internal/launcher and internal/netguard, never host.
package upstream

import (
	"go.opentelemetry.io/otel/trace"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/era"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// Options configure Dial. The zero value is usable; nil means defaults.
type Options struct {
	// Logger receives connection events. Nil discards them.
	Logger *slog.Logger
	// ClientInfo identifies Switchboard to servers. Nil means
	// {Name: "switchboard", Version: "dev"}.
	ClientInfo *mcp.Implementation
	// ProbeTimeout bounds the 2026-07-28 server/discover probe of a stdio
	// server whose era is not pinned: without an answer by then, the
	// connection falls back to initialize on the same process. Zero means
	// 5 s, and never more than half the server's startup timeout.
	ProbeTimeout time.Duration
	// MaxFrame caps one stdout frame, HTTP response body or SSE event.
	// Zero means 16 MiB.
	MaxFrame int
	// MaxListItems caps each of the four lists drained at discovery, so a
	// server paging forever cannot exhaust memory. Zero means 10000.
	MaxListItems int
	// HTTPTransport is the base RoundTripper for HTTP servers. Nil means a
	// clone of http.DefaultTransport.
	HTTPTransport http.RoundTripper
	// StopStage bounds each stage of stopping a stdio server. Zero means 5 s.
	StopStage time.Duration
	// OnResourceUpdated, when set, receives the servers' resource update
	// notifications (for subscribed URIs), with the server's name.
	OnResourceUpdated func(server, uri string)
	// OnListChanged, when set, is called when a server says its tools,
	// prompts or resources changed. It must not block.
	OnListChanged func(server string)
	// Forward declares sampling, elicitation and roots to servers, and
	// routes their requests to the Peer of the call that caused them (see
	// WithPeer). Without it Switchboard declares none of them.
	Forward bool
	// OAuth, when set, is the OAuth 2.1 client of Streamable HTTP servers
	// that ask for a login (see OAuth). Nil sends only the configured
	// headers.
	OAuth *OAuth
	// TracerProvider, when set, makes a span of every request sent within
	// a traced call and passes the trace context to the server (see
	// trace.go). Nil traces nothing.
	TracerProvider trace.TracerProvider
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	if out.ClientInfo == nil {
		out.ClientInfo = &mcp.Implementation{Name: "switchboard", Version: "dev"}
	}
	if out.ProbeTimeout == 0 {
		out.ProbeTimeout = 5 * time.Second
	}
	if out.MaxFrame == 0 {
		out.MaxFrame = 16 << 20
	}
	if out.MaxListItems == 0 {
		out.MaxListItems = 10000
	}
	if out.HTTPTransport == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// The default of 2 idle connections per host makes a gateway with
		// more calls than that in flight to one server dial and close a
		// TCP connection for most of them (650 sockets in TIME_WAIT after
		// 2000 calls from 16 callers; 40 with 64).
		tr.MaxIdleConnsPerHost = 64
		out.HTTPTransport = tr
	}
	return out
}

// Info is what the handshake told us about a server.
type Info struct {
	ProtocolVersion string
	ServerInfo      *mcp.Implementation // may be nil on the modern path
	Capabilities    *mcp.ServerCapabilities
	Instructions    string
}

// Progress is one progress notification for a call.
type Progress struct {
	Progress float64
	Total    float64 // 0 when unknown
	Message  string
}

// ToolResult is a tool's answer. Raw is the result object exactly as the
// server sent it; IsError is its isError flag (a tool failure is data, not
// a Go error).
type ToolResult struct {
	Raw     json.RawMessage
	IsError bool
}

// Conn is a live connection to one server. It is safe for concurrent use.
type Conn struct {
	server *config.Server
	opts   Options
	log    *slog.Logger

	life    context.Context    // the connection's lifetime; every call is tied to it
	cancel  context.CancelFunc // ends life: Close cancels calls in flight first
	session *mcp.ClientSession
	proc    *launcher.Process // nil for HTTP servers
	info    Info
	done    chan struct{} // closed when the session has ended

	progressSeq atomic.Int64
	progress    sync.Map // token string → func(Progress)

	mu    sync.Mutex
	err   error        // why the session ended, set before done closes
	peers map[Peer]int // peers of the calls in flight, with their counts

	oauth *oauthHandler // nil without Options.OAuth; fixed at Dial

	twin twin // the legacy connection for legacy clients (twin.go); its own lock
}

// Dial connects to s and performs the handshake, within s.StartupTimeout.
func Dial(ctx context.Context, s *config.Server, opts *Options) (*Conn, error) {
	o := opts.withDefaults()
	c := &Conn{
		server: s,
		opts:   o,
		log:    o.Logger.With("server", s.Name),
		done:   make(chan struct{}),
	}
	c.life, c.cancel = context.WithCancel(context.Background())
	parent := ctx
	// go-sdk hands the connect context's values to the server's requests
	// on stdio: a dial made for a call must not leave that call's peer
	// where a later request of the server would find it (peerFor).
	ctx = context.WithValue(ctx, peerKey{}, nil)
	ctx, cancel := context.WithTimeout(withPhase(withStatus(ctx)), s.StartupTimeout)
	defer cancel()
	start := time.Now()
	err := c.setupOAuth()
	if err == nil {
		err = c.connect(ctx)
	}
	if err == nil {
		c.askForLogs(ctx)
	}
	if err != nil {
		if !cannotLaunch(err) {
			// The request left unanswered names the phase:
			// server/discover or initialize.
			err = timedOut(parent, ctx, limit{s.StartupTimeout, "startupTimeoutMs"}, lastPhase(ctx), err)
		}
		err = c.classify(ctx, "connect", false, err)
		c.cancel()
		return nil, err
	}
	c.log.Debug("connected", "protocol", c.info.ProtocolVersion, "elapsed", time.Since(start))
	go c.watch()
	return c, nil
}

func (c *Conn) newClient() *mcp.Client {
	opts := &mcp.ClientOptions{
		Logger: c.log,
		// Advertise nothing we cannot serve: go-sdk's default advertises
		// roots, which a host without roots would answer wrongly.
		Capabilities:                &mcp.ClientCapabilities{},
		ProgressNotificationHandler: c.onProgress,
		LoggingMessageHandler:       c.onLog,
	}
	if f := c.opts.OnListChanged; f != nil {
		changed := func() { f(c.server.Name) }
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { changed() }
		opts.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) { changed() }
		opts.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) { changed() }
	}
	if f := c.opts.OnResourceUpdated; f != nil {
		opts.ResourceUpdatedHandler = func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			f(c.server.Name, req.Params.URI)
		}
	}
	// Switchboard runs the 2026-07-28 multi-round-trip loop itself (see
	// CallTool): go-sdk's would answer roots from a static list and could
	// not hand input requests to the call's peer.
	opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	if c.opts.Forward {
		// Only what the server's trust level allows is advertised.
		if c.allows("roots") {
			opts.Capabilities = &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}
		}
		if c.allows("sampling") {
			opts.CreateMessageWithToolsHandler = c.onCreateMessage
		}
		if c.allows("elicitation") {
			opts.ElicitationHandler = c.onElicit
		}
	}
	client := mcp.NewClient(c.opts.ClientInfo, opts)
	if c.opts.Forward {
		client.AddReceivingMiddleware(c.askMiddleware)
	}
	if tp := c.opts.TracerProvider; tp != nil {
		client.AddSendingMiddleware(c.traceMiddleware(tp.Tracer(TracerName)))
	}
	return client
}

func (c *Conn) connect(ctx context.Context) error {
	switch c.server.Transport {
	case config.TransportStdio:
		return c.connectStdio(ctx)
	case config.TransportHTTP:
		if err := c.checkURL(); err != nil {
			return err
		}
		return c.connectHTTP(ctx, c.streamableTransport(), c.server.ProtocolVersion)
	case config.TransportSSE:
		if err := c.checkURL(); err != nil {
			return err
		}
		// Legacy HTTP+SSE servers predate server/discover: go straight to
		// initialize (the server negotiates down to its version), with the
		// pinned version if there is one (config allows only legacy ones).
		version := c.server.ProtocolVersion
		if version == "" {
			version = era.LatestLegacy
		}
		return c.connectHTTP(ctx, captureTransport{onLog: c.wireLog, Transport: &mcp.SSEClientTransport{
			Endpoint:     c.server.URL,
			HTTPClient:   c.httpClient(),
			MaxEventSize: c.opts.MaxFrame,
		}}, version)
	}
	return fmt.Errorf("unknown transport %q", c.server.Transport)
}

// connectStdio starts the process on the handshake of the server's era.
// Pinned to a modern version, it sends server/discover and nothing else;
// pinned to a legacy version, initialize with it. Unpinned, it probes the
// 2026-07-28 era first, which ties a server's questions to the call that
// asks them and carries multi-round-trip input requests through to
// 2026-07-28 clients (a legacy stdio server's questions name no call). A
// server that does not answer the probe in time falls back to initialize
// on the same process (captureTransport answers the probe itself); one
// that dies on it, or refuses it, is restarted on the legacy handshake.
// The legacy era costs less per call (no per-request _meta): pin it with
// "protocolVersion" where that matters more, or where a server asks its
// questions only the legacy way.
func (c *Conn) connectStdio(ctx context.Context) error {
	switch v := c.server.ProtocolVersion; {
	case era.Modern(v):
		return c.startStdio(ctx, handshake{version: v, modernOnly: true})
	case v != "":
		return c.startStdio(ctx, handshake{version: v})
	}
	probe := c.opts.ProbeTimeout
	if half := c.server.StartupTimeout / 2; probe > half {
		probe = half
	}
	err := c.startStdio(ctx, handshake{probe: probe})
	if err == nil || ctx.Err() != nil || cannotLaunch(err) {
		return err
	}
	c.log.Debug("modern handshake failed; restarting on the legacy handshake", "err", err)
	return c.startStdio(ctx, handshake{version: era.LatestLegacy})
}

// handshake says how startStdio connects: version is the protocol version
// asked for ("" means go-sdk's latest, the modern one); probe, when
// positive, bounds the server/discover probe; modernOnly forbids the
// fallback to initialize.
type handshake struct {
	version    string
	probe      time.Duration
	modernOnly bool
}

func (c *Conn) startStdio(ctx context.Context, h handshake) error {
	p, err := launcher.Start(launcher.Spec{
		Server:      c.server.Name,
		Command:     c.server.Command,
		Args:        c.server.Args,
		Env:         c.server.Env,
		Dir:         c.server.Cwd,
		Runtime:     c.server.Runtime,
		MaxFrame:    c.opts.MaxFrame,
		StopStage:   c.opts.StopStage,
		Logger:      c.log,
		FrameFilter: c.pruneFrame,
	})
	if err != nil {
		return err
	}
	var sessOpts *mcp.ClientSessionOptions
	if h.version != "" {
		sessOpts = &mcp.ClientSessionOptions{ProtocolVersion: h.version}
	}
	var established atomic.Bool
	t := captureTransport{Transport: p.Transport(), probe: h.probe, modernOnly: h.modernOnly, established: &established, abort: func() { p.Abort() }, onLog: c.wireLog}
	cs, err := c.newClient().Connect(ctx, t, sessOpts)
	established.Store(err == nil)
	if err != nil {
		p.Abort() // it never completed the handshake: no grace period
		if f := p.Fault(); f != nil {
			err = f
		}
		return withStderr(err, p.StderrTail())
	}
	c.proc = p
	c.setSession(cs)
	return nil
}

// connectHTTP connects over an HTTP transport. The session is bound to the
// connection's lifetime, not to ctx: go-sdk's SSE transport ties its
// hanging GET to the context given to Connect, so ctx's deadline is
// enforced here by cancelling a context derived from the lifetime.
func (c *Conn) connectHTTP(ctx context.Context, t mcp.Transport, version string) error {
	connectCtx, cancel := context.WithCancel(c.life)
	// The handshake's HTTP refusals (401 above all) are the dial's, and so
	// are the requests it sends (phase.go).
	connectCtx = context.WithValue(connectCtx, statusKey{}, ctx.Value(statusKey{}))
	connectCtx = context.WithValue(connectCtx, phaseKey{}, ctx.Value(phaseKey{}))
	stop := context.AfterFunc(ctx, cancel)
	var sessOpts *mcp.ClientSessionOptions
	if version != "" {
		sessOpts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.newClient().Connect(connectCtx, t, sessOpts)
	if !stop() || err != nil {
		cancel()
		if cs != nil {
			cs.Close()
		}
		if err == nil || ctx.Err() != nil {
			err = errors.Join(ctx.Err(), err)
		}
		return err
	}
	// connectCtx now lives as long as c.life; cancel is left to Close.
	c.setSession(cs)
	return nil
}

func (c *Conn) setSession(cs *mcp.ClientSession) {
	c.session = cs
	r := cs.InitializeResult()
	c.info = Info{ProtocolVersion: r.ProtocolVersion, ServerInfo: r.ServerInfo, Capabilities: r.Capabilities, Instructions: r.Instructions}
	if c.info.Capabilities == nil {
		c.info.Capabilities = &mcp.ServerCapabilities{}
	}
}

func (c *Conn) streamableTransport() mcp.Transport {
	t := &mcp.StreamableClientTransport{
		Endpoint:     c.server.URL,
		HTTPClient:   c.httpClient(),
		MaxEventSize: c.opts.MaxFrame,
		// go-sdk resumes a broken SSE stream (Last-Event-ID, backoff) when
		// the server numbered its events; a few tries, then the connection
		// is broken and the caller redials.
		MaxRetries: 3,
	}
	if c.oauth != nil {
		t.OAuthHandler = c.oauth
	}
	return t
}

// roundTripper adds the configured headers and bounds response bodies. For
// Streamable HTTP it is also the capture point of raw results; legacy SSE
// results arrive on the GET stream and are captured at the Connection, so
// there the slot never reaches a POST and nothing is rewritten.
func (c *Conn) roundTripper() http.RoundTripper {
	h := http.Header{}
	for k, v := range c.server.Headers {
		h.Set(k, v)
	}
	next := c.baseTransport()
	if c.oauth != nil {
		next = dpopRS{next: next, h: c.oauth}
	}
	rt := &captureRoundTripper{
		next:    next,
		headers: h,
		maxBody: int64(c.opts.MaxFrame),
		server:  c.server.Name,
		prune:   c.pruneFrame,
	}
	return rt
}

// watch records why the session ended and closes done.
func (c *Conn) watch() {
	err := c.session.Wait()
	if c.proc != nil {
		c.proc.Stop()
		if f := c.proc.Fault(); f != nil {
			err = f
		} else if ee := c.proc.ExitErr(); ee != nil {
			err = ee
		}
	}
	if err == nil {
		err = errors.New("connection closed")
	}
	c.closeTwin()
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	close(c.done)
}

// askForLogs asks a legacy server that logs to send everything: the
// gateway forwards its messages to each client, whose own level filters
// them (go-sdk's ServerSession.Log). A 2026-07-28 server is asked per
// request instead (see CallTool). Failure only costs the logs.
func (c *Conn) askForLogs(ctx context.Context) {
	if !c.opts.Forward || c.info.Capabilities.Logging == nil || c.modern() {
		return
	}
	//lint:ignore SA1019 logging is deprecated by SEP-2577 but still served and scored.
	if err := c.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		c.log.Debug("logging/setLevel refused", "err", err)
	}
}

// requestMeta is the _meta Switchboard adds to a forwarded request to a
// 2026-07-28 server: the log level (see askForLogs) and the capabilities of
// the client on whose behalf it runs. nil when there is nothing to add.
func (c *Conn) requestMeta(peer Peer) mcp.Meta {
	if !c.opts.Forward || !c.modern() {
		return nil
	}
	m := mcp.Meta{}
	if c.info.Capabilities.Logging != nil {
		m[mcp.MetaKeyLogLevel] = "debug"
	}
	if r, ok := peer.(CapabilityReporter); ok {
		m[mcp.MetaKeyClientCapabilities] = c.allowedCapabilities(forwardedCapabilities(r.ClientCapabilities()))
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

func (c *Conn) modern() bool { return era.Modern(c.info.ProtocolVersion) }

// Info returns what the handshake reported.
func (c *Conn) Info() Info { return c.info }

// Done is closed when the connection has ended, for any reason.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err reports why the connection ended; nil while it is alive.
func (c *Conn) Err() error {
	select {
	case <-c.done:
	default:
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// ExitStatus says how a stdio server's process ended ("exit status 1",
// "signal: killed") once the connection has ended; "" while it runs, and
// for an HTTP server.
func (c *Conn) ExitStatus() string {
	if c.proc == nil {
		return ""
	}
	select {
	case <-c.done:
	default:
		return ""
	}
	return c.proc.ExitStatus()
}

// PID returns the process ID of a stdio server; 0 for an HTTP server.
func (c *Conn) PID() int {
	if c.proc == nil {
		return 0
	}
	return c.proc.PID()
}

// StderrTail returns the escaped tail of a stdio server's stderr.
func (c *Conn) StderrTail() string {
	if c.proc == nil {
		return ""
	}
	return c.proc.StderrTail()
}

// Close ends the session and, for stdio, stops the process group. Calls in
// flight are cancelled first (go-sdk's Close would wait for them) and fail
// unavailable. It waits for the teardown, which is bounded by the
// launcher's stop stages.
func (c *Conn) Close() error {
	c.cancel()
	c.closeTwin()
	err := c.session.Close()
	if c.proc != nil {
		c.proc.Stop()
	}
	<-c.done
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
		err = nil
	}
	return err
}

// Discover drains every list the server's capabilities declare.
func (c *Conn) Discover(ctx context.Context) (*catalog.Catalog, error) {
	parent := ctx
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	// A list the server did not answer in time says which, and which
	// setting bounded it (the caller's, from WithStartup, or callTimeoutMs).
	late := func(method string, err error) error {
		return timedOut(parent, ctx, limit{c.server.CallTimeout, "callTimeoutMs"}, method, err)
	}
	filter := new(listFilter)
	ctx, s := withSlot(ctx, "", nil)
	s.list = filter
	defer s.finish()
	caps := c.info.Capabilities
	cat := &catalog.Catalog{Instructions: c.info.Instructions}
	defer func() { cat.Skipped = filter.dropped() }()
	var err error
	if caps.Tools != nil {
		if cat.Tools, err = drain(c, c.session.Tools(ctx, nil)); err != nil {
			return nil, c.classify(ctx, "list tools", false, late("tools/list", err))
		}
	}
	if caps.Resources != nil {
		if cat.Resources, err = drain(c, c.session.Resources(ctx, nil)); err != nil {
			return nil, c.classify(ctx, "list resources", false, late("resources/list", err))
		}
		if cat.Templates, err = drain(c, c.session.ResourceTemplates(ctx, nil)); err != nil {
			return nil, c.classify(ctx, "list resource templates", false, late("resources/templates/list", err))
		}
	}
	if caps.Prompts != nil {
		if cat.Prompts, err = drain(c, c.session.Prompts(ctx, nil)); err != nil {
			return nil, c.classify(ctx, "list prompts", false, late("prompts/list", err))
		}
	}
	return cat, nil
}

func drain[T any](c *Conn, seq func(func(*T, error) bool)) ([]*T, error) {
	var out []*T
	for item, err := range seq {
		if err != nil {
			return nil, err
		}
		if item == nil {
			continue
		}
		if len(out) >= c.opts.MaxListItems {
			return nil, fmt.Errorf("more than %d items: %w", c.opts.MaxListItems, errTooMany)
		}
		out = append(out, item)
	}
	return out, nil
}

var errTooMany = errors.New("list too long")

// CallOptions tune one call; nil means none.
type CallOptions struct {
	// Progress, when set, receives the call's progress notifications.
	Progress func(Progress)
	// InputResponses and RequestState retry a call that returned
	// *InputRequired (2026-07-28 multi-round-trip), verbatim.
	InputResponses mcp.InputResponseMap
	RequestState   string
}

// CallTool calls a tool. args is the arguments object as JSON (nil means
// {}). A tool that fails returns a result with IsError, not an error.
func (c *Conn) CallTool(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*ToolResult, error) {
	if t := c.legacyFor(ctx, peerFrom(ctx)); t != c {
		return t.CallTool(ctx, name, args, opts)
	}
	if opts == nil {
		opts = &CallOptions{}
	}
	progress := opts.Progress
	if err := c.Err(); err != nil {
		return nil, fault.New(fault.CodeUnavailable, c.server.Name, fmt.Sprintf("call tool %q", name), err)
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	params := &mcp.CallToolParams{Name: name, Arguments: args, InputResponses: opts.InputResponses, RequestState: opts.RequestState}
	params.Meta = c.requestMeta(peerFrom(ctx))
	if len(args) == 0 {
		params.Arguments = json.RawMessage("{}")
	}
	token := ""
	if progress != nil {
		token = fmt.Sprintf("sb-%d", c.progressSeq.Add(1))
		// Reports the wire capture points miss (a server sending progress
		// on a standalone stream) still reach the call through go-sdk.
		c.progress.Store(token, progress)
		defer c.progress.Delete(token)
		params.SetProgressToken(token)
	}
	ctx, s := withSlot(ctx, token, progress)
	if p := peerFrom(ctx); p != nil && c.opts.Forward {
		s.log = func(lp *mcp.LoggingMessageParams) { p.Log(ctx, c.server.Name, lp) }
	}
	defer s.finish()
	peer := peerFrom(ctx)
	if peer != nil {
		defer c.track(peer)()
	}
	res, err := c.session.CallTool(ctx, params)
	// A 2026-07-28 server asks for input by answering with input requests;
	// the call is retried with the responses (SEP-2322), at most maxRounds.
	for round := 1; err == nil && s.get() == nil && len(res.InputRequests) > 0; round++ {
		responses, ierr := c.answerInput(ctx, peer, fmt.Sprintf("call tool %q", name), round, res.InputRequests, res.RequestState)
		if ierr != nil {
			return nil, ierr
		}
		retry := *params
		retry.InputResponses, retry.RequestState = responses, res.RequestState
		res, err = c.session.CallTool(ctx, &retry)
	}
	op := fmt.Sprintf("call tool %q", name)
	if raw := s.get(); raw != nil && err == nil {
		// The wire result is authoritative: the SDK only saw a stand-in.
		isError, ferr := isErrorFlag(raw)
		if ferr != nil {
			return nil, c.classify(ctx, op, true, &protocolError{ferr})
		}
		return &ToolResult{Raw: raw, IsError: isError}, nil
	}
	if err != nil {
		if sf := s.getFault(); sf != nil {
			// The capture point found the answer malformed.
			err = &protocolError{sf}
		}
		return nil, c.classify(ctx, op, true, err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, c.classify(ctx, op, true, &protocolError{err})
	}
	return &ToolResult{Raw: raw, IsError: res.IsError}, nil
}

// ReadResource reads a resource by URI.
func (c *Conn) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	res, err := c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, c.classify(ctx, fmt.Sprintf("read resource %q", uri), false, err)
	}
	return res, nil
}

// GetPrompt renders a prompt. Like CallTool, it answers a 2026-07-28
// server's input requests through the context's peer, or returns
// *InputRequired when the peer passes them on.
func (c *Conn) GetPrompt(ctx context.Context, name string, args map[string]string, opts *CallOptions) (*mcp.GetPromptResult, error) {
	if t := c.legacyFor(ctx, peerFrom(ctx)); t != c {
		return t.GetPrompt(ctx, name, args, opts)
	}
	if opts == nil {
		opts = &CallOptions{}
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	peer := peerFrom(ctx)
	if peer != nil {
		defer c.track(peer)()
	}
	op := fmt.Sprintf("get prompt %q", name)
	params := &mcp.GetPromptParams{Name: name, Arguments: args, InputResponses: opts.InputResponses, RequestState: opts.RequestState, Meta: c.requestMeta(peer)}
	res, err := c.session.GetPrompt(ctx, params)
	for round := 1; err == nil && len(res.InputRequests) > 0; round++ {
		responses, ierr := c.answerInput(ctx, peer, op, round, res.InputRequests, res.RequestState)
		if ierr != nil {
			return nil, ierr
		}
		retry := *params
		retry.InputResponses, retry.RequestState = responses, res.RequestState
		res, err = c.session.GetPrompt(ctx, &retry)
	}
	if err != nil {
		return nil, c.classify(ctx, op, false, err)
	}
	return res, nil
}

// Complete asks the server for argument completions.
func (c *Conn) Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	res, err := c.session.Complete(ctx, params)
	if err != nil {
		return nil, c.classify(ctx, "complete", false, err)
	}
	return res, nil
}

// Subscribe and Unsubscribe manage a resource subscription; updates arrive
// through Options.OnResourceUpdated.
func (c *Conn) Subscribe(ctx context.Context, uri string) error {
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	if err := c.session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		return c.classify(ctx, fmt.Sprintf("subscribe %q", uri), false, err)
	}
	return nil
}

func (c *Conn) Unsubscribe(ctx context.Context, uri string) error {
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	if err := c.session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		return c.classify(ctx, fmt.Sprintf("unsubscribe %q", uri), false, err)
	}
	return nil
}

// callContext bounds one request by the server's callTimeout and ties it
// to the connection's lifetime, so Close never waits for a call.
func (c *Conn) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(withStatus(ctx), c.server.CallTimeout)
	stop := context.AfterFunc(c.life, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

func (c *Conn) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	token, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	if f, ok := c.progress.Load(token); ok {
		f.(func(Progress))(Progress{Progress: req.Params.Progress, Total: req.Params.Total, Message: req.Params.Message})
	}
}

// withStderr appends the server's stderr tail to a start-up error, since
// a server that failed to start usually said why there. The result is
// fault.Private: the tail is for the operator, never for a client.
func withStderr(err error, tail string) error {
	tail = strings.TrimSpace(tail)
	if tail == "" {
		return err
	}
	if len(tail) > 2048 {
		tail = "…" + tail[len(tail)-2048:]
	}
	return &fault.Private{Err: fmt.Errorf("%w\nstderr:\n%s", err, tail)}
}
