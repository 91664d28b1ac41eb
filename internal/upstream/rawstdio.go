package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/resultguard"
)

// The raw tools/call on stdio (docs/PERFORMANCE.md, "Raw upstream
// tools/call").
//
// The request is the frame rawRequest builds (the caller's argument bytes
// spliced in), written whole with launcher.Process.WriteFrame, under the
// same lock as go-sdk's own writes. Its ID is a string with a prefix
// go-sdk never uses (go-sdk's IDs are numbers), so the two cannot collide.
// The response is taken off stdout in the launcher's frame filter
// (stdioFilter), before go-sdk reads it: go-sdk never sees a response to
// an ID it did not send. The call's progress is taken there too, so it is
// delivered in wire order, before the result. Every other frame (log
// messages, list changes, requests from the server) goes to go-sdk as
// before, which answers server-to-client requests as it always has.
//
// Only 2026-07-28 stdio sessions use it (rawEligible): rawRequest
// reproduces the _meta go-sdk adds on that era, copied from the
// server/discover request go-sdk wrote (captureConn.onDiscover).
// Legacy-era stdio sessions stay on go-sdk.

// rawStdioPrefix starts every raw stdio request ID (a JSON string).
const rawStdioPrefix = "sbraw-"

// stdioReply is what the filter found for a raw call.
type stdioReply struct {
	result json.RawMessage // the result object, copied
	rpcErr *jsonrpc.Error  // or the error response
	bad    error           // or a response the raw path cannot use
}

type stdioPending struct {
	reply chan stdioReply // buffered (1)
	slot  *slot
}

// stdioRaw is the stdio part of rawState.
type stdioRaw struct {
	used    atomic.Bool // a raw call was made: check frames for late responses
	mu      sync.Mutex
	pending map[string]*stdioPending // by ID, without quotes
	tokens  map[string]*slot         // progress tokens of the pending calls
}

func (r *stdioRaw) add(id string, p *stdioPending) {
	r.used.Store(true)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = map[string]*stdioPending{}
		r.tokens = map[string]*slot{}
	}
	r.pending[id] = p
	if p.slot.token != "" {
		r.tokens[p.slot.token] = p.slot
	}
}

func (r *stdioRaw) remove(id string) *stdioPending {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pending[id]
	delete(r.pending, id)
	if p != nil && p.slot.token != "" {
		delete(r.tokens, p.slot.token)
	}
	return p
}

var (
	rawIDMarker       = []byte(`"` + rawStdioPrefix)
	rawProgressMarker = []byte(`"notifications/progress"`)
	rawLogMarker      = []byte(`"notifications/message"`)
)

// stdioFilter is the stdio connection's frame filter: pruneFrame, then
// the raw calls' responses and progress are taken (nil: dropped).
func (c *Conn) stdioFilter(frame []byte) []byte {
	frame = c.pruneFrame(frame)
	if c.raw == nil || !c.raw.stdio.used.Load() {
		return frame
	}
	if c.raw.stdio.take(frame) {
		return nil
	}
	// A log message while a raw call is in flight is delivered here, in
	// wire order: the call's response is taken in this filter, before
	// go-sdk has read what came earlier, so a message left to go-sdk (and
	// wireLog in captureConn) could reach the client after the result.
	if bytes.Contains(frame, rawLogMarker) && c.raw.stdio.inFlight() {
		if p, ok := parseLogFrame(frame); ok && c.wireLog(p) {
			return nil
		}
	}
	return frame
}

// inFlight reports whether a raw call waits for its response.
func (r *stdioRaw) inFlight() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending) > 0
}

// parseLogFrame decodes a notifications/message frame.
func parseLogFrame(frame []byte) (*mcp.LoggingMessageParams, bool) {
	if !resultguard.Valid(frame) {
		return nil, false
	}
	m, ok := topMembers(frame)
	if !ok {
		return nil, false
	}
	if _, isCall := m["id"]; isCall || string(bytes.TrimSpace(m["method"])) != `"notifications/message"` {
		return nil, false
	}
	var p mcp.LoggingMessageParams
	if json.Unmarshal(m["params"], &p) != nil {
		return nil, false
	}
	return &p, true
}

// take handles a frame that is a raw call's response (or a late one) or
// progress for a raw call, and reports whether it did.
func (r *stdioRaw) take(frame []byte) bool {
	hasID := bytes.Contains(frame, rawIDMarker)
	r.mu.Lock()
	progress := len(r.tokens) > 0
	r.mu.Unlock()
	progress = progress && bytes.Contains(frame, rawProgressMarker)
	if !hasID && !progress {
		return false
	}
	if !resultguard.Valid(frame) {
		return false // go-sdk handles it as before
	}
	m, ok := topMembers(frame)
	if !ok {
		return false
	}
	if method, has := m["method"]; has {
		if _, isCall := m["id"]; isCall || !progress || string(bytes.TrimSpace(method)) != `"notifications/progress"` {
			return false
		}
		tok, p, ok := parseProgress(m["params"])
		if !ok {
			return false
		}
		r.mu.Lock()
		s := r.tokens[tok]
		r.mu.Unlock()
		if s == nil {
			return false
		}
		s.deliver(p)
		return true
	}
	id := bytes.TrimSpace(m["id"])
	if !bytes.HasPrefix(id, rawIDMarker) || len(id) < len(rawIDMarker)+2 || id[len(id)-1] != '"' {
		return false
	}
	pend := r.remove(string(id[1 : len(id)-1]))
	if pend == nil {
		return true // a late answer to an abandoned call: go-sdk must not see it
	}
	var rep stdioReply
	if e := bytes.TrimSpace(m["error"]); len(e) > 0 && string(e) != "null" {
		var we jsonrpc.Error
		if err := json.Unmarshal(e, &we); err != nil {
			rep.bad = fmt.Errorf("%w: %v", errBadMessage, err)
		} else {
			rep.rpcErr = &we
		}
	} else if res := bytes.TrimSpace(m["result"]); len(res) > 0 && res[0] == '{' {
		rep.result = append(json.RawMessage(nil), res...) // the frame's memory is reused
	} else {
		rep.bad = fmt.Errorf("%w: the result is not a JSON object", errBadMessage)
	}
	pend.reply <- rep
	return true
}

// rawStdioExchange writes one tools/call frame and waits for its response.
func (c *Conn) rawStdioExchange(ctx context.Context, op, name string, args json.RawMessage, token string, peer Peer, responses mcp.InputResponseMap, state string, s *slot) (json.RawMessage, error) {
	r := &c.raw.stdio
	seq := c.raw.ids.Add(1)
	id := rawStdioPrefix + strconv.FormatInt(seq, 10)
	idJSON := strconv.AppendQuote(nil, id)
	body, err := c.rawRequestID(idJSON, name, args, token, peer, responses, state)
	if err != nil {
		return nil, c.classify(ctx, op, fmt.Errorf("calling %q: %w", "tools/call", err))
	}
	body = append(body, '\n')
	if err := ctx.Err(); err != nil {
		// go-sdk's connection refuses to write on a done context.
		return nil, c.classify(ctx, op, fmt.Errorf("calling %q: %w", "tools/call", err))
	}
	pend := &stdioPending{reply: make(chan stdioReply, 1), slot: s}
	r.add(id, pend)
	defer r.remove(id)
	if n, werr := c.proc.WriteFrame(body); werr != nil {
		r.remove(id)
		if n == 0 {
			// Nothing reached the server.
			return nil, fault.New(fault.CodeUnavailable, c.server.Name, op, c.cause(fmt.Errorf("calling %q: %w", "tools/call", werr)))
		}
		return nil, fault.New(fault.CodeUnknownOutcome, c.server.Name, op, c.cause(fmt.Errorf("calling %q: %w", "tools/call", werr)))
	}
	var rep stdioReply
	select {
	case rep = <-pend.reply:
	case <-ctx.Done():
		select {
		case rep = <-pend.reply: // answered just in time
		default:
			r.remove(id)
			c.rawStdioCancelled(ctx, idJSON)
			return nil, c.classify(ctx, op, ctx.Err())
		}
	case <-c.done:
		select {
		case rep = <-pend.reply: // the answer came before the end
		default:
			// What go-sdk's pending calls fail with when stdout ends, unless
			// the launcher recorded a fault (an oversized frame).
			err := fmt.Errorf("calling %q: %w", "tools/call", io.EOF)
			if ctx.Err() != nil || c.life.Err() != nil {
				return nil, c.classify(ctx, op, err)
			}
			cause := c.cause(err)
			if errors.Is(cause, launcher.ErrFrameTooLarge) {
				return nil, fault.New(fault.CodeTooLarge, c.server.Name, op, cause)
			}
			// The request was written: the server may have run the tool.
			return nil, fault.New(fault.CodeUnknownOutcome, c.server.Name, op, cause)
		}
	}
	switch {
	case rep.rpcErr != nil:
		return nil, c.classify(ctx, op, fmt.Errorf("calling %q: %w", "tools/call", rep.rpcErr))
	case rep.bad != nil:
		return nil, fault.New(fault.CodeServerError, c.server.Name, op, rep.bad)
	}
	return rep.result, nil
}

// rawStdioCancelled tells the server that the call was abandoned, as
// go-sdk does (notifications/cancelled, best effort, off the caller's path).
func (c *Conn) rawStdioCancelled(ctx context.Context, idJSON []byte) {
	reason, _ := json.Marshal(ctx.Err().Error())
	frame := make([]byte, 0, 128)
	frame = append(frame, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":`...)
	frame = append(frame, reason...)
	frame = append(frame, `,"requestId":`...)
	frame = append(frame, idJSON...)
	frame = append(frame, "}}\n"...)
	p := c.proc
	// A child that does not read its stdin blocks the write until the stop
	// sequence closes the pipe (Close stops the process before waiting).
	c.raw.goBG(func() { p.WriteFrame(frame) })
}
