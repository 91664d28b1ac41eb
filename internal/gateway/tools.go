package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
)

// heldBack is receiving middleware for the calls of tools that are not
// registered, which go-sdk answers "unknown tool"; the caller's view
// decides (host.View.Resolve), and records what it refuses. A deferred
// tool of the view is called by its exact name. A tool of a server of the view still starting waits for
// that server, and is called once it is known; a server that fails to
// start is an isError result saying why. A tool that a re-discovery of a
// stale catalogue finds is called. A tool held back because its
// definition changed since it was approved, or because its metadata
// matches an injection pattern and its server is not trusted, answers
// definition_changed or held_injection: an isError result saying the
// tool is held for review (toClient). Anything outside the view is go-sdk's
// "unknown tool", as a name nothing has.
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
		v := g.callerView(call)
		// Resolve, not Tool: a name missing from a catalogue that may be
		// stale (saved, or from an earlier connection) has its server
		// discovered again, once, and a tool of a server of the view
		// still starting waits for that server. A tool found so is
		// called now (the change notification registers it for the
		// calls after); a held one is refused like any other, and one
		// of a server that needs a login, or that failed to start, says
		// so (its tools are unknown until then). The view records its
		// refusal; the gateway only answers it.
		t, herr := v.Resolve(ctx, call.Params.Name, call.Params.Arguments)
		if herr == nil {
			g.Sync() // OnChange may not have run yet
			return g.callTool(t)(ctx, call)
		}
		var fe *fault.Error
		if !errors.As(herr, &fe) || fe.Server == "" || fe.Code == fault.CodeNotFound {
			return res, err
		}
		return g.toClient(ctx, failed{kind: toolCall, name: call.Params.Name, id: call.Params.Name, server: fe.Server}, herr)
	}
}

func (g *Gateway) syncTools() {
	tools := map[string]host.Tool{}
	desired := map[string]string{}
	for _, t := range g.view().Tools() {
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
		v := g.callerView(req)
		opts := &host.CallOptions{Peer: p, RawOnly: true, Confirm: g.confirmer(p), Approve: g.approver(p, req.Session)}
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
			res, err := v.Call(ctx, t.ID, args, opts)
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
				return v.Call(bg, t.ID, args, opts)
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

// retryInput sets opts for a 2026-07-28 client's retry with the input it
// was asked for, and returns the ID of the parked call the input is for,
// if any. A requestState counts only if the gateway issued it for this
// very tool: one in the gateway's format that fails verification
// (tampered, forged, expired, or another tool's) is an error; one that is
// not the gateway's is ignored, with its responses, as SEP-2322 asks of
// unrecognised information, and the call starts afresh, so the upstream
// asks again. Responses without any state are the client's answers before
// a question and go to the upstream as they are.
func (g *Gateway) retryInput(opts *host.CallOptions, id string, responses mcp.InputResponseMap, state string) (parked string, err error) {
	if !isSealed(state) {
		if state == "" && len(responses) > 0 {
			// Answers given before any question, as a client may: a
			// 2026-07-28 upstream takes what it recognises and ignores the
			// rest (SEP-2322), as it would from its client directly; a
			// legacy one never sees them (upstream).
			opts.InputResponses = responses
			return "", nil
		}
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
