package gateway

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// subscription is one upstream subscription and the clients that want it.
type subscription struct {
	server  string
	clients map[*mcp.ServerSession]bool
}

func (g *Gateway) syncResources() {
	v := g.view()
	resources := map[string]host.Resource{}
	desired := map[string]string{}
	for _, r := range v.Resources() {
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
	for _, t := range v.Templates() {
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
		res, err := g.callerView(req).ReadResource(ctx, server+":"+req.Params.URI)
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
	for _, p := range g.view().Prompts() {
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
		v := g.callerView(req)
		opts := &host.CallOptions{Peer: g.newPeer(ctx, req.Session, req.ClientCapabilities(), req.ProtocolVersion())}
		if parked, err := g.retryInput(opts, p.ID, req.Params.InputResponses, req.Params.RequestState); err != nil || parked != "" {
			if err == nil {
				err = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState names a tool call, not a prompt"}
			}
			return nil, err
		}
		res, err := v.GetPrompt(ctx, p.ID, req.Params.Arguments, opts)
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

func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	res, err := g.callerView(req).Complete(ctx, req.Params)
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
	server, err := g.callerView(req).Subscribe(ctx, uri)
	if err != nil {
		return g.protocolError(ctx, failed{kind: resourceRead, name: uri, id: uri}, err)
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
	if err := g.host.View(host.Caller{}).Unsubscribe(ctx, sub.server, uri); err != nil { // the subscription is every session's
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
