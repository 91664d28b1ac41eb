package demo

import (
	"log/slog"
	"time"

	"github.com/switchboard-mcp/switchboard/server"
)

// ImplementationName is the name the demo server reports in serverInfo.
const ImplementationName = "switchboard-demo"

// instructions is sent to clients in the initialize (or server/discover)
// result. Hosts typically show it to the model, so it is short and says what
// the server is for and what is fake about it.
const instructions = `This is Switchboard's demo MCP server. It exists to show and test what an MCP host handles: ` +
	`echo and add are simple tools, slow reports progress and can be cancelled, image returns a PNG, ` +
	`weather returns structured content (its data is made up and deterministic, not a real forecast), ` +
	`and fail always returns a tool error. Read demo://readme for an overview, demo://notes/{id} for notes, ` +
	`and use the review prompt to ask for a code review. Nothing here touches the network, files or environment.`

// Options configures the demo server. The zero value (or nil) is valid.
type Options struct {
	// Logger receives the server's logs, tool errors included. If nil, logs
	// are discarded.
	Logger *slog.Logger
	// ShutdownTimeout is how long the server's Serve lets the calls in
	// flight finish once its ctx is done; 0 means
	// server.DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
}

// New returns the demo server, built with package server; serve it with its
// ServeStdio, Serve or Handler methods, or run its MCP() on any go-sdk
// transport. version is reported in serverInfo. opts may be nil.
func New(version string, opts *Options) *server.Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := server.New(ImplementationName, version, &server.Options{
		Title:           "Switchboard demo server",
		Instructions:    instructions,
		Logger:          o.Logger,
		Path:            EndpointPath,
		ShutdownTimeout: o.ShutdownTimeout,
	})
	addTools(s)
	addResources(s)
	addPrompts(s)
	return s
}
