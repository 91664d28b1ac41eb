// Package server is a framework for writing MCP servers in Go: declare
// tools with typed parameters and results, resources, families of
// resources and prompts, and serve them over stdio or Streamable HTTP to
// clients of both protocol eras (the session-based 2024-11-05…2025-11-25
// and the sessionless 2026-07-28).
//
// It is built on go-sdk (github.com/modelcontextprotocol/go-sdk), which
// speaks the protocol; this package adds schema inference and validation,
// URI template matching, one error mapping, request context helpers, era
// routing on HTTP and stdout protection on stdio. Of Switchboard it imports
// only two packages internal to this module, which come with it: the era of a
// protocol version (internal/era) and the Streamable HTTP endpoint with its
// graceful shutdown (internal/mcphttp), the one the gateway serves through
// too. Nothing else (its tests use the test kit), so that anyone can use
// it.
//
// # A server in five steps
//
// 1. Create the server:
//
//	s := server.New("weather", "1.0.0", &server.Options{
//		Instructions: "Forecasts for any city.",
//	})
//
// 2. Add a tool. Its arguments are a struct; field tags give the JSON
// names and the descriptions that reach the model, and the arguments are
// validated against the inferred schema before the handler runs:
//
//	type ForecastIn struct {
//		City string `json:"city" jsonschema:"the city, e.g. Lisbon"`
//		Days int    `json:"days,omitempty" description:"1 to 7; default 1"`
//	}
//	type Forecast struct {
//		City string  `json:"city"`
//		High float64 `json:"high"`
//	}
//
//	func GetForecast(ctx context.Context, in ForecastIn) (Forecast, error) { … }
//
//	server.MustAddTool(s, server.Tool{Description: "Forecast for a city."}, GetForecast)
//
// The tool is named get_forecast, after the function (set Tool.Name to
// choose). Forecast is its declared result: it is advertised as the
// output schema, validated after the handler runs, and sent as
// structuredContent and as JSON text. A result that is not an object (a
// number, a list) is advertised as {"result": schema} and sent as
// {"result": value}. A tool whose result type is [Content] has no declared
// result and returns content blocks (text, images, audio, resource links)
// that pass through verbatim.
//
// 3. Add resources: fixed ones, and templates for families, whose
// variables are validated against a struct (a bad one is -32602):
//
//	s.AddResource(server.Resource{URI: "weather://readme", Name: "readme"},
//		func(ctx context.Context) (*server.Contents, error) {
//			return &server.Contents{Text: "…"}, nil // text/plain by default
//		})
//
//	type CityVars struct {
//		ID int `json:"id"`
//	}
//	server.AddTemplate(s, server.ResourceTemplate{URITemplate: "weather://cities/{id}", Name: "city"},
//		func(ctx context.Context, uri string, v CityVars) (*server.Contents, error) {
//			return nil, nil // nil: not found
//		})
//
// Templates support {var} (one path segment, percent-decoded) and {+var}
// (greedy, "/" included, as is); any other RFC 6570 form is an error at
// registration. A fixed resource always wins over a template matching
// the same URI.
//
// 4. Add prompts, with arguments from a struct:
//
//	server.MustAddPrompt(s, server.Prompt{Name: "plan_trip"},
//		func(ctx context.Context, a struct {
//			City string `json:"city"`
//		}) ([]*mcp.PromptMessage, error) {
//			return []*mcp.PromptMessage{server.UserText("Plan a trip to " + a.City)}, nil
//		})
//
// 5. Serve: s.ServeStdio(ctx) for a local client, or s.ListenAndServe(ctx,
// "127.0.0.1:8080", nil) for Streamable HTTP at /mcp (or mount
// s.Handler() yourself). Both serve both eras, deciding per request.
//
// # Transports
//
// Over Streamable HTTP a POST is answered application/json, in both eras.
// It becomes a text/event-stream when the request's _meta carries a
// progress token (progress, then the result) and, on 2026-07-28, a log
// level; a legacy call is also streamed when the server sends something in
// its course (a log message, or a sampling or elicitation request to the
// client), which then precedes the result on the call's own stream (see
// [Server.Handler] for why go-sdk's JSONResponse option is not used).
// [Server.Serve] shuts down gracefully when its ctx is done: calls in
// flight finish within Options.ShutdownTimeout, then are cancelled.
//
// Over stdio, stray writes to stdout go to stderr while [Server.ServeStdio]
// runs, so that they cannot corrupt the protocol stream. On Linux this is
// done on file descriptor 1 itself, which covers writes that bypass
// os.Stdout (cgo, a dependency's raw writes, child processes); elsewhere
// only os.Stdout is redirected.
//
// # Handlers' context
//
// A handler's ctx is cancelled when the client cancels the request, and
// carries the request: [Headers] (HTTP), [Caller] (the authenticated
// caller the transport attached), [ProtocolVersion], [ClientInfo] and
// [ClientCapabilities] (2026-07-28 requests only), [ProgressReporter]
// (nil unless the client asked for progress; [Progress.Token] is the
// client's token), [Log], and for the multi-round-trip flow
// [InputResponses] and [RequestState]. A prompt handler may set its
// result's description with [SetPromptDescription].
//
// # Errors
//
// An ordinary error from a tool handler is a tool execution error
// (isError: true, the message as text), so the model can correct itself;
// invalid arguments are too. The typed errors of this package become
// JSON-RPC errors: [Unauthorized] -31001, [Forbidden] -31003, [NotFound]
// and [InvalidParams] -32602, [Internal] -32603; a *jsonrpc.Error of the
// server's own passes as it is. The failure of a request the server sent
// to the client (sampling, elicitation, roots) is a [ClientError]: an
// ordinary error, even when the client answered with a JSON-RPC error,
// whose code is the client's and never goes out as the server's. A result
// that breaks its own declared schema is -32603 and is logged as a server
// bug. Nothing is ever answered with code 0. A
// handler that panics is recovered: its request is answered -32603, the
// panic is logged at error, and the server goes on serving. Every tool
// error is logged: an ordinary one (a tool execution error, part of the
// conversation with the model) at info, refusals (status below 500) at
// warn, the rest at error with the whole chain. A handler that needs input from the client
// (sampling, elicitation, roots) returns [NeedInput]; see [InputRequired].
//
// # Eras and caching
//
// [Server.Handler] says how HTTP requests are routed. 2026-07-28 results
// carry caching hints: lists and server/discover ttlMs 300000, public;
// resources/read 0, private (Options.ListCache, Options.ReadCache,
// Resource.Cache). Lists are paginated, 100 per page by default.
package server
