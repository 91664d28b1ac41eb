package gateway

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/mcphttp"
)

// Profiles. A profile of the configuration ("profiles") is a subset of
// the aggregate: a gateway serving one (Options.Profile) takes what it
// serves from the host's view of that profile (host.View), so a tool
// outside it is neither listed nor callable (go-sdk's "unknown tool",
// -32602), and the heldBack path, completions and subscriptions go
// through the caller's view, which knows nothing outside it. The profile
// is read from the host's configuration at each Sync and each call, so a
// reload that changes it changes what is served; one that removes it
// leaves its gateway serving nothing.
//
// Over HTTP, the gateway for the whole aggregate serves <path> and makes
// a gateway for each profile on first use of <path>/<name>
// (profileServer), synced with it.

// view returns the view of what the gateway serves to all its clients:
// its profile's.
func (g *Gateway) view() *host.View { return g.host.View(host.Caller{Profile: g.profile}) }

// callerView returns the view of a request's caller: the configured
// client that the front door admitted (its name is the quota key, the
// audit log's caller and what policy rules match), else its verified
// identity; its session (the quota key of a caller that is neither); the
// name its client gave itself, recorded with its calls; and the profile
// it came through.
func (g *Gateway) callerView(req callerRequest) *host.View {
	c := host.Caller{Profile: g.profile}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		c.Session = ss.ID()
	}
	if ci := req.ClientInfo(); ci != nil {
		c.ClientName = ci.Name
	}
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		c.Client = clientName(extra.TokenInfo)
		if c.Client == "" {
			c.Subject = extra.TokenInfo.UserID
		}
		c.Token = callerToken(extra.TokenInfo)
	}
	return g.host.View(c)
}

// callerRequest is what callerView reads of a request.
type callerRequest interface {
	GetSession() mcp.Session
	GetExtra() *mcp.RequestExtra
	ClientInfo() *mcp.Implementation
}

// profileServer is a profile's gateway and its HTTP endpoint.
type profileServer struct {
	g *Gateway
	h *mcphttp.Handler
}

// profileHandler returns the endpoint of the profile named name, made on
// first use with its sessions counted in limits, or nil when the
// configuration has no such profile.
func (g *Gateway) profileHandler(name string, limits *mcphttp.SessionLimits) *mcphttp.Handler {
	if hostlink.Of(g.host).Profile(name) == nil {
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
	if base, ok := g.approvalPage.Load().(string); ok {
		pg.approvalPage.Store(base)
	}
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
