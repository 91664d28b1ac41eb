package server

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/mcphttp"
)

// Defaults of [Options].
const (
	// DefaultPageSize is how many items one page of a list holds.
	DefaultPageSize = 100
	// DefaultPath is where the Streamable HTTP endpoint is served.
	DefaultPath = mcphttp.DefaultPath
	// DefaultListTTL is the caching hint of lists and server/discover.
	DefaultListTTL = 5 * time.Minute
	// DefaultShutdownTimeout is how long [Server.Serve] lets the calls in
	// flight finish once its ctx is done.
	DefaultShutdownTimeout = mcphttp.DefaultShutdownTimeout
)

// Cache is a caching hint for 2026-07-28 clients (SEP-2549): how long a
// client may keep a result, and whether a shared cache may keep it.
type Cache struct {
	TTL time.Duration
	// Private is true when the result may differ per user (cacheScope
	// "private"); shared caches must not keep it.
	Private bool
}

func (c Cache) apply(dst *mcp.Cacheable) {
	dst.TTLMs = int(c.TTL.Milliseconds())
	dst.CacheScope = "public"
	if c.Private {
		dst.CacheScope = "private"
	}
}

// Options configure a [Server]. Nil means defaults.
type Options struct {
	// Title is the server's human-readable name in serverInfo; default none.
	Title string
	// Instructions tell the client's model what the server is for; default none.
	Instructions string
	// Logger receives go-sdk's logs and every tool error (see [Error]);
	// default: discard.
	Logger *slog.Logger
	// PageSize is the page size of the four lists; default DefaultPageSize.
	PageSize int
	// ProtocolVersions restricts the protocol versions served; default all
	// that go-sdk knows (2026-07-28 and the legacy 2024-11-05…2025-11-25).
	// A list holding only legacy versions makes modern HTTP requests get a
	// plain 400, so that dual-era clients fall back to initialize.
	ProtocolVersions []string
	// ListCache is the caching hint of the four lists and server/discover;
	// default DefaultListTTL, public.
	ListCache *Cache
	// ReadCache is the caching hint of resources/read, unless the
	// resource sets its own; default 0, private.
	ReadCache *Cache
	// Completion, if set, answers completion/complete and makes the
	// server advertise completions.
	Completion func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error)
	// Subscribe and Unsubscribe, if set, are called on legacy
	// resources/subscribe and resources/unsubscribe, and make the server
	// advertise resources.subscribe. Notify subscribers with
	// [Server.ResourceUpdated].
	Subscribe   func(context.Context, *mcp.SubscribeRequest) error
	Unsubscribe func(context.Context, *mcp.UnsubscribeRequest) error
	// Path is where [Server.Serve] serves Streamable HTTP; default DefaultPath.
	Path string
	// SessionTimeout closes legacy HTTP sessions idle this long; default
	// 10 minutes.
	SessionTimeout time.Duration
	// ShutdownTimeout is how long [Server.Serve] lets the calls in flight
	// finish once its ctx is done, before it cancels them; default
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// DisableLocalhostProtection turns off go-sdk's DNS-rebinding guard
	// (a loopback listener refuses non-loopback Host headers); default on.
	DisableLocalhostProtection bool
}

// Server is an MCP server: register tools, resources, templates and
// prompts, then serve it with [Server.ServeStdio], [Server.Serve] or
// [Server.Handler]. Its methods are safe for concurrent use, and features
// may be added or removed while it serves (clients are notified).
type Server struct {
	mcp    *mcp.Server // fixed at creation
	opts   Options     // defaults filled
	logger *slog.Logger
	http   *mcphttp.Handler // fixed at creation

	mu        sync.Mutex
	resources map[string]*resourceEntry // by URI
	templates []*templateEntry          // most specific first
}

// New returns a server that reports itself as name and version.
func New(name, version string, opts *Options) *Server {
	s := &Server{resources: map[string]*resourceEntry{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Logger == nil {
		s.opts.Logger = slog.New(slog.DiscardHandler)
	}
	s.logger = s.opts.Logger
	if s.opts.PageSize <= 0 {
		s.opts.PageSize = DefaultPageSize
	}
	if s.opts.Path == "" {
		s.opts.Path = DefaultPath
	}
	if s.opts.SessionTimeout <= 0 {
		s.opts.SessionTimeout = mcphttp.DefaultSessionTimeout
	}
	if s.opts.ShutdownTimeout <= 0 {
		s.opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if s.opts.ListCache == nil {
		s.opts.ListCache = &Cache{TTL: DefaultListTTL}
	}
	if s.opts.ReadCache == nil {
		s.opts.ReadCache = &Cache{Private: true}
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: name, Title: s.opts.Title, Version: version}, &mcp.ServerOptions{
		Instructions:              s.opts.Instructions,
		Logger:                    s.logger,
		PageSize:                  s.opts.PageSize,
		CompletionHandler:         s.opts.Completion,
		SubscribeHandler:          s.opts.Subscribe,
		UnsubscribeHandler:        s.opts.Unsubscribe,
		SupportedProtocolVersions: s.opts.ProtocolVersions,
		SetCacheable:              s.setCacheable,
	})
	// Added after NewServer, so it wraps go-sdk's multi-round-trip
	// middleware and sees its errors too.
	s.mcp.AddReceivingMiddleware(s.middleware)
	s.mcp.AddSendingMiddleware(clientErrors)
	// After the middleware above, so that the handler's own (which cancels
	// the calls of legacy sessions when Serve's deadline passes) wraps it.
	s.http = mcphttp.NewHandler(s.mcp, &mcphttp.HandlerOptions{
		Versions:                   s.versions(),
		SessionTimeout:             s.opts.SessionTimeout,
		Logger:                     s.logger,
		DisableLocalhostProtection: s.opts.DisableLocalhostProtection,
	})
	return s
}

// MCP returns the underlying go-sdk server, for what this package does not
// wrap (middleware, ResourceUpdated, sessions). Features must be added
// through this package, not directly.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// versions returns the protocol versions served.
func (s *Server) versions() []string {
	if len(s.opts.ProtocolVersions) > 0 {
		return slices.Clone(s.opts.ProtocolVersions)
	}
	return mcp.SupportedProtocolVersions()
}

// setCacheable sets the caching hints of server/discover and the four
// lists; go-sdk calls it with its lock held, so it must not call back.
func (s *Server) setCacheable(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	if _, ok := req.(*mcp.ReadResourceRequest); ok {
		return // set by read
	}
	s.opts.ListCache.apply(c)
}

// ResourceUpdated notifies the clients subscribed to uri that it changed.
func (s *Server) ResourceUpdated(ctx context.Context, uri string) error {
	return s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
}

// middleware is the server's receiving middleware: it serves
// resources/read (fixed resources first, then templates) and maps every
// error to a JSON-RPC error with a real code.
func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		if method == "resources/read" {
			if r, ok := req.(*mcp.ReadResourceRequest); ok {
				res, err = s.read(withCall(ctx, req), r)
			} else {
				res, err = next(ctx, method, req)
			}
		} else {
			res, err = next(ctx, method, req)
		}
		if err == nil || ctx.Err() != nil {
			return res, err
		}
		if je, ok := decisive(err).(*jsonrpc.Error); ok {
			return res, je // the server's own, from go-sdk or a handler
		}
		if method == "tools/call" && !isProtocolError(err) {
			// go-sdk's multi-round-trip middleware could not get the
			// client's input for a legacy session (a *ClientError): a tool
			// error, as if the tool had asked and failed.
			var out mcp.CallToolResult
			out.SetError(err)
			logError(ctx, s.logger, "tool", toolName(req), err)
			return &out, nil
		}
		return nil, rpcError(err)
	}
}

func toolName(req mcp.Request) string {
	if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
		return p.Name
	}
	return ""
}

// recovered turns a handler panic into an internal error.
func (s *Server) recovered(ctx context.Context, what, name string, errp *error) {
	if r := recover(); r != nil {
		err := fmt.Errorf("panic in %s %q: %v", what, name, r)
		s.logger.ErrorContext(ctx, "mcp: handler panicked", what, name, "panic", fmt.Sprint(r))
		*errp = Internal(err, "internal error in %s %q", what, name)
	}
}
