package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/registry"
	"github.com/switchboard-mcp/switchboard/internal/sanitize"
)

// Caller is who makes requests through a View: the identity a gateway
// verified, the session the requests belong to and the profile they come
// through. The zero Caller is the operator, who sees everything.
type Caller struct {
	// Client is the configured name of the named client the caller
	// authenticated as, or "". Policy rules limited to clients match it.
	Client string
	// Subject is the verified identity of a caller that is no named
	// client (the gateway writes a JWT's subject as "sub:<subject>"),
	// or "".
	Subject string
	// Session is the caller's session (a legacy client's session ID), ""
	// when it has none (2026-07-28 clients, stdio).
	Session string
	// Profile is the configuration's profile the caller is limited to,
	// "" for the whole aggregate. A profile that a reload removed holds
	// nothing.
	Profile string
	// ClientName is the name the client gave itself (clientInfo.name),
	// as it declared it: recorded with its calls, cleaned and capped,
	// never used as a key.
	ClientName string
	// Token is the access token (a JWT) the caller presented, which the
	// gateway verified; "" for other callers. A server with
	// "oauth.tokenExchange" is called with a token exchanged for it
	// (CallOptions.SubjectToken). Never recorded.
	Token string
}

// identity is the caller as it authenticated, for the quota and the
// audit log: the named client, else the verified identity; "" for the
// operator and for callers that cannot be told apart (whose quota key is
// their session).
func (c Caller) identity() string {
	if c.Client != "" {
		return c.Client
	}
	return c.Subject
}

// View is what one caller may see and do: the tools a model is given
// (its own deferred tier and tool_search included), the search, the
// resources, templates and prompts, completions and subscriptions, the
// servers' instructions and the built-in tools, all limited to the
// caller's profile. Something outside the view is answered as if it did
// not exist, with the same error as a name nothing has. A View is cheap:
// make one per request or session. It reads the configuration in force
// at each call, so a reload changes what it shows.
type View struct {
	h *Host
	c Caller
}

// View returns the view of caller c.
func (h *Host) View(c Caller) *View { return &View{h: h, c: c} }

// Caller returns the view's caller.
func (v *View) Caller() Caller { return v.c }

// viewOf is the view a call's options name: their profile's.
func (h *Host) viewOf(opts *CallOptions) *View {
	if opts == nil {
		return h.View(Caller{})
	}
	return h.View(Caller{Profile: opts.Profile})
}

// options returns opts with the caller's profile and, where the caller
// names them, its client and quota key.
func (v *View) options(opts *CallOptions) *CallOptions {
	var o CallOptions
	if opts != nil {
		o = *opts
	}
	o.Profile = v.c.Profile
	if v.c.Client != "" {
		o.Caller = v.c.Client
	}
	if id := v.c.identity(); id != "" {
		o.Client = id
	}
	if v.c.Session != "" {
		o.Session = v.c.Session
	}
	if v.c.ClientName != "" {
		o.ClientName = cleanClientName(v.c.ClientName)
	}
	if v.c.Token != "" {
		o.SubjectToken = v.c.Token
	}
	return &o
}

// maxClientName caps a client's declared name where it is recorded.
const maxClientName = 128

// cleanClientName is a client's declared name as it is recorded: without
// invisible or control characters, at most maxClientName bytes.
func cleanClientName(name string) string {
	clean, _ := sanitize.Strip(name)
	clean, _ = sanitize.Text(clean, maxClientName)
	return clean
}

// scope is a profile as a filter; a nil p holds everything.
type scope struct{ p *config.Profile }

// scope returns the view's profile now.
func (v *View) scope() scope {
	if v.c.Profile == "" {
		return scope{}
	}
	if p := v.h.config().Profile(v.c.Profile); p != nil {
		return scope{p: p}
	}
	return scope{p: &config.Profile{Name: v.c.Profile, Servers: []string{}, Tools: []string{}}}
}

func (s scope) hasServer(server string) bool { return s.p == nil || s.p.HasServer(server) }

func (s scope) hasTool(t *registry.Tool) bool { return s.hasToolID(t.ID) }

// hasToolID is hasTool for a tool known by its canonical ID only (one held
// for review, which is in no snapshot).
func (s scope) hasToolID(id names.ID) bool {
	return s.p == nil || s.p.HasTool(id.Server, id.String())
}

// hasBuiltin reports whether the built-in tool called name may be on in
// the view: tool_search with tool_describe and tool_servers always (they
// reach the view only), code_run (its calls are the view's), the capability tools where the profile names no
// servers and no tool globs.
func (s scope) hasBuiltin(name string) bool {
	return s.p == nil || name == ToolSearch || name == DescribeTool || name == ListServersTool || name == CodeTool || s.p.HasTool("", name)
}

// Tools returns the tools to give the caller's model, sorted by name:
// the view's tools that are not deferred (context deferTools), or are
// kept by alwaysInclude, or were found by this view's tool_search; and
// the built-in tools that are on in the view. With
// context.outputSchemaHint, descriptions carry the tool's output schema.
// A server tool whose name is a built-in's is left out while that
// built-in is on (its canonical ID still calls it). [View.ProviderTools]
// gives the same list in an LLM provider's format.
func (v *View) Tools() []Tool { return v.h.modelTools(v) }

// Search returns the k tools of the view that best match a request in
// plain words, best first, deferred ones marked; see [Host.Search].
func (v *View) Search(ctx context.Context, query string, k int) ([]Tool, error) {
	tools, _, err := v.h.search(ctx, v, query, k, "")
	return tools, err
}

// Find describes one tool of the view, or a built-in tool that is on in
// it, by model-facing name or canonical ID. A server whose tools may have
// changed behind its saved catalogue is discovered again for a name that
// misses. A tool outside the view is not found, with the error a name no
// server has gets, and nothing outside it is discovered again or waited
// for. A deferred tool is found by its exact name.
func (v *View) Find(ctx context.Context, name string) (Tool, error) {
	if b := v.h.lookupBuiltin(v, name); b != nil {
		return b.tool, nil
	}
	t, _, err := v.lookup(ctx, name, false)
	if err != nil {
		return Tool{}, err
	}
	return toolOf(t), nil
}

// Resolve is Find for a call about to be made with args: a tool of a
// server of the view that is still starting waits for that server
// (bounded by ctx and its start-up timeout), and is looked up again. A
// server that fails to start answers with why. A name the view refuses
// (one it does not have, a held definition, a server that cannot take
// the call) is recorded for OnCall as Call records its own refusals,
// without an audit row, and the error says why: fault.CodeNotFound, or an
// error naming no server, is a tool that is not there.
func (v *View) Resolve(ctx context.Context, name string, args json.RawMessage) (Tool, error) {
	if b := v.h.lookupBuiltin(v, name); b != nil {
		return b.tool, nil
	}
	t, _, err := v.lookup(ctx, name, true)
	if err != nil {
		v.refused(ctx, name, args, err)
		return Tool{}, err
	}
	return toolOf(t), nil
}

// lookup is lookupFresh within the view, waiting for an in-view server
// that is still starting when wait is set. It reports whether it
// discovered again.
func (v *View) lookup(ctx context.Context, name string, wait bool) (*registry.Tool, bool, error) {
	h, sc := v.h, v.scope()
	if sc.p != nil {
		// Nothing outside the view is looked at: no server of it is
		// discovered again or waited for.
		snap := h.snapshot()
		if t, ok := snap.Tool(name); ok && !sc.hasTool(t) {
			return nil, false, v.noTool(name)
		} else if s := h.serverOfName(snap, name); !ok && s != nil && !sc.hasServer(s.name) {
			return nil, false, v.noTool(name)
		}
	}
	t, rediscovered, err := h.lookupFresh(ctx, name)
	if server := starting(err); wait && server != "" {
		// Its server is still starting: wait for that one, then look again.
		if err = h.await(ctx, server); err == nil {
			t, rediscovered, err = h.lookupFresh(ctx, name)
		}
	}
	if sc.p == nil {
		return t, rediscovered, err
	}
	var fe *fault.Error
	switch {
	case err == nil && !sc.hasTool(t),
		fault.CodeOf(err) == fault.CodeNotFound,
		errors.As(err, &fe) && fe.Server != "" && !sc.hasServer(fe.Server):
		return nil, rediscovered, v.noTool(name)
	case err != nil:
		// A held tool the profile leaves out is not there either.
		if id, held := h.heldID(name); held && !sc.p.HasTool(id.Server, id.String()) {
			return nil, rediscovered, v.noTool(name)
		}
	}
	return t, rediscovered, err
}

// noTool is the error of a tool name the view does not have.
func (v *View) noTool(name string) error {
	snap, sc := v.h.snapshot(), v.scope()
	var known []string
	for _, t := range snap.Tools() {
		if sc.hasTool(t) {
			known = append(known, t.Name, t.ID.String())
		}
	}
	msg := fmt.Sprintf("no tool %q", name)
	if s := registry.Suggest(name, known); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else {
		msg += "; `switchboard tools` lists them"
	}
	return fault.New(fault.CodeNotFound, "", "", errors.New(msg))
}

// Call calls a tool of the view as [Host.Call] does, as the view's
// caller: the caller's profile, client and quota key replace opts'. A
// tool outside the view answers as a tool no server has.
func (v *View) Call(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*Result, error) {
	return v.h.call0(ctx, v, name, args, v.options(opts))
}

// Resources returns the view's resources, sorted by server name, then
// URI.
func (v *View) Resources() []Resource {
	sc := v.scope()
	var out []Resource
	for _, r := range v.h.resources() {
		if sc.hasServer(r.Server) {
			out = append(out, r)
		}
	}
	return out
}

// Templates returns the view's resource templates, sorted by server
// name, then URI template.
func (v *View) Templates() []Template {
	sc := v.scope()
	var out []Template
	for _, t := range v.h.templates() {
		if sc.hasServer(t.Server) {
			out = append(out, t)
		}
	}
	return out
}

// Prompts returns the view's prompts, sorted by canonical ID.
func (v *View) Prompts() []Prompt {
	sc := v.scope()
	var out []Prompt
	for _, p := range v.h.prompts() {
		if sc.hasServer(p.Server) {
			out = append(out, p)
		}
	}
	return out
}

// Instructions returns the instructions of the view's servers that have
// given some, sorted by server name. A server's instructions are published
// only once its lists were discovered (live, or saved from an earlier
// discovery), and not while a change to them waits for approval; a
// disabled or closed server's are not.
func (v *View) Instructions() []ServerInstructions {
	sc := v.scope()
	var out []ServerInstructions
	for _, in := range v.h.instructions() {
		if sc.hasServer(in.Server) {
			out = append(out, in)
		}
	}
	return out
}

// ReadResource reads a resource of the view; see [Host.ReadResource].
func (v *View) ReadResource(ctx context.Context, id string) (*ResourceResult, error) {
	return v.h.readResource(ctx, v, id)
}

// GetPrompt renders a prompt of the view; see [Host.GetPrompt].
func (v *View) GetPrompt(ctx context.Context, id string, args map[string]string, opts *CallOptions) (*PromptResult, error) {
	return v.h.getPrompt(ctx, v, id, args, v.options(opts))
}

// Complete asks the server behind a completion reference of the view for
// argument completions. A prompt reference names a prompt by model-facing
// name or canonical ID; a resource reference names a template, routed to
// the server that offers it (the first in server-name order).
func (v *View) Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return v.h.complete(ctx, v, params)
}

// Subscribe subscribes to updates of a resource URI of the view at the
// server that lists it (or, for a URI filled in from a template, the
// server offering a template, tried in server-name order), and returns
// that server's name. [View.Unsubscribe] undoes it.
func (v *View) Subscribe(ctx context.Context, uri string) (server string, err error) {
	server, err = v.resourceServer(uri)
	if err != nil {
		return "", err
	}
	if sc := v.h.config().Server(server); sc != nil && perCaller(sc, v.c.identity()) != "" {
		// Updates arrive on the server's one connection, for every
		// caller: a caller's own resources are read, never subscribed.
		return "", fault.New(fault.CodeInvalidInput, server, "subscribe", errors.New(`a server with "oauth.perCaller" takes no subscriptions from its callers: read the resource again instead`))
	}
	conn, err := v.h.conn(ctx, server)
	if err != nil {
		return "", err
	}
	return server, conn.Subscribe(ctx, uri)
}

// Unsubscribe ends a subscription that [View.Subscribe] made at server.
func (v *View) Unsubscribe(ctx context.Context, server, uri string) error {
	if !v.scope().hasServer(server) {
		return fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server %q", server))
	}
	conn, err := v.h.conn(ctx, server)
	if err != nil {
		return err
	}
	return conn.Unsubscribe(ctx, uri)
}

// resourceServer finds the server of a resource URI in the view.
func (v *View) resourceServer(uri string) (string, error) {
	if server, ok := uriServer(v.h.snapshot(), uri, v.scope().hasServer); ok {
		return server, nil
	}
	return "", fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server offers resource %q", uri))
}

// servers returns the names of the configured servers in the view.
func (v *View) servers() []string {
	sc := v.scope()
	var out []string
	for _, name := range v.h.config().Names() {
		if sc.hasServer(name) {
			out = append(out, name)
		}
	}
	return out
}
