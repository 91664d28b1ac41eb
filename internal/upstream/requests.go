package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
)

// Progress is one progress notification for a call.
type Progress struct {
	Progress float64
	Total    float64 // 0 when unknown
	Message  string
}

// ToolResult is a tool's answer. Raw is the result object exactly as the
// server sent it; IsError is its isError flag (a tool failure is data, not
// a Go error).
type ToolResult struct {
	Raw     json.RawMessage
	IsError bool
}

// requestMeta is the _meta Switchboard adds to a forwarded request to a
// 2026-07-28 server: the log level (see askForLogs) and the capabilities of
// the client on whose behalf it runs. nil when there is nothing to add.
func (c *Conn) requestMeta(peer Peer) mcp.Meta {
	if !c.opts.Forward || !c.modern() {
		return nil
	}
	m := mcp.Meta{}
	if c.info.Capabilities.Logging != nil {
		m[mcp.MetaKeyLogLevel] = "debug"
	}
	if r, ok := peer.(CapabilityReporter); ok {
		m[mcp.MetaKeyClientCapabilities] = c.allowedCapabilities(forwardedCapabilities(r.ClientCapabilities()))
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// Discover drains every list the server's capabilities declare.
func (c *Conn) Discover(ctx context.Context) (*catalog.Catalog, error) {
	parent := ctx
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	// A list the server did not answer in time says which, and which
	// setting bounded it (the caller's, from WithStartup, or callTimeoutMs).
	late := func(method string, err error) error {
		return timedOut(parent, ctx, limit{c.server.CallTimeout, "callTimeoutMs"}, method, err)
	}
	filter := new(listFilter)
	ctx, s := withSlot(ctx, "", nil)
	s.list = filter
	defer s.finish()
	caps := c.info.Capabilities
	cat := &catalog.Catalog{Instructions: c.info.Instructions}
	defer func() { cat.Skipped = filter.dropped() }()
	// A list the server declared but does not implement is empty, and so
	// is a list other than tools that the server answered with an error
	// (a database it cannot reach): its tools still work, as they do in
	// the TypeScript client.
	list := func(method string, err error) error {
		var we *jsonrpc.Error
		switch {
		case err == nil:
		case isMethodNotFound(err):
			cat.Missing = append(cat.Missing, method)
			return nil
		case method != "tools/list" && errors.As(err, &we):
			cat.Failed = append(cat.Failed, method+": "+we.Message)
			return nil
		}
		return err
	}
	var err error
	if caps.Tools != nil {
		if cat.Tools, err = drain(c, c.session.Tools(ctx, nil)); list("tools/list", err) != nil {
			return nil, c.classify(ctx, "list tools", false, late("tools/list", err))
		}
	}
	if caps.Resources != nil {
		if cat.Resources, err = drain(c, c.session.Resources(ctx, nil)); list("resources/list", err) != nil {
			return nil, c.classify(ctx, "list resources", false, late("resources/list", err))
		}
		if cat.Templates, err = drain(c, c.session.ResourceTemplates(ctx, nil)); list("resources/templates/list", err) != nil {
			return nil, c.classify(ctx, "list resource templates", false, late("resources/templates/list", err))
		}
	}
	if caps.Prompts != nil {
		if cat.Prompts, err = drain(c, c.session.Prompts(ctx, nil)); list("prompts/list", err) != nil {
			return nil, c.classify(ctx, "list prompts", false, late("prompts/list", err))
		}
	}
	if c.proc != nil {
		if n, first := c.proc.Stray(); n > 0 {
			cat.Stray = fmt.Sprintf("%d line(s) on stdout were not JSON-RPC and were skipped (kept with its stderr); the first: %q", n, first)
		}
	}
	return cat, nil
}

// isMethodNotFound reports whether err is the server's JSON-RPC "method
// not found" answer.
func isMethodNotFound(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == jsonrpc.CodeMethodNotFound
}

func drain[T any](c *Conn, seq func(func(*T, error) bool)) ([]*T, error) {
	var out []*T
	for item, err := range seq {
		if err != nil {
			return nil, err
		}
		if item == nil {
			continue
		}
		if len(out) >= c.opts.MaxListItems {
			return nil, fmt.Errorf("more than %d items: %w", c.opts.MaxListItems, errTooMany)
		}
		out = append(out, item)
	}
	return out, nil
}

var errTooMany = errors.New("list too long")

// CallOptions tune one call; nil means none.
type CallOptions struct {
	// Progress, when set, receives the call's progress notifications.
	Progress func(Progress)
	// InputResponses and RequestState retry a call that returned
	// *InputRequired (2026-07-28 multi-round-trip), verbatim.
	InputResponses mcp.InputResponseMap
	RequestState   string
}

// CallTool calls a tool. args is the arguments object as JSON (nil means
// {}). A tool that fails returns a result with IsError, not an error.
func (c *Conn) CallTool(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*ToolResult, error) {
	if t := c.legacyFor(ctx, peerFrom(ctx)); t != c {
		return t.CallTool(ctx, name, args, opts)
	}
	if opts == nil {
		opts = &CallOptions{}
	}
	progress := opts.Progress
	if err := c.Err(); err != nil {
		return nil, fault.New(fault.CodeUnavailable, c.server.Name, fmt.Sprintf("call tool %q", name), err)
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if c.modern() {
		// A legacy session has no input responses to carry.
		params.InputResponses, params.RequestState = opts.InputResponses, opts.RequestState
	}
	params.Meta = c.requestMeta(peerFrom(ctx))
	if len(args) == 0 {
		params.Arguments = json.RawMessage("{}")
	}
	token := ""
	if progress != nil {
		token = fmt.Sprintf("sb-%d", c.progressSeq.Add(1))
		// Reports the wire capture points miss (a server sending progress
		// on a standalone stream) still reach the call through go-sdk.
		c.progress.Store(token, progress)
		defer c.progress.Delete(token)
		params.SetProgressToken(token)
	}
	ctx, s := withSlot(ctx, token, progress)
	if p := peerFrom(ctx); p != nil && c.opts.Forward {
		s.log = func(lp *mcp.LoggingMessageParams) { p.Log(ctx, c.server.Name, lp) }
	}
	defer s.finish()
	peer := peerFrom(ctx)
	if peer != nil {
		defer c.track(peer)()
	}
	res, err := c.session.CallTool(ctx, params)
	// A 2026-07-28 server asks for input by answering with input requests;
	// the call is retried with the responses (SEP-2322), at most maxRounds.
	for round := 1; err == nil && s.get() == nil && len(res.InputRequests) > 0; round++ {
		responses, ierr := c.answerInput(ctx, peer, fmt.Sprintf("call tool %q", name), round, res.InputRequests, res.RequestState)
		if ierr != nil {
			return nil, ierr
		}
		retry := *params
		retry.InputResponses, retry.RequestState = responses, res.RequestState
		res, err = c.session.CallTool(ctx, &retry)
	}
	op := fmt.Sprintf("call tool %q", name)
	if raw := s.get(); raw != nil && err == nil {
		// The wire result is authoritative: the SDK only saw a stand-in.
		isError, ferr := isErrorFlag(raw)
		if ferr != nil {
			return nil, c.classify(ctx, op, true, &protocolError{ferr})
		}
		return &ToolResult{Raw: raw, IsError: isError}, nil
	}
	if err != nil {
		if sf := s.getFault(); sf != nil {
			// The capture point found the answer malformed.
			err = &protocolError{sf}
		}
		return nil, c.classify(ctx, op, true, err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, c.classify(ctx, op, true, &protocolError{err})
	}
	return &ToolResult{Raw: raw, IsError: res.IsError}, nil
}

// ReadResource reads a resource by URI.
func (c *Conn) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	res, err := c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, c.classify(ctx, fmt.Sprintf("read resource %q", uri), false, err)
	}
	return res, nil
}

// GetPrompt renders a prompt. Like CallTool, it answers a 2026-07-28
// server's input requests through the context's peer, or returns
// *InputRequired when the peer passes them on.
func (c *Conn) GetPrompt(ctx context.Context, name string, args map[string]string, opts *CallOptions) (*mcp.GetPromptResult, error) {
	if t := c.legacyFor(ctx, peerFrom(ctx)); t != c {
		return t.GetPrompt(ctx, name, args, opts)
	}
	if opts == nil {
		opts = &CallOptions{}
	}
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	peer := peerFrom(ctx)
	if peer != nil {
		defer c.track(peer)()
	}
	op := fmt.Sprintf("get prompt %q", name)
	params := &mcp.GetPromptParams{Name: name, Arguments: args, Meta: c.requestMeta(peer)}
	if c.modern() {
		params.InputResponses, params.RequestState = opts.InputResponses, opts.RequestState
	}
	res, err := c.session.GetPrompt(ctx, params)
	for round := 1; err == nil && len(res.InputRequests) > 0; round++ {
		responses, ierr := c.answerInput(ctx, peer, op, round, res.InputRequests, res.RequestState)
		if ierr != nil {
			return nil, ierr
		}
		retry := *params
		retry.InputResponses, retry.RequestState = responses, res.RequestState
		res, err = c.session.GetPrompt(ctx, &retry)
	}
	if err != nil {
		return nil, c.classify(ctx, op, false, err)
	}
	return res, nil
}

// Complete asks the server for argument completions.
func (c *Conn) Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	res, err := c.session.Complete(ctx, params)
	if err != nil {
		return nil, c.classify(ctx, "complete", false, err)
	}
	return res, nil
}

// Subscribe and Unsubscribe manage a resource subscription; updates arrive
// through Options.OnResourceUpdated.
func (c *Conn) Subscribe(ctx context.Context, uri string) error {
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	if err := c.session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		return c.classify(ctx, fmt.Sprintf("subscribe %q", uri), false, err)
	}
	return nil
}

func (c *Conn) Unsubscribe(ctx context.Context, uri string) error {
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	if err := c.session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		return c.classify(ctx, fmt.Sprintf("unsubscribe %q", uri), false, err)
	}
	return nil
}

// callContext bounds one request by the server's callTimeout and ties it
// to the connection's lifetime, so Close never waits for a call.
func (c *Conn) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(withStatus(ctx), c.server.CallTimeout)
	stop := context.AfterFunc(c.life, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

func (c *Conn) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	token, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	if f, ok := c.progress.Load(token); ok {
		f.(func(Progress))(Progress{Progress: req.Params.Progress, Total: req.Params.Total, Message: req.Params.Message})
	}
}
