package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The relay answers a legacy server's requests to the client (sampling,
// elicitation, roots/list, ping) that arrive on the stream of a raw
// tools/call (rawcall.go), where go-sdk's client session does not see
// them.
//
// It answers them with go-sdk's own client code rather than a copy of it:
// a second go-sdk client, made with the connection's options (newClient:
// the same handlers, the same capabilities, roots from the call's peer),
// connected in memory to a stand-in server that this file drives. The
// stand-in completes the handshake, then passes each request on under an
// ID of its own and takes go-sdk's answer, which goes to the upstream
// server as a POST on the call's session, under the server's request ID,
// as go-sdk posts it. So elicitation schemas are checked, results
// validated and refusals worded exactly as on the go-sdk path; the
// handlers find the call's peer as they do there (peerFor: the client of
// the calls in flight).
//
// The relay session is made on first use and lives as long as the
// connection; one that failed is made anew on the next request.

// relay is the stand-in server's end of the relay session.
type relay struct {
	conn mcp.Connection     // the stand-in server's side
	cs   *mcp.ClientSession // go-sdk's client, on the other side

	mu     sync.Mutex
	next   int64                            // the last relay request ID
	waits  map[int64]chan *jsonrpc.Response // answers awaited, by relay ID
	closed error                            // why the session ended; nil while alive
}

// relayState holds the connection's relay.
type relayState struct {
	mu     sync.Mutex // held while a relay is made
	r      *relay
	closed bool // the connection is closing: make no more
}

// close ends the relay session, if one was made; no new one is made after.
func (rs *relayState) close() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.closed = true
	if rs.r != nil {
		rs.r.close()
	}
}

// relayTimeout bounds the handshake of the relay session (in memory).
const relayTimeout = 5 * time.Second

// relay returns the connection's relay session, making it on first use
// and again after it failed.
func (c *Conn) relay() (*relay, error) {
	rs := &c.raw.relay
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.closed {
		return nil, errors.New("the connection is closing")
	}
	if rs.r != nil && rs.r.alive() {
		return rs.r, nil
	}
	if rs.r != nil {
		rs.r.close()
		rs.r = nil
	}
	r, err := c.startRelay()
	if err != nil {
		return nil, err
	}
	rs.r = r
	return r, nil
}

func (c *Conn) startRelay() (*relay, error) {
	ct, st := mcp.NewInMemoryTransports()
	sconn, err := st.Connect(c.life)
	if err != nil {
		return nil, err
	}
	r := &relay{conn: sconn, waits: map[int64]chan *jsonrpc.Response{}}
	// The in-memory pipe has no buffer: serve reads until the pipe is
	// closed, whatever else has ended, so that no write of go-sdk's
	// (a late answer, a cancellation notice) can block its Close.
	go r.serve(c.info.ProtocolVersion)
	ctx, cancel := context.WithTimeout(c.life, relayTimeout)
	defer cancel()
	cs, err := c.newClient().Connect(ctx, ct, nil)
	if err != nil {
		sconn.Close()
		return nil, fmt.Errorf("relay session: %w", err)
	}
	r.cs = cs
	return r, nil
}

// alive reports whether the relay session still serves.
func (r *relay) alive() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed == nil
}

// close ends the relay session: the pipe first, so that go-sdk's side
// fails its writes at once and its Close does not wait on them.
func (r *relay) close() {
	r.conn.Close()
	if r.cs != nil {
		r.cs.Close()
	}
}

// serve is the stand-in server: it answers the handshake and pings, and
// hands answers to the requests passed on to those who wait for them.
func (r *relay) serve(version string) {
	ctx := context.Background() // ends when the pipe is closed
	defer func() {
		r.mu.Lock()
		if r.closed == nil {
			r.closed = errors.New("relay session closed")
		}
		for id, ch := range r.waits {
			close(ch)
			delete(r.waits, id)
		}
		r.mu.Unlock()
	}()
	for {
		msg, err := r.conn.Read(ctx)
		if err != nil {
			r.mu.Lock()
			r.closed = fmt.Errorf("relay session: %w", err)
			r.mu.Unlock()
			return
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			if !m.IsCall() {
				continue // notifications/initialized and the like
			}
			resp := &jsonrpc.Response{ID: m.ID}
			switch m.Method {
			case "initialize":
				resp.Result, _ = json.Marshal(map[string]any{
					"protocolVersion": version,
					"capabilities":    map[string]any{},
					"serverInfo":      map[string]any{"name": "switchboard-relay", "version": "0"},
				})
			case "ping":
				resp.Result = json.RawMessage("{}")
			default: // server/discover among them: the session is legacy
				resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
			}
			if err := r.conn.Write(ctx, resp); err != nil {
				return
			}
		case *jsonrpc.Response:
			id, ok := m.ID.Raw().(int64)
			if !ok {
				continue
			}
			r.mu.Lock()
			ch := r.waits[id]
			delete(r.waits, id)
			r.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

// ask passes a server's request to go-sdk's client and returns its answer.
func (r *relay) ask(ctx context.Context, method string, params json.RawMessage) (*jsonrpc.Response, error) {
	ch := make(chan *jsonrpc.Response, 1)
	r.mu.Lock()
	if r.closed != nil {
		err := r.closed
		r.mu.Unlock()
		return nil, err
	}
	r.next++
	id := r.next
	r.waits[id] = ch
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.waits, id)
		r.mu.Unlock()
	}()
	jid, err := jsonrpc.MakeID(float64(id)) // as a decoded number: int64
	if err != nil {
		return nil, err
	}
	if err := r.conn.Write(ctx, &jsonrpc.Request{ID: jid, Method: method, Params: params}); err != nil {
		return nil, err
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, errors.New("relay session closed")
		}
		return resp, nil
	case <-ctx.Done():
		// go-sdk's client stops the handler as it would for a server's
		// cancellation.
		note, _ := json.Marshal(map[string]any{"requestId": id, "reason": ctx.Err().Error()})
		wctx, cancel := context.WithTimeout(context.Background(), time.Second)
		r.conn.Write(wctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: note})
		cancel()
		return nil, ctx.Err()
	}
}

// relayRequest answers a legacy server's request seen on a raw call's
// stream, in the background: the stream goes on being read meanwhile, as
// go-sdk's does. The answer is abandoned when the call ends.
func (c *Conn) relayRequest(ctx context.Context, data []byte) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		c.log.Warn("request from the server not understood", "err", err)
		return
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	key, ask := relayKey(req.ID), &relayAsk{cancel}
	c.raw.relayAsks.Store(key, ask)
	c.raw.goBG(func() {
		defer func() {
			c.raw.relayAsks.CompareAndDelete(key, ask)
			cancel()
		}()
		resp := &jsonrpc.Response{ID: req.ID}
		r, err := c.relay()
		if err == nil {
			var answer *jsonrpc.Response
			if answer, err = r.ask(ctx, req.Method, req.Params); err == nil {
				resp.Result, resp.Error = answer.Result, answer.Error
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return // the call is over, or the server gave up asking
			}
			c.log.Warn("request from the server not answered", "method", req.Method, "err", err)
			resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		body, err := jsonrpc.EncodeMessage(resp)
		if err != nil {
			c.log.Warn("answer to the server not encodable", "method", req.Method, "err", err)
			return
		}
		c.rawPost(c.life, body, "")
	})
}

// relayKey names a server's request by its ID (a number or a string).
func relayKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// relayCancelled handles a legacy server's notifications/cancelled for a
// request it made on a call's stream: the client's handler is stopped, as
// go-sdk's session stops it, and no answer is sent.
func (c *Conn) relayCancelled(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return
	}
	if ask, ok := c.raw.relayAsks.LoadAndDelete(relayKey(id)); ok {
		ask.(*relayAsk).cancel()
	}
}

// relayAsk is a server's request being answered.
type relayAsk struct{ cancel context.CancelFunc }
