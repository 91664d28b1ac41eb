package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// Progress is one progress report of a running call.
type Progress struct {
	Progress float64
	Total    float64 // 0 when unknown
	Message  string
}

// Peer answers the requests a server makes during a call (sampling,
// elicitation, roots) and receives its log messages; see Options.Forward.
// server names the server that asked, so that a person shown an
// elicitation knows who is asking.
type Peer interface {
	CreateMessage(ctx context.Context, server string, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error)
	Elicit(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	ListRoots(ctx context.Context, server string) (*mcp.ListRootsResult, error)
	Log(ctx context.Context, server string, p *mcp.LoggingMessageParams)
}

// InputPasser is implemented by a Peer that takes a 2026-07-28 server's
// input requests itself, as an input-required result of its own (a
// 2026-07-28 downstream client), instead of answering them one by one.
// When PassInput reports true, Call and GetPrompt return *InputRequired for
// them.
type InputPasser interface {
	PassInput() bool
}

// InputRequired is returned by Call and GetPrompt when a server asks for
// input and the call's Peer passes such requests on (see InputPasser):
// retry the call with the responses and State (CallOptions.InputResponses,
// CallOptions.RequestState).
type InputRequired struct {
	Requests mcp.InputRequestMap
	State    string // the server's opaque request state, to echo
}

func (e *InputRequired) Error() string {
	return fmt.Sprintf("the server asks for input (%d requests)", len(e.Requests))
}

// callOptions translates CallOptions for the upstream package; the peer
// travels in the context. A Peer satisfies upstream's interfaces as it is:
// the method sets are the same.
func callOptions(ctx context.Context, opts *CallOptions) (*upstream.CallOptions, context.Context) {
	if opts == nil {
		return nil, ctx
	}
	if opts.Peer != nil {
		ctx = upstream.WithPeer(ctx, opts.Peer)
	}
	out := &upstream.CallOptions{InputResponses: opts.InputResponses, RequestState: opts.RequestState}
	if f := opts.Progress; f != nil {
		out.Progress = func(p upstream.Progress) { f(Progress(p)) }
	}
	return out, ctx
}

// fromUpstream turns upstream's input-required error into the host's;
// every other error passes as it is.
func fromUpstream(err error) error {
	var ir *upstream.InputRequired
	if errors.As(err, &ir) {
		return &InputRequired{Requests: ir.Requests, State: ir.State}
	}
	return err
}
