package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// Parking bridges a legacy upstream's server-to-client requests to a
// 2026-07-28 client, which has no such requests: it answers a call with an
// input-required result and retries it with the answers.
//
// A 2026-07-28 client's tool call runs in the background. When its legacy
// upstream asks something mid-call (the request arrives on the connection
// and blocks the upstream until answered), the handler answers the client
// with an input-required result whose requestState names the parked call;
// the call stays blocked on the question. The client's retry carries the
// answer: the parked call resumes, and the handler waits again for the
// result or the next question. A parked call the client abandons expires
// after stateTTL and is cancelled.
//
// A parked call lives in the memory of the gateway that started it, so its
// state names that gateway (Gateway.replica) as well as the call:
// "park:<replica>.<id>". A retry that reaches another gateway (another
// replica behind a load balancer, or another profile's gateway) cannot
// resume it, and is told, as for an expired call, to call the tool again.

// parkedCall is a call running on behalf of a 2026-07-28 client.
type parkedCall struct {
	id     string         // made when the call first parks; "" until then
	asks   chan *question // questions from the upstream, one at a time
	done   chan outcome   // the call's end; buffered
	cancel context.CancelFunc

	mu      sync.Mutex
	pending *question // asked of the client, not answered yet
	expiry  *time.Timer
}

// question is one server-to-client request waiting for the client.
type question struct {
	req   mcp.InputRequest
	reply chan answer // buffered
}

type answer struct {
	resp mcp.InputResponse
	err  error
}

type outcome struct {
	res *host.Result
	err error
}

// questionKey is the input-request ID the gateway uses for a parked
// question.
const questionKey = "switchboard"

// parkPrefix marks a sealed state that names a parked call.
const parkPrefix = "park:"

// callGone answers a retry for a parked call this gateway does not hold:
// it has ended, expired, or waits in another replica.
func callGone() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the call waiting for this input has ended or expired; call the tool again"}
}

// parkedState is what the sealed state of a parked call holds.
func (g *Gateway) parkedState(id string) string { return parkPrefix + g.replica + "." + id }

// startParked runs call in the background for a 2026-07-28 client.
func (g *Gateway) startParked(ctx context.Context, p *peer, call func(context.Context) (*host.Result, error)) *parkedCall {
	// The ID is made when the call first parks: most calls never do.
	pc := &parkedCall{asks: make(chan *question), done: make(chan outcome, 1)}
	// The call outlives the request that started it (its answer may come
	// on a retry); the host's call timeout and the expiry bound it.
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pc.cancel = cancel
	p.asks, p.bg = pc.asks, bg
	go func() {
		res, err := call(bg)
		pc.done <- outcome{res, err}
	}()
	return pc
}

// newToken returns 128 random bits in hex: a parked call's ID.
func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// await waits for the parked call's end or its next question. A question
// parks the call and becomes an input-required result for the client.
func (g *Gateway) await(ctx context.Context, tool string, pc *parkedCall) (*outcome, *mcp.CallToolResult, error) {
	select {
	case out := <-pc.done:
		g.unpark(pc)
		return &out, nil, nil
	case q := <-pc.asks:
		if pc.id == "" {
			pc.id = newToken()
		}
		pc.mu.Lock()
		pc.pending = q
		if pc.expiry != nil {
			pc.expiry.Stop()
		}
		pc.expiry = time.AfterFunc(stateTTL, func() { g.expire(pc) })
		pc.mu.Unlock()
		g.parkMu.Lock()
		g.parked[pc.id] = pc
		g.parkMu.Unlock()
		return nil, &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{questionKey: q.req},
			RequestState:  g.states.seal(tool, g.parkedState(pc.id)),
		}, nil
	case <-ctx.Done():
		pc.cancel()
		g.unpark(pc)
		return nil, nil, ctx.Err()
	}
}

// resume answers a parked call's pending question with the client's
// input; parked is what followed parkPrefix in the call's state.
func (g *Gateway) resume(parked string, responses mcp.InputResponseMap) (*parkedCall, error) {
	replica, id, _ := strings.Cut(parked, ".")
	if replica != g.replica {
		g.log.Debug("input for a call parked in another replica", "replica", replica)
		return nil, callGone()
	}
	g.parkMu.Lock()
	pc := g.parked[id]
	delete(g.parked, id)
	g.parkMu.Unlock()
	if pc == nil {
		return nil, callGone()
	}
	pc.mu.Lock()
	q := pc.pending
	pc.pending = nil
	pc.mu.Unlock()
	resp, ok := responses[questionKey]
	if q == nil || !ok {
		// The question stays open: park again and ask the same.
		g.parkMu.Lock()
		g.parked[id] = pc
		g.parkMu.Unlock()
		pc.mu.Lock()
		pc.pending = q
		pc.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses lacks %q", questionKey)}
	}
	q.reply <- answer{resp: resp}
	return pc, nil
}

func (g *Gateway) unpark(pc *parkedCall) {
	if pc.id != "" {
		g.parkMu.Lock()
		delete(g.parked, pc.id)
		g.parkMu.Unlock()
	}
	pc.mu.Lock()
	if pc.expiry != nil {
		pc.expiry.Stop()
	}
	pc.mu.Unlock()
}

// expire ends a call whose client never came back with the input.
func (g *Gateway) expire(pc *parkedCall) {
	g.parkMu.Lock()
	_, waiting := g.parked[pc.id]
	delete(g.parked, pc.id)
	g.parkMu.Unlock()
	if waiting {
		g.log.Info("parked call expired: its client never answered", "id", pc.id)
		pc.cancel()
	}
}

// ask puts a server-to-client request to the parked call's client and
// waits for the answer (or for the call to end).
func (p *peer) ask(ctx context.Context, req mcp.InputRequest) (mcp.InputResponse, error) {
	if p.asks == nil {
		return nil, errModern
	}
	q := &question{req: req, reply: make(chan answer, 1)}
	select {
	case p.asks <- q:
	case <-p.bg.Done():
		return nil, p.bg.Err()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case a := <-q.reply:
		return a.resp, a.err
	case <-p.bg.Done():
		return nil, p.bg.Err()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var errWrongAnswer = errors.New("the client's answer does not fit the question")
