package upstream

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
)

// Peer is the client on whose behalf calls run: it answers the requests a
// server makes while serving them (sampling, elicitation, roots) and
// receives its log messages. The gateway implements it for each downstream
// request. server names the upstream server that asked, so that a person
// shown an elicitation knows who is asking.
type Peer interface {
	CreateMessage(ctx context.Context, server string, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error)
	Elicit(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	ListRoots(ctx context.Context, server string) (*mcp.ListRootsResult, error)
	Log(ctx context.Context, server string, p *mcp.LoggingMessageParams)
}

// InputPasser is implemented by a peer that takes a 2026-07-28 server's
// input requests itself, as an input-required result of its own (a
// 2026-07-28 downstream client), instead of answering them one by one.
// When PassInput reports true, CallTool returns *InputRequired for them.
type InputPasser interface {
	PassInput() bool
}

// InputRequired is returned by CallTool when a server asks for input and
// the call's peer passes such requests on: retry the call with the
// responses and State (CallToolOptions.InputResponses, .RequestState).
type InputRequired struct {
	Requests mcp.InputRequestMap
	State    string // the server's opaque request state, to echo
}

func (e *InputRequired) Error() string {
	return fmt.Sprintf("the server asks for input (%d requests)", len(e.Requests))
}

// CapabilityReporter is implemented by a peer that knows what its client
// declared. A 2026-07-28 server sees those capabilities (of the ones
// Switchboard forwards) in each request's _meta, rather than Switchboard's
// own, so it asks only for what the client can answer (SEP-2575).
type CapabilityReporter interface {
	ClientCapabilities() *mcp.ClientCapabilities
}

// forwardedCapabilities is the per-request _meta value for a peer's
// client: its sampling, elicitation and roots, in the 2026-07-28 form.
func forwardedCapabilities(c *mcp.ClientCapabilities) map[string]any {
	out := map[string]any{}
	if c == nil {
		return out
	}
	if c.Sampling != nil {
		out["sampling"] = c.Sampling
	}
	if c.Elicitation != nil {
		out["elicitation"] = c.Elicitation
	}
	if c.RootsV2 != nil {
		out["roots"] = c.RootsV2
	}
	return out
}

type peerKey struct{}

// WithPeer returns a context whose calls run on behalf of p.
func WithPeer(ctx context.Context, p Peer) context.Context {
	return context.WithValue(ctx, peerKey{}, p)
}

func peerFrom(ctx context.Context) Peer {
	p, _ := ctx.Value(peerKey{}).(Peer)
	return p
}

// ErrNoPeer and ErrAmbiguousPeer are returned to a server whose request
// cannot be routed to a client.
var (
	ErrNoPeer        = errors.New("no call from a client is in flight on this server: Switchboard has no one to ask")
	ErrAmbiguousPeer = errors.New("calls from several clients are in flight on this server and the request names none: Switchboard will not guess whom to ask")
)

// track records peer as the requester of a call in flight; the returned
// func forgets it.
func (c *Conn) track(peer Peer) func() {
	c.mu.Lock()
	if c.peers == nil {
		c.peers = map[Peer]int{}
	}
	c.peers[peer]++
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.peers[peer]--; c.peers[peer] == 0 {
			delete(c.peers, peer)
		}
	}
}

// peerFor finds whom a server's request is for. A 2026-07-28 server's
// requests arrive as input requests of the call's own result, and go-sdk
// answers them under the call's context: exact. A legacy server's requests
// arrive on the connection, with nothing on the wire tying them to a call
// (stdio has no related-request field), so they go to the client of the
// calls in flight when there is exactly one such client, and are refused
// otherwise rather than shown to the wrong person.
func (c *Conn) peerFor(ctx context.Context) (Peer, error) {
	if p := peerFrom(ctx); p != nil {
		return p, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch len(c.peers) {
	case 0:
		return nil, ErrNoPeer
	case 1:
		for p := range c.peers {
			return p, nil
		}
	}
	return nil, ErrAmbiguousPeer
}

func (c *Conn) onCreateMessage(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	if !c.allows("sampling") {
		c.log.Warn("sampling request refused: not allowed for this server", "trust", c.server.Trust.Level())
		return nil, c.refused("sampling")
	}
	p, err := c.peerFor(ctx)
	if err != nil {
		c.log.Warn("sampling request refused", "err", err)
		return nil, err
	}
	return p.CreateMessage(ctx, c.server.Name, req.Params)
}

func (c *Conn) onElicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if !c.allows("elicitation") {
		c.log.Warn("elicitation refused: not allowed for this server", "trust", c.server.Trust.Level())
		return nil, c.refused("elicitation")
	}
	params, err := c.checkElicit(req.Params)
	if err != nil {
		return nil, err
	}
	p, err := c.peerFor(ctx)
	if err != nil {
		c.log.Warn("elicitation refused", "err", err)
		return nil, err
	}
	return p.Elicit(ctx, c.server.Name, params)
}

// askMiddleware answers a legacy server's roots/list from the call's peer
// instead of go-sdk's static root list, and hands its elicitation/create
// to the peer before go-sdk's client checks the requested schema: the
// client that answers checks it, and go-sdk's check refuses schemas the
// specification allows (a titled multi-select whose items also say
// "type": "string", as go-sdk's own conformance server sends).
func (c *Conn) askMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "roots/list":
			if !c.allows("roots") {
				return nil, c.refused("roots")
			}
			p, err := c.peerFor(ctx)
			if err != nil {
				return nil, err
			}
			return p.ListRoots(ctx, c.server.Name)
		case "elicitation/create":
			if r, ok := req.(*mcp.ElicitRequest); ok && r.Params != nil {
				return c.onElicit(ctx, r)
			}
		}
		return next(ctx, method, req)
	}
}

// wireLog is offered each log message in wire order on stdio and legacy
// SSE connections, so that a message sent during a call reaches the
// client before the call's result (go-sdk hands notifications to its
// handler asynchronously). It delivers to the client of the calls in
// flight when there is exactly one.
func (c *Conn) wireLog(p *mcp.LoggingMessageParams) bool {
	if !c.opts.Forward {
		return false
	}
	peer, err := c.peerFor(context.Background())
	if err != nil {
		return false
	}
	peer.Log(context.Background(), c.server.Name, p)
	return true
}

func (c *Conn) onLog(ctx context.Context, req *mcp.LoggingMessageRequest) {
	if c.opts.Forward {
		if p, err := c.peerFor(ctx); err == nil {
			p.Log(ctx, c.server.Name, req.Params)
			return
		}
	}
	c.log.Debug("server log", "level", req.Params.Level, "logger", req.Params.Logger, "data", fmt.Sprint(req.Params.Data))
}

// maxRounds bounds the multi-round-trip exchanges of one call, as go-sdk's
// own loop does.
const maxRounds = 10

// answerInput handles one round of a 2026-07-28 server's input requests
// (SEP-2322) for op: passed on as *InputRequired when the peer takes them
// itself, else answered through the peer, within maxRounds.
func (c *Conn) answerInput(ctx context.Context, peer Peer, op string, round int, reqs mcp.InputRequestMap, state string) (mcp.InputResponseMap, error) {
	if err := c.checkInput(reqs); err != nil {
		c.log.Warn("input request refused", "err", err)
		return nil, fault.New(fault.CodePolicyBlocked, c.server.Name, op, err)
	}
	reqs, err := c.checkElicitInput(reqs)
	if err != nil {
		return nil, fault.New(fault.CodePolicyBlocked, c.server.Name, op, err)
	}
	if p, ok := peer.(InputPasser); ok && p.PassInput() {
		return nil, &InputRequired{Requests: reqs, State: state}
	}
	if round > maxRounds {
		return nil, fault.New(fault.CodeServerError, c.server.Name, op, fmt.Errorf("still asking for input after %d rounds", maxRounds))
	}
	responses, err := c.fulfil(ctx, peer, reqs)
	if err != nil {
		return nil, fault.New(fault.CodeServerError, c.server.Name, op, err)
	}
	return responses, nil
}

// fulfil answers a 2026-07-28 server's input requests through the call's
// peer (exact: the requests belong to this call).
func (c *Conn) fulfil(ctx context.Context, peer Peer, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	if peer == nil {
		return nil, fmt.Errorf("the server asks for input (%d requests) and there is no client to ask", len(reqs))
	}
	out := make(mcp.InputResponseMap, len(reqs))
	for id, r := range reqs {
		var resp mcp.InputResponse
		var err error
		switch p := r.(type) {
		case *mcp.ElicitParams:
			resp, err = peer.Elicit(ctx, c.server.Name, p)
		case *mcp.CreateMessageWithToolsParams:
			resp, err = peer.CreateMessage(ctx, c.server.Name, p)
		case *mcp.CreateMessageParams:
			resp, err = peer.CreateMessage(ctx, c.server.Name, samplingWithTools(p))
		case *mcp.ListRootsParams:
			resp, err = peer.ListRoots(ctx, c.server.Name)
		default:
			err = fmt.Errorf("unsupported input request %T", r)
		}
		if err != nil {
			return nil, fmt.Errorf("input request %q: %w", id, err)
		}
		out[id] = resp
	}
	return out, nil
}

// samplingWithTools widens a single-content sampling request to the form
// that carries content arrays (what go-sdk's own loop does).
func samplingWithTools(p *mcp.CreateMessageParams) *mcp.CreateMessageWithToolsParams {
	msgs := make([]*mcp.SamplingMessageV2, 0, len(p.Messages))
	for _, m := range p.Messages {
		msgs = append(msgs, &mcp.SamplingMessageV2{Role: m.Role, Content: []mcp.Content{m.Content}})
	}
	return &mcp.CreateMessageWithToolsParams{
		Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens, Messages: msgs, Metadata: p.Metadata,
		ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences, SystemPrompt: p.SystemPrompt, Temperature: p.Temperature,
	}
}
