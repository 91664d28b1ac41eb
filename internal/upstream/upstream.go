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
// *fault.Error values naming the server, in one place (classify.go). The
// OAuth 2.1 client of Streamable HTTP servers is internal/oauth's; a
// connection holds its handler (auth.go).
//
// A Conn does not reconnect; supervision belongs to the caller.
package upstream

import (
	"go.opentelemetry.io/otel/trace"

	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/era"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/sandbox"
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
	// LeftoverDir is launcher.Spec.LeftoverDir for every stdio server.
	LeftoverDir string
	// SwitchboardHome and SandboxCacheDir are launcher.Spec's
	// SwitchboardHome and CacheDir for every stdio server.
	SwitchboardHome, SandboxCacheDir string
	// RanBefore, when set, reports whether a server ran before (it has a
	// saved catalogue): its first sandboxed start then runs in report
	// mode (launcher.Spec.Upgrade).
	RanBefore func(server string) bool
	// OnResourceUpdated, when set, receives the servers' resource update
	// notifications (for subscribed URIs), with the server's name.
	OnResourceUpdated func(server, uri string)
	// OnListChanged, when set, is called when a server says its tools,
	// prompts or resources changed. It must not block.
	OnListChanged func(server string)
	// CheckElicit, when set, is given each elicitation a server makes
	// (both eras) before anyone is asked: it returns the request to put
	// to the person (the same, or with a warning in its message) or an
	// error, which refuses it. It names the server.
	CheckElicit func(server string, p *mcp.ElicitParams) (*mcp.ElicitParams, error)
	// Forward declares sampling, elicitation and roots to servers, and
	// routes their requests to the Peer of the call that caused them (see
	// WithPeer). Without it Switchboard declares none of them.
	Forward bool
	// OAuth, when set, configures the OAuth 2.1 client (internal/oauth)
	// of Streamable HTTP servers that ask for a login. Nil sends only the
	// configured headers.
	OAuth *oauth.Config
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

// Conn is a live connection to one server. It is safe for concurrent use.
type Conn struct {
	server  *config.Server
	opts    Options
	log     *slog.Logger
	secrets []string // server's configured secrets, masked in its stderr (config.Server.SecretValues)

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

	oauth *oauth.Handler // nil without Options.OAuth; fixed at Dial

	twin twin // the legacy connection for legacy clients (twin.go); its own lock
}

// Dial connects to s and performs the handshake, within s.StartupTimeout.
func Dial(ctx context.Context, s *config.Server, opts *Options) (*Conn, error) {
	o := opts.withDefaults()
	c := &Conn{
		server:  s,
		opts:    o,
		log:     o.Logger.With("server", s.Name),
		secrets: s.SecretValues(),
		done:    make(chan struct{}),
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

// Sandbox says how a stdio server's process is confined; the zero Status
// for other servers.
func (c *Conn) Sandbox() sandbox.Status {
	if c.proc == nil {
		return sandbox.Status{}
	}
	return c.proc.Sandbox()
}

// SandboxEvents says what the sandbox's limits did to a stdio server's
// process, complete once it ended.
func (c *Conn) SandboxEvents() sandbox.Events {
	if c.proc == nil {
		return sandbox.Events{}
	}
	return c.proc.SandboxEvents()
}

// mask hides the server's secrets in text from it (config.Mask).
func (c *Conn) mask(text string) string { return config.Mask(text, c.secrets) }

// StderrTail returns the escaped tail of a stdio server's stderr, with the
// server's secrets masked (config.Mask).
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
