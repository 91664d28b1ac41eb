package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/era"
)

// peer forwards an upstream server's requests during a tool call to the
// downstream client that made the call, on that call's own request (over
// HTTP, on its response stream).
type peer struct {
	ctx     context.Context // the downstream call's
	session *mcp.ServerSession
	caps    *mcp.ClientCapabilities // never nil
	version string
	log     *slog.Logger

	// For a 2026-07-28 client's call running in the background (park.go):
	asks chan *question  // where a legacy upstream's questions go
	bg   context.Context // the background call's context
}

func (g *Gateway) newPeer(ctx context.Context, ss *mcp.ServerSession, caps *mcp.ClientCapabilities, version string) *peer {
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	return &peer{ctx: ctx, session: ss, caps: caps, version: version, log: g.log}
}

// ClientCapabilities reports what the downstream client declared.
func (p *peer) ClientCapabilities() *mcp.ClientCapabilities { return p.caps }

// ProtocolVersion reports the version the downstream client speaks: a
// legacy client's calls run on a legacy connection to a server that
// speaks both eras (upstream.VersionReporter), where the server can ask
// it the legacy way.
func (p *peer) ProtocolVersion() string { return p.version }

// errModern is returned when a 2026-07-28 client would have to be asked
// outside a tool call (the only place parking applies).
var errModern = errors.New("the client is connected to Switchboard with protocol 2026-07-28, " +
	"which has no server-to-client requests, and this request came outside a tool call")

func (p *peer) modern() bool { return era.Modern(p.version) }

// parks reports whether questions are parked (park.go) rather than put to
// the client's session: for a 2026-07-28 client, which has no
// server-to-client requests.
func (p *peer) parks() bool { return p.modern() }

// PassInput: a 2026-07-28 client is asked through an input-required result
// of the gateway's own (see Gateway.callTool), which go-sdk also turns into
// requests for a legacy client; both eras are then asked the same way.
func (p *peer) PassInput() bool { return p.modern() }

// named returns input requests with elicitations naming the server that
// asks, for the person who answers.
func named(server string, reqs mcp.InputRequestMap) mcp.InputRequestMap {
	out := make(mcp.InputRequestMap, len(reqs))
	for id, r := range reqs {
		if e, ok := r.(*mcp.ElicitParams); ok {
			c := *e
			c.Message = askedBy(server, e.Message)
			r = &c
		}
		out[id] = r
	}
	return out
}

func askedBy(server, msg string) string {
	return fmt.Sprintf("[MCP server %q asks] %s", server, msg)
}

func (p *peer) CreateMessage(ctx context.Context, server string, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	switch {
	case p.caps.Sampling == nil:
		return nil, errors.New("the client connected to Switchboard did not declare sampling")
	case p.parks():
		resp, err := p.ask(ctx, params)
		if err != nil {
			return nil, err
		}
		if r, ok := resp.(*mcp.CreateMessageWithToolsResult); ok {
			return r, nil
		}
		return nil, errWrongAnswer
	}
	p.log.Debug("forwarding sampling request", "server", server)
	return p.session.CreateMessageWithTools(p.ctx, params)
}

func (p *peer) Elicit(ctx context.Context, server string, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	switch {
	case p.caps.Elicitation == nil:
		return nil, errors.New("the client connected to Switchboard did not declare elicitation")
	}
	// A person answering must know which server asks.
	named := *params
	named.Message = askedBy(server, params.Message)
	return p.elicit(ctx, &named)
}

// elicit puts an elicitation to the client, in its era's way.
func (p *peer) elicit(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if p.parks() {
		resp, err := p.ask(ctx, params)
		if err != nil {
			return nil, err
		}
		if r, ok := resp.(*mcp.ElicitResult); ok {
			return r, nil
		}
		return nil, errWrongAnswer
	}
	return p.session.Elicit(p.ctx, params)
}

func (p *peer) ListRoots(ctx context.Context, server string) (*mcp.ListRootsResult, error) {
	switch {
	case p.caps.RootsV2 == nil:
		// A server asks for roots whatever the client declared (go-sdk's
		// server does at start-up): a client without roots is not asked,
		// and its call goes on.
		return nil, errors.New("the client connected to Switchboard did not declare roots")
	case p.parks():
		resp, err := p.ask(ctx, &mcp.ListRootsParams{})
		if err != nil {
			return nil, err
		}
		if r, ok := resp.(*mcp.ListRootsResult); ok {
			return r, nil
		}
		return nil, errWrongAnswer
	}
	return p.session.ListRoots(p.ctx, &mcp.ListRootsParams{})
}

func (p *peer) Log(_ context.Context, server string, params *mcp.LoggingMessageParams) {
	named := *params
	named.Logger = server
	if params.Logger != "" {
		named.Logger = server + "/" + params.Logger
	}
	if err := p.session.Log(p.ctx, &named); err != nil {
		p.log.Debug("log message not forwarded", "server", server, "err", err)
	}
}
