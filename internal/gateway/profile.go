package gateway

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/mcphttp"
)

// Profiles. A profile of the configuration ("profiles") is a subset of
// the aggregate: a gateway serving one (Options.Profile) registers only
// the tools, resources, templates and prompts the profile holds, so a
// tool outside it is neither listed nor callable (go-sdk's "unknown
// tool", -32602), and the heldBack path looks up nothing outside it
// either. The profile is read from the host's configuration at each Sync
// and each call, so a reload that changes it changes what is served; one
// that removes it leaves its gateway serving nothing.
//
// Over HTTP, the gateway for the whole aggregate serves <path> and makes
// a gateway for each profile on first use of <path>/<name>
// (profileServer), synced with it.

// scope is a profile as a filter; a nil scope holds everything.
type scope struct{ p *config.Profile }

// scope returns the gateway's profile now. A profile gateway whose
// profile a reload removed holds nothing.
func (g *Gateway) scope() scope {
	if g.profile == "" {
		return scope{}
	}
	p := g.host.Profile(g.profile)
	if p == nil {
		return scope{p: &config.Profile{Name: g.profile, Servers: []string{}, Tools: []string{}}}
	}
	return scope{p: p}
}

func (s scope) hasTool(t host.Tool) bool { return s.p == nil || s.p.HasTool(t.Server, t.ID) }

func (s scope) hasServer(server string) bool { return s.p == nil || s.p.HasServer(server) }

// profileServer is a profile's gateway and its HTTP endpoint.
type profileServer struct {
	g *Gateway
	h *mcphttp.Handler
}

// profileHandler returns the endpoint of the profile named name, made on
// first use with its sessions counted in limits, or nil when the
// configuration has no such profile.
func (g *Gateway) profileHandler(name string, limits *mcphttp.SessionLimits) *mcphttp.Handler {
	if g.host.Profile(name) == nil {
		return nil
	}
	g.profMu.Lock()
	defer g.profMu.Unlock()
	if ps := g.profiles[name]; ps != nil {
		return ps.h
	}
	opts := g.opts
	opts.Profile = name
	pg := newGateway(g.host, &opts, g.states)
	ps := &profileServer{g: pg, h: mcphttp.NewHandler(pg.server, &mcphttp.HandlerOptions{Logger: g.log, Sessions: limits})}
	g.profiles[name] = ps
	return ps.h
}

// syncProfiles syncs the profile gateways made so far.
func (g *Gateway) syncProfiles() {
	g.profMu.Lock()
	defer g.profMu.Unlock()
	for _, ps := range g.profiles {
		ps.g.Sync()
	}
}

// callOptions names the caller of a request: the configured client that
// the front door admitted (its name is the quota key, the audit log's
// caller and what policy rules match), else the session, as before
// clients had names; and the profile it came through.
func (g *Gateway) callOptions(ss *mcp.ServerSession, extra *mcp.RequestExtra) *host.CallOptions {
	opts := &host.CallOptions{Profile: g.profile}
	if ss != nil {
		opts.Client = ss.ID()
	}
	if extra != nil && extra.TokenInfo != nil {
		if name := clientName(extra.TokenInfo); name != "" {
			opts.Client, opts.Caller = name, name
		} else if extra.TokenInfo.UserID != "" {
			opts.Client = extra.TokenInfo.UserID
		}
	}
	return opts
}

// completes reports whether a completion's reference is served here: on a
// profile gateway, a prompt or a resource (template) it registered.
func (g *Gateway) completes(p *mcp.CompleteParams) bool {
	if g.profile == "" || p == nil || p.Ref == nil {
		return true
	}
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	switch p.Ref.Type {
	case "ref/prompt":
		_, ok := g.prompts[p.Ref.Name]
		return ok
	case "ref/resource":
		_, ok := g.resources[p.Ref.URI]
		_, tok := g.templates[p.Ref.URI]
		return ok || tok
	}
	return false
}
