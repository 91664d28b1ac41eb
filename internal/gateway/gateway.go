// Package gateway serves a host.Host's aggregate as one MCP server, so any
// MCP client (Claude Code, Claude Desktop, Cursor, ...) reaches every
// configured server through one entry: `switchboard serve`.
//
// What a client sees:
//   - every tool under its model-facing name (see package names), calls
//     forwarded with their arguments untouched, progress forwarded to the
//     request that caused it, cancellation forwarded upstream;
//   - prompts under model-facing names built the same way;
//   - resources and templates under their own URIs, so that resource links
//     inside tool results stay readable through the gateway; a URI offered
//     by several servers is served by the first in server-name order and
//     the collision is logged;
//   - server instructions merged, each attributed to its server;
//   - requests an upstream makes during a call (sampling, elicitation,
//     roots) put to the client that made it: as server-to-client requests
//     to a legacy client, as input-required results to a 2026-07-28 one
//     (passed through from a 2026-07-28 upstream, parked for a legacy one).
//
// Errors keep MCP's two channels apart, mapped from fault codes in one
// place (toClient): a tool's isError result passes through as a result; an
// unknown tool or bad arguments is JSON-RPC -32602; an upstream that is
// unavailable, times out or breaks the protocol is a tool result with
// isError naming the server, so the model can adapt, with the stable code
// in _meta["io.switchboard/error"]; so is a call of a tool held back
// because its definition changed (definition_changed) or its metadata
// matches an injection pattern (held_injection). A server's stderr
// never reaches a client. Never code 0.
//
// go-sdk serves both protocol eras over stdio itself; over HTTP the
// mcphttp package routes each request to the right handler and the
// frontdoor package guards the endpoint.
//
// This package wires host, frontdoor and mcphttp; only the CLI imports it.
package gateway

import (
	"go.opentelemetry.io/otel/trace"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/mcphttp"
)

// ErrorMetaKey is the _meta key of a tool result that reports an upstream
// failure: {"code": "...", "server": "...", "retryable": bool}.
const ErrorMetaKey = "io.switchboard/error"

// maxInstructions caps each server's part of the merged instructions,
// maxAllInstructions all of them.
const (
	maxInstructions    = 4096
	maxAllInstructions = 16 << 10
)

// Options configure New. Nil means defaults.
type Options struct {
	// Version is reported in serverInfo. Default "dev".
	Version string
	// PageSize is the page size of the four lists. Zero means go-sdk's
	// default (1000).
	PageSize int
	// Logger receives skipped entries, collisions and forwarding failures.
	// Nil discards them.
	Logger *slog.Logger
	// OnConfirm is the configuration's policy.onConfirm: "elicit" (ask the
	// calling client's user; the default) or "deny".
	OnConfirm string
	// TracerProvider, when set, makes a span of every request from a
	// client (see trace.go); give the host the same one. Nil traces
	// nothing.
	TracerProvider trace.TracerProvider
	// Profile, when set, serves only the configuration's profile of that
	// name (`serve --stdio --profile`; see profile.go). Default "": the
	// whole aggregate, and each profile at <path>/<name> over HTTP.
	Profile string
}

// Gateway is the aggregate as an MCP server.
type Gateway struct {
	host   *host.Host
	server *mcp.Server
	log    *slog.Logger
	states *sealer // protects requestState handed to 2026-07-28 clients
	// replica names this gateway in the states of its parked calls, which
	// live in its memory (park.go); random, fixed at creation.
	replica string
	// onConfirm is Options.OnConfirm.
	onConfirm string
	// approvalPage is the status page's view of held calls (a string;
	// approve.go), set once serve's page is up.
	approvalPage atomic.Value

	mu   sync.Mutex
	subs map[string]*subscription // by URI: the upstream subscription shared by clients

	syncMu                               sync.Mutex // serialises Sync; guards the four below
	tools, resources, templates, prompts registered

	parkMu sync.Mutex
	parked map[string]*parkedCall // calls waiting for a 2026-07-28 client's input (park.go)

	// opts and profile are fixed at creation; profile is Options.Profile.
	opts    Options
	profile string
	// profMu guards profiles, the gateways of the profiles served over
	// HTTP, made on first use (profile.go). Lock order: profMu, then a
	// profile gateway's syncMu.
	profMu   sync.Mutex
	profiles map[string]*profileServer
}

// New builds the MCP server for h's current aggregate.
func New(h *host.Host, opts *Options) *Gateway { return newGateway(h, opts, nil) }

// newGateway is New with the sealer of request states: a profile's gateway
// shares its parent's; nil makes one from h (hostSealer).
func newGateway(h *host.Host, opts *Options, states *sealer) *Gateway {
	if opts == nil {
		opts = &Options{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	if states == nil {
		states = hostSealer(h, log)
	}
	g := &Gateway{host: h, log: log, states: states, replica: newToken()[:16], subs: map[string]*subscription{},
		tools: registered{}, resources: registered{}, templates: registered{}, prompts: registered{},
		parked: map[string]*parkedCall{}, onConfirm: opts.OnConfirm,
		opts: *opts, profile: opts.Profile, profiles: map[string]*profileServer{}}
	g.server = mcp.NewServer(&mcp.Implementation{Name: "switchboard", Title: "Switchboard gateway", Version: version}, &mcp.ServerOptions{
		Instructions: instructions(h.View(host.Caller{Profile: opts.Profile})),
		PageSize:     opts.PageSize,
		Logger:       sdkLog(log),
		// Advertise what the aggregate has: resources and prompts are
		// added by go-sdk as they are registered; logging because
		// upstream log messages are forwarded to the caller. Tools with
		// list_changed always: a client that connects while every server
		// is still starting (no tool yet) subscribes to the change only
		// if it is offered, and the tools join later.
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{},
			Tools: &mcp.ToolCapabilities{ListChanged: true}},
		CompletionHandler:  g.complete,
		SubscribeHandler:   g.subscribe,
		UnsubscribeHandler: g.unsubscribe,
	})
	g.server.AddReceivingMiddleware(g.legacyResults, g.currentInstructions, g.splice, g.offerLogin, g.heldBack)
	if tp := opts.TracerProvider; tp != nil {
		// Added last, so outermost: the span covers the others.
		g.server.AddReceivingMiddleware(traceRequests(tp.Tracer(host.TracerName)))
	}
	g.Sync()
	return g
}

// Server returns the go-sdk server, for tests and custom transports.
func (g *Gateway) Server() *mcp.Server { return g.server }

// instructions merges the instructions of the servers of a view
// (host.View.Instructions), each attributed and capped, after the
// gateway's own, which name the built-in tools the view has.
func instructions(v *host.View) string {
	var b strings.Builder
	b.WriteString("Switchboard gateway: the tools, resources and prompts of several MCP servers. " +
		"Tool and prompt names are <server prefix>__<name>.")
	names := map[string]bool{}
	for _, t := range v.Tools() {
		names[t.Name] = true
	}
	if names[host.ToolSearch] {
		b.WriteString(" Not every tool is listed: when none fits, " + host.ToolSearch + " finds more by what they do.")
	}
	if names[host.ListResources] || names[host.ListPrompts] {
		b.WriteString(" Resources and prompts are discovered on demand with the mcp_list_* tools.")
	}
	var omitted []string
	total := 0
	for _, in := range v.Instructions() {
		text := strings.TrimSpace(in.Text)
		if text == "" {
			continue
		}
		if len(text) > maxInstructions {
			cut := maxInstructions
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text = text[:cut] + "… [truncated]"
		}
		if total+len(text) > maxAllInstructions {
			omitted = append(omitted, fmt.Sprintf("%q", in.Server))
			continue
		}
		total += len(text)
		// Every line quoted: a server's text cannot start a section that
		// seems to be another server's.
		fmt.Fprintf(&b, "\n\n## Server %q says:\n> %s", in.Server, strings.ReplaceAll(text, "\n", "\n> "))
	}
	if len(omitted) > 0 {
		fmt.Fprintf(&b, "\n\n(The instructions of %s are left out: together they exceed %d bytes.)", strings.Join(omitted, ", "), maxAllInstructions)
	}
	return b.String()
}

// currentInstructions is receiving middleware that answers initialize and
// server/discover with the instructions as they are now: servers started
// on first use or reloaded bring theirs after the gateway was built.
func (g *Gateway) currentInstructions(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			// A refused handshake has no result to fill: go-sdk hands a
			// typed nil on with the error.
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			r.Instructions = instructions(g.view())
		case *mcp.DiscoverResult:
			r.Instructions = instructions(g.view())
		}
		return res, err
	}
}

// add registers one entry, turning go-sdk's panic on an entry it cannot
// serve (a malformed schema, a relative URI) into a logged skip, so one bad
// upstream entry never takes the gateway down.
func (g *Gateway) add(kind, name string, register func()) {
	defer func() {
		if r := recover(); r != nil {
			g.log.Warn("entry skipped: go-sdk cannot serve it", "kind", kind, "name", name, "reason", fmt.Sprint(r))
		}
	}()
	register()
}

// Sync brings the served lists in line with the host's aggregate: entries
// that appeared are added, ones that changed are replaced, ones that went
// away are removed; go-sdk then sends list_changed to the clients. New
// calls it; wire it as host.Options.OnChange so upstream list changes
// reach clients once the registry has reconciled.
func (g *Gateway) Sync() {
	g.syncMu.Lock()
	g.syncTools()
	g.syncResources()
	g.syncPrompts()
	g.syncMu.Unlock()
	g.syncProfiles()
}

// registered records what is registered on the go-sdk server, by key, with
// a fingerprint of its definition, so that Sync touches only what changed.
type registered map[string]string

// diff registers the desired entries that are new or changed (add) and
// returns the keys that went away.
func (r registered) diff(desired map[string]string, add func(key string)) (gone []string) {
	for key, fp := range desired {
		if r[key] != fp {
			add(key)
			r[key] = fp
		}
	}
	for key := range r {
		if _, ok := desired[key]; !ok {
			gone = append(gone, key)
			delete(r, key)
		}
	}
	return gone
}

// nopWriteCloser is an io.WriteCloser whose Close does nothing.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func fingerprint(v ...any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ServeStdio serves the gateway on in and out (a process's stdin and
// stdout) until ctx is done or the client closes in (both clean exits:
// nil). Neither is closed: the caller owns them.
func (g *Gateway) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	err := g.server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	if ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// The defaults of HTTPOptions' connection and session limits, for a
// command's flags.
const (
	DefaultIdleTimeout          = mcphttp.DefaultIdleTimeout
	DefaultBodyTimeout          = mcphttp.DefaultBodyTimeout
	DefaultMaxSessions          = mcphttp.DefaultMaxSessions
	DefaultMaxSessionsPerClient = mcphttp.DefaultMaxSessionsPerClient
)

// HTTPOptions configure ServeHTTP.
type HTTPOptions struct {
	Front frontdoor.Options // path, token, allowed hosts, body cap, readiness
	Ready func(net.Addr)    // called once listening; may be nil
	// Grace is how long the calls in flight may finish once ctx is done;
	// zero means mcphttp.DefaultShutdownTimeout.
	Grace time.Duration
	// Auth, when set, authenticates callers as named clients, JWTs and
	// the single static token, in the front door's place for the token
	// (see auth.go); Front.Token and Front.NoAuth must then be empty.
	Auth *AuthOptions
	// IdleTimeout and BodyTimeout bound a kept-alive connection with no
	// request and the reading of a request's body; zero means
	// mcphttp.DefaultIdleTimeout (2 minutes) and
	// mcphttp.DefaultBodyTimeout (1 minute). See mcphttp.Options.
	IdleTimeout, BodyTimeout time.Duration
	// MaxPendingConns caps the connections that have not authenticated;
	// the oldest is closed for a new one past it (frontdoor.ConnLimit).
	// Zero means frontdoor.DefaultMaxPendingConns (64).
	MaxPendingConns int
	// MaxSessions and MaxSessionsPerClient cap the legacy sessions of the
	// endpoint and its profiles together, and those of one caller (a named
	// client, a JWT's subject, the static token): past a client's cap its
	// idlest session is closed, past the global cap a new session gets 503
	// with Retry-After. Zero means mcphttp.DefaultMaxSessions (4096) and
	// mcphttp.DefaultMaxSessionsPerClient (256).
	MaxSessions, MaxSessionsPerClient int
}

// ServeHTTP serves the gateway over Streamable HTTP on ln, both protocol
// eras on one endpoint behind the front door, until ctx is done; then it
// shuts down gracefully (see mcphttp.Serve).
func (g *Gateway) ServeHTTP(ctx context.Context, ln net.Listener, opts HTTPOptions) error {
	// Profiles are served at Path/NAME.
	opts.Front.SubPaths = true
	if opts.Front.OAuthCallback == nil {
		// Logins' redirects come back here when the host was given
		// its public URL (host.OAuthOptions.CallbackURL).
		if cb := hostlink.Of(g.host).OAuthCallback(); cb != nil {
			opts.Front.OAuthCallback = cb
		}
	}
	if opts.Auth != nil {
		if err := g.authFront(&opts.Front, opts.Auth, ln.Addr()); err != nil {
			ln.Close()
			return err
		}
	}
	// Check the front door's options before serving: Middleware cannot fail.
	if _, err := frontdoor.New(http.NotFoundHandler(), opts.Front); err != nil {
		ln.Close()
		return err
	}
	var onEvict func()
	if refuse := opts.Front.OnRefuse; refuse != nil {
		onEvict = func() { refuse(frontdoor.RefusedConnEvicted) }
	}
	conns, err := frontdoor.NewConnLimit(opts.MaxPendingConns, onEvict)
	if err != nil {
		ln.Close()
		return err
	}
	path := opts.Front.Path
	if path == "" {
		path = frontdoor.DefaultPath
	}
	mw := func(endpoint http.Handler) http.Handler {
		h, err := frontdoor.New(g.mayUse(path, endpoint), opts.Front)
		if err != nil {
			panic("gateway: front door options changed after validation: " + err.Error())
		}
		return h
	}
	mopts := &mcphttp.Options{Path: opts.Front.Path, Middleware: mw, Ready: opts.Ready, ShutdownTimeout: opts.Grace,
		IdleTimeout: opts.IdleTimeout, BodyTimeout: opts.BodyTimeout, ConnContext: conns.ConnContext}
	limits := mcphttp.NewSessionLimits(&mcphttp.SessionLimitOptions{Max: opts.MaxSessions, PerClient: opts.MaxSessionsPerClient,
		Client: sessionClient})
	mopts.Sub = func(name string) *mcphttp.Handler { return g.profileHandler(name, limits) }
	return mcphttp.Serve(ctx, conns.Listener(ln), mcphttp.NewHandler(g.server, &mcphttp.HandlerOptions{Logger: g.log, Sessions: limits}), mopts)
}
