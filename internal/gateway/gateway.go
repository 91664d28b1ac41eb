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
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
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

// subscription is one upstream subscription and the clients that want it.
type subscription struct {
	server  string
	clients map[*mcp.ServerSession]bool
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
		Instructions: instructions(h),
		PageSize:     opts.PageSize,
		Logger:       log,
		// Advertise what the aggregate has: tools, resources and prompts
		// are added by go-sdk as they are registered; logging because
		// upstream log messages are forwarded to the caller.
		Capabilities:       &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
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

// instructions merges the servers' instructions (host.Instructions), each
// attributed and capped, after the gateway's own.
func instructions(h *host.Host) string {
	var b strings.Builder
	b.WriteString("Switchboard gateway: the tools, resources and prompts of several MCP servers. " +
		"Tool and prompt names are <server prefix>__<name>.")
	names := map[string]bool{}
	for _, t := range h.ModelTools() {
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
	for _, in := range h.Instructions() {
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
			r.Instructions = instructions(g.host)
		case *mcp.DiscoverResult:
			r.Instructions = instructions(g.host)
		}
		return res, err
	}
}

// heldBack is receiving middleware for the calls of tools that are not
// registered, which go-sdk answers "unknown tool"; the host knows better.
// A tool of a server still starting (its prefix names it, its tools are
// not known yet) waits for that server (host.Await), and is called once
// the server's tools are registered; a server that fails to start is an
// isError result saying why. A tool that a re-discovery of a stale
// catalogue finds is called, when the model is given it (not deferred). A tool held back because its definition
// changed since it was approved, or because its metadata matches an
// injection pattern and its server is not trusted, answers
// definition_changed or held_injection: an isError result naming the tool
// and the command that approves it.
func (g *Gateway) heldBack(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var rpc *jsonrpc.Error
		if method != "tools/call" || !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
			return res, err
		}
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || call.Params == nil {
			return res, err
		}
		refused := func(err error) {
			g.host.Refused(ctx, call.Params.Name, call.Params.Arguments, g.callOptions(call.Session, call.Extra), err)
		}
		// Find, not Tool: a name missing from a catalogue that may be
		// stale (saved, or from an earlier connection) has its server
		// discovered again, once. A tool of a server still starting waits
		// for that server, then is looked up again. A tool found so is
		// called now (the change notification registers it for the calls
		// after); a held one is refused like any other, and one of a
		// server that needs a login says so (its tools are unknown until
		// then).
		t, herr := g.host.Find(ctx, call.Params.Name)
		if server := g.host.Starting(herr); server != "" {
			if aerr := g.host.Await(ctx, server); aerr != nil {
				refused(aerr)
				return g.toClient(ctx, failed{kind: toolCall, name: call.Params.Name, id: call.Params.Name, server: server}, aerr)
			}
			g.Sync() // OnChange may not have run yet
			t, herr = g.host.Find(ctx, call.Params.Name)
		}
		if herr == nil && !g.scope().hasTool(t) {
			// Outside the profile: unknown, as go-sdk said.
			refused(fault.New(fault.CodeNotFound, t.Server, "", errors.New("not in the profile")))
			return res, err
		}
		if herr == nil {
			// Only a tool the model is given: a deferred one waits for a
			// tool_search to find it.
			if !slices.ContainsFunc(g.host.ModelTools(), func(m host.Tool) bool { return m.Name == t.Name }) {
				refused(fault.New(fault.CodeNotFound, t.Server, "", errors.New("not given to the model")))
				return res, err
			}
			return g.callTool(t)(ctx, call)
		}
		refused(herr)
		var fe *fault.Error
		if !errors.As(herr, &fe) || (fe.Code != fault.CodeDefinitionChanged && fe.Code != fault.CodeHeldInjection && fe.Code != fault.CodeNeedsLogin) {
			return res, err
		}
		return g.toClient(ctx, failed{kind: toolCall, name: call.Params.Name, id: call.Params.Name, server: fe.Server}, herr)
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

func fingerprint(v ...any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (g *Gateway) syncTools() {
	tools := map[string]host.Tool{}
	desired := map[string]string{}
	scope := g.scope()
	for _, t := range g.host.ModelTools() {
		if !scope.hasTool(t) {
			continue
		}
		if !objectSchema(t.InputSchema) {
			g.log.Warn("tool skipped: its input schema is not an object schema", "tool", t.ID)
			continue
		}
		tools[t.Name] = t
		desired[t.Name] = fingerprint(t)
	}
	gone := g.tools.diff(desired, func(name string) {
		t := tools[name]
		tool := &mcp.Tool{
			Name:        t.Name,
			Title:       t.Title,
			Description: t.Description,
			InputSchema: t.InputSchema,
			Annotations: t.Annotations,
		}
		if len(t.OutputSchema) > 0 && objectSchema(t.OutputSchema) {
			tool.OutputSchema = t.OutputSchema
		}
		g.add("tool", t.ID, func() { g.server.AddTool(tool, g.callTool(t)) })
	})
	if len(gone) > 0 {
		g.server.RemoveTools(gone...)
	}
}

// objectSchema reports whether raw is a JSON object with "type": "object",
// which go-sdk requires of a tool's schemas.
func objectSchema(raw json.RawMessage) bool {
	var s struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(raw, &s) == nil && s.Type == "object"
}

func (g *Gateway) callTool(t host.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.Params.Arguments
		if string(args) == "null" {
			args = nil
		}
		p := g.newPeer(ctx, req.Session, req.ClientCapabilities(), req.ProtocolVersion())
		// The quota is per client session; sessionless (2026-07-28 and
		// stdio) clients share the gateway's.
		opts := g.callOptions(req.Session, req.Extra)
		opts.Peer, opts.RawOnly, opts.Confirm = p, true, g.confirmer(p)
		parked, err := g.retryInput(opts, t.ID, req.Params.InputResponses, req.Params.RequestState)
		if err != nil {
			return nil, err
		}
		if tok := req.Params.GetProgressToken(); tok != nil {
			opts.Progress = func(pr host.Progress) {
				// Sent with the handler's context, so that over HTTP it
				// travels on this request's stream.
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: tok, Progress: pr.Progress, Total: pr.Total, Message: pr.Message,
				})
				if err != nil {
					g.log.Debug("progress not forwarded", "tool", t.ID, "err", err)
				}
			}
		}
		if !p.modern() {
			res, err := g.host.Call(ctx, t.ID, args, opts)
			return g.toolResult(ctx, t, res, err)
		}
		// A 2026-07-28 client: the call runs in the background, so that a
		// legacy upstream's questions can be parked and put to the client
		// (park.go); a retry carrying an answer resumes the parked call.
		var pc *parkedCall
		if parked != "" {
			if pc, err = g.resume(parked, req.Params.InputResponses); err != nil {
				return nil, err
			}
		} else {
			pc = g.startParked(ctx, p, func(bg context.Context) (*host.Result, error) {
				return g.host.Call(bg, t.ID, args, opts)
			})
		}
		out, ask, err := g.await(ctx, t.ID, pc)
		if out == nil {
			return ask, err
		}
		return g.toolResult(ctx, t, out.res, out.err)
	}
}

// toolResult turns the host's answer into the tool call's result.
func (g *Gateway) toolResult(ctx context.Context, t host.Tool, res *host.Result, err error) (*mcp.CallToolResult, error) {
	var need *host.InputRequired
	if errors.As(err, &need) {
		// The upstream asks; so does the gateway, for its client.
		return &mcp.CallToolResult{InputRequests: named(t.Server, need.Requests), RequestState: g.states.seal(t.ID, need.State)}, nil
	}
	if err != nil {
		return g.toClient(ctx, failed{kind: toolCall, name: t.Name, id: t.ID, server: t.Server}, err)
	}
	return spliceResult(ctx, res.Raw, res.IsError), nil
}

// protocolMetaPrefix begins the _meta keys the protocol owns.
const protocolMetaPrefix = "io.modelcontextprotocol/"

// stripProtocolMeta removes the keys go-sdk and the protocol own (the
// upstream's serverInfo, for one): the gateway speaks for itself.
func stripProtocolMeta(m mcp.Meta) {
	for k := range m {
		if strings.HasPrefix(k, protocolMetaPrefix) {
			delete(m, k)
		}
	}
}

// errCancelled answers a request the client cancelled.
var errCancelled = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client cancelled the call"}

// failed names a request that failed, for toClient.
type failed struct {
	kind   requestKind
	name   string // as the client named it: the tool's or prompt's name, the URI
	id     string // the canonical ID, for the log
	server string
}

type requestKind int

const (
	toolCall requestKind = iota
	promptGet
	resourceRead
	completion
)

// toClient is the gateway's one mapping from a failed request to what its
// client gets, keeping MCP's two error channels apart. It reads fault codes
// (host and upstream classified the failure); it never looks at the cause.
//
//   - The client cancelled (or, 2026-07-28, went away: then nothing is
//     sent): errCancelled, so that where go-sdk still answers, the answer
//     says what happened rather than code 0.
//   - An upstream's JSON-RPC error addressed to the client (a capability it
//     did not declare, a URL elicitation it must complete) passes as it is.
//   - not_found: -32002 for a resource URI, -32602 for a name (a tool, a
//     prompt, a completion's reference); invalid_input: -32602.
//   - Any other failure of a tool call is a result with isError: the text
//     names the code, and _meta[ErrorMetaKey] carries the code, the server
//     and whether a retry may help (and, for needs_login, the command
//     that logs in). Of any other request: -32603.
//   - A failure that quotes a server's own output (fault.Private: the
//     stderr of a server that failed to start) is sent as a neutral
//     message naming the server; the whole of it goes to the log, and the
//     host's status keeps it (`switchboard servers -v`).
func (g *Gateway) toClient(ctx context.Context, r failed, err error) (*mcp.CallToolResult, error) {
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil, errCancelled
	}
	if rpc := clientFacing(err); rpc != nil {
		return nil, rpc
	}
	code := fault.CodeOf(err)
	switch code {
	case fault.CodeNotFound:
		if r.kind == resourceRead {
			return nil, mcp.ResourceNotFoundError(r.name)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	case fault.CodeInvalidInput:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	case "":
		code = fault.CodeServerError
	}
	msg := err.Error()
	if fault.IsPrivate(err) {
		// The server's own output (its stderr) is the operator's: it is in
		// the log and in `switchboard servers -v`, never sent to a client.
		msg = fmt.Sprintf("server %q failed; the reason is in the gateway's log and in `switchboard servers -v`", serverOf(r, err))
	}
	if r.kind != toolCall {
		if fault.IsPrivate(err) {
			g.log.Warn("upstream request failed", "request", r.id, "code", code, "err", err)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
	}
	g.log.Warn("upstream call failed", "tool", r.id, "code", code, "err", err)
	meta := map[string]any{"code": string(code), "server": r.server, "retryable": code.Retryable()}
	if code == fault.CodeNeedsLogin {
		// What a person runs where the gateway's configuration lives.
		meta["command"] = "switchboard login " + serverOf(r, err)
	}
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Switchboard could not complete %s (%s): %s", r.name, code, msg)}},
		Meta:    mcp.Meta{ErrorMetaKey: meta},
	}, nil
}

// serverOf names the server a failed request went to: the request's, or
// the failure's when the request did not say.
func serverOf(r failed, err error) string {
	var fe *fault.Error
	if r.server == "" && errors.As(err, &fe) {
		return fe.Server
	}
	return r.server
}

// protocolError maps the failure of a request that has no result-level
// error channel (resources, prompts, completions) through toClient.
func (g *Gateway) protocolError(ctx context.Context, r failed, err error) error {
	_, rpc := g.toClient(ctx, r, err)
	return rpc
}

func (g *Gateway) syncResources() {
	scope := g.scope()
	resources := map[string]host.Resource{}
	desired := map[string]string{}
	for _, r := range g.host.Resources() {
		if !scope.hasServer(r.Server) {
			continue
		}
		if first, dup := resources[r.URI]; dup {
			g.log.Warn("resource URI offered by several servers; the first in server-name order serves it",
				"uri", r.URI, "served_by", first.Server, "hidden", r.Server)
			continue
		}
		resources[r.URI] = r
		desired[r.URI] = fingerprint(r)
	}
	gone := g.resources.diff(desired, func(uri string) {
		r := resources[uri]
		res := &mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, Size: r.Size}
		if res.Name == "" {
			res.Name = r.URI
		}
		g.add("resource", r.ID, func() { g.server.AddResource(res, g.read(r.Server)) })
	})
	if len(gone) > 0 {
		g.server.RemoveResources(gone...)
	}

	templates := map[string]host.Template{}
	desired = map[string]string{}
	for _, t := range g.host.Templates() {
		if !scope.hasServer(t.Server) {
			continue
		}
		if first, dup := templates[t.URITemplate]; dup {
			g.log.Warn("resource template offered by several servers; the first in server-name order serves it",
				"template", t.URITemplate, "served_by", first.Server, "hidden", t.Server)
			continue
		}
		templates[t.URITemplate] = t
		desired[t.URITemplate] = fingerprint(t)
	}
	gone = g.templates.diff(desired, func(key string) {
		t := templates[key]
		tmpl := &mcp.ResourceTemplate{URITemplate: t.URITemplate, Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType}
		if tmpl.Name == "" {
			tmpl.Name = t.URITemplate
		}
		g.add("template", t.ID, func() { g.server.AddResourceTemplate(tmpl, g.read(t.Server)) })
	})
	if len(gone) > 0 {
		g.server.RemoveResourceTemplates(gone...)
	}
}

// read returns a handler reading URIs from server.
func (g *Gateway) read(server string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		res, err := g.host.ReadResource(ctx, server+":"+req.Params.URI)
		if err != nil {
			return nil, g.protocolError(ctx, failed{kind: resourceRead, name: req.Params.URI, id: server + ":" + req.Params.URI, server: server}, err)
		}
		stripProtocolMeta(res.Result.Meta)
		return res.Result, nil
	}
}

func (g *Gateway) syncPrompts() {
	prompts := map[string]host.Prompt{}
	desired := map[string]string{}
	scope := g.scope()
	for _, p := range g.host.Prompts() {
		if !scope.hasServer(p.Server) {
			continue
		}
		prompts[p.ModelName] = p
		desired[p.ModelName] = fingerprint(p)
	}
	gone := g.prompts.diff(desired, func(name string) {
		p := prompts[name]
		prompt := &mcp.Prompt{Name: p.ModelName, Title: p.Title, Description: p.Description, Arguments: p.Arguments}
		g.add("prompt", p.ID, func() { g.server.AddPrompt(prompt, g.getPrompt(p)) })
	})
	if len(gone) > 0 {
		g.server.RemovePrompts(gone...)
	}
}

func (g *Gateway) getPrompt(p host.Prompt) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		opts := g.callOptions(req.Session, req.Extra)
		opts.Peer = g.newPeer(ctx, req.Session, req.ClientCapabilities(), req.ProtocolVersion())
		if parked, err := g.retryInput(opts, p.ID, req.Params.InputResponses, req.Params.RequestState); err != nil || parked != "" {
			if err == nil {
				err = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState names a tool call, not a prompt"}
			}
			return nil, err
		}
		res, err := g.host.GetPrompt(ctx, p.ID, req.Params.Arguments, opts)
		var need *host.InputRequired
		if errors.As(err, &need) {
			return &mcp.GetPromptResult{InputRequests: named(p.Server, need.Requests), RequestState: g.states.seal(p.ID, need.State)}, nil
		}
		if err != nil {
			return nil, g.protocolError(ctx, failed{kind: promptGet, name: p.ModelName, id: p.ID, server: p.Server}, err)
		}
		stripProtocolMeta(res.Result.Meta)
		return res.Result, nil
	}
}

// retryInput sets opts for a 2026-07-28 client's retry with the input it
// was asked for, and returns the ID of the parked call the input is for,
// if any. Responses count only with a requestState the gateway issued for
// this very tool. A state in the gateway's format that fails verification
// (tampered, forged, expired, or another tool's) is an error; responses
// without one, or with a state that is not the gateway's, are ignored as
// SEP-2322 asks of unrecognised information, and the call starts afresh,
// so the upstream asks again.
func (g *Gateway) retryInput(opts *host.CallOptions, id string, responses mcp.InputResponseMap, state string) (parked string, err error) {
	if !isSealed(state) {
		if len(responses) > 0 || state != "" {
			g.log.Debug("input responses without a Switchboard requestState ignored", "id", id)
		}
		return "", nil
	}
	inner, err := g.states.open(id, state)
	if err != nil {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	if p, ok := strings.CutPrefix(inner, parkPrefix); ok {
		return p, nil
	}
	opts.InputResponses, opts.RequestState = responses, inner
	return "", nil
}

// clientFacing returns an upstream's JSON-RPC error that is about the
// client's request rather than the upstream (a capability the client did
// not declare, a URL elicitation it must complete), to pass on as is.
func clientFacing(err error) *jsonrpc.Error {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) && (rpc.Code == mcp.CodeMissingRequiredClientCapabilities || rpc.Code == mcp.CodeURLElicitationRequired) {
		return rpc
	}
	return nil
}

func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	if !g.completes(req.Params) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown reference"}
	}
	res, err := g.host.Complete(ctx, req.Params)
	if err != nil {
		return nil, g.protocolError(ctx, failed{kind: completion, name: "completion/complete"}, err)
	}
	return res, nil
}

// subscribe subscribes upstream once per URI, however many clients ask.
func (g *Gateway) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	g.mu.Lock()
	defer g.mu.Unlock()
	if sub := g.subs[uri]; sub != nil {
		sub.clients[req.Session] = true
		return nil
	}
	server, err := g.host.Subscribe(ctx, uri)
	if err != nil {
		return g.protocolError(ctx, failed{kind: resourceRead, name: uri, id: uri}, err)
	}
	if !g.scope().hasServer(server) {
		if err := g.host.Unsubscribe(ctx, server, uri); err != nil {
			g.log.Debug("upstream unsubscribe failed", "uri", uri, "err", err)
		}
		return mcp.ResourceNotFoundError(uri)
	}
	g.subs[uri] = &subscription{server: server, clients: map[*mcp.ServerSession]bool{req.Session: true}}
	return nil
}

// unsubscribe ends the upstream subscription when its last client leaves.
func (g *Gateway) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	uri := req.Params.URI
	g.mu.Lock()
	defer g.mu.Unlock()
	sub := g.subs[uri]
	if sub == nil {
		return nil
	}
	delete(sub.clients, req.Session)
	if len(sub.clients) > 0 {
		return nil
	}
	delete(g.subs, uri)
	if err := g.host.Unsubscribe(ctx, sub.server, uri); err != nil {
		g.log.Debug("upstream unsubscribe failed", "uri", uri, "err", err)
	}
	return nil
}

// ResourceUpdated passes an upstream's update notification to subscribed
// clients (go-sdk sends it to the sessions that subscribed); wire it as
// host.Options.OnResourceUpdated.
func (g *Gateway) ResourceUpdated(server, uri string) {
	g.mu.Lock()
	sub := g.subs[uri]
	g.mu.Unlock()
	g.profMu.Lock()
	for _, ps := range g.profiles {
		ps.g.ResourceUpdated(server, uri)
	}
	g.profMu.Unlock()
	if sub == nil || sub.server != server || g.server == nil {
		return
	}
	if err := g.server.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
		g.log.Debug("resource update not forwarded", "uri", uri, "err", err)
	}
}

// ServeStdio serves the gateway on stdin/stdout until ctx is done or the
// client disconnects (both clean exits: nil).
func (g *Gateway) ServeStdio(ctx context.Context) error {
	err := g.server.Run(ctx, &mcp.StdioTransport{})
	if ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

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
}

// ServeHTTP serves the gateway over Streamable HTTP on ln, both protocol
// eras on one endpoint behind the front door, until ctx is done; then it
// shuts down gracefully (see mcphttp.Serve).
func (g *Gateway) ServeHTTP(ctx context.Context, ln net.Listener, opts HTTPOptions) error {
	// Profiles are served at Path/NAME.
	opts.Front.SubPaths = true
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
		Sub: g.profileHandler}
	return mcphttp.Serve(ctx, ln, mcphttp.NewHandler(g.server, &mcphttp.HandlerOptions{Logger: g.log}), mopts)
}
