package upstream

import (
	"context"
	"sync"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/era"
)

// A legacy client cannot be asked the 2026-07-28 way by a server that asks
// the legacy way: go-sdk refuses a server's sampling/createMessage,
// elicitation/create and roots/list requests on a 2026-07-28 connection
// (only multi-round-trip input requests are allowed there), and a server
// written for the legacy era asks with them. So a call made for a legacy
// client that may be asked something runs on a legacy connection to the
// same server, held beside the 2026-07-28 one: the legacy twin. The server
// then asks in the era its client speaks; a multi-round-trip server's
// input requests reach a legacy connection as real requests (go-sdk's
// server turns them into requests for a legacy session), so both kinds of
// server work.
//
// Only stdio servers get a twin (see wantsTwin). It is dialed on the first
// such call and lives as long as the connection. It is a second process of
// the server (one stdio process speaks one era: its one session is the one
// the handshake made), so a server that keeps state in memory has two
// copies of it; pinning "protocolVersion" avoids the twin (a pinned era is
// the only one spoken).
// A server that refuses the legacy handshake is never tried again on this
// connection: its calls stay on the 2026-07-28 one.

// VersionReporter is implemented by a peer that knows the protocol version
// its client speaks. A legacy one (before 2026-07-28) may have its calls
// routed to the legacy twin.
type VersionReporter interface {
	ProtocolVersion() string
}

// twin is the legacy connection held beside a 2026-07-28 one.
type twin struct {
	mu      sync.Mutex // guards the fields below; held while dialing
	conn    *Conn      // nil until dialed, or after it failed
	refused bool       // the legacy handshake failed: never again
	closed  bool       // the primary connection is closing: dial no more
}

// wantsTwin reports whether a call for peer should run on the legacy twin:
// the connection is to a stdio server and 2026-07-28 because Switchboard
// chose it (no pin), Switchboard forwards the server's requests, the
// peer's client speaks a legacy version and declared an ability the
// server may use. An HTTP server is left on the era it negotiated: a
// stateless one cannot ask the legacy way at all, and whether a server is
// stateless shows only once a legacy session is open.
func (c *Conn) wantsTwin(peer Peer) bool {
	if !c.opts.Forward || !c.modern() || c.server.ProtocolVersion != "" || c.server.Transport != config.TransportStdio {
		return false
	}
	v, ok := peer.(VersionReporter)
	if !ok || !era.Legacy(v.ProtocolVersion()) {
		return false
	}
	r, ok := peer.(CapabilityReporter)
	return ok && len(c.allowedCapabilities(forwardedCapabilities(r.ClientCapabilities()))) > 0
}

// legacyFor returns the connection a call for peer runs on: the legacy
// twin when the call wants it and the twin can be had, else c.
func (c *Conn) legacyFor(ctx context.Context, peer Peer) *Conn {
	if !c.wantsTwin(peer) {
		return c
	}
	t := &c.twin
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.refused || t.closed {
		return c
	}
	if t.conn != nil {
		if t.conn.Err() == nil {
			return t.conn
		}
		t.conn.Close()
		t.conn = nil
	}
	s := *c.server
	s.ProtocolVersion = era.LatestLegacy
	opts := c.opts
	opts.Logger = c.opts.Logger.With("era", "legacy")
	// The dial gives up with the call or the connection: Close never
	// waits for it.
	dctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.life, cancel)
	conn, err := Dial(dctx, &s, &opts)
	stop()
	cancel()
	if err != nil {
		if ctx.Err() == nil && c.life.Err() == nil {
			t.refused = true
			c.log.Info("legacy connection for a legacy client failed; its calls stay on the 2026-07-28 connection", "err", err)
		}
		return c
	}
	c.log.Debug("legacy connection for legacy clients", "protocol", conn.Info().ProtocolVersion)
	t.conn = conn
	return conn
}

// closeTwin closes the legacy twin, if any, and stops any further one.
func (c *Conn) closeTwin() error {
	t := &c.twin
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.conn == nil {
		return nil
	}
	err := t.conn.Close()
	t.conn = nil
	return err
}
