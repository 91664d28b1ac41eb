package frontdoor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// DefaultMaxPendingConns is how many connections may be open at once
// without having presented a valid credential (see [ConnLimit]).
const DefaultMaxPendingConns = 64

// RefusedConnEvicted is the reason given to Options.OnRefuse (through
// [ConnLimit]'s onEvict) for a connection closed because too many had not
// authenticated.
const RefusedConnEvicted = "conn_evicted"

// ConnLimit bounds the connections that have not authenticated. Every
// connection a listener accepts is pending until one of its requests
// passes the front door's authentication (a request of a front door with
// NoAuth passes at once); pending connections are few, and the oldest is
// closed when a new one would be one too many. A client that has not yet
// shown a credential (an unauthenticated /healthz, a POST answered 401, a
// connection that sends nothing) thus cannot hold file descriptors that
// authenticated clients need, however many connections it opens; an
// authenticated client's connection is never closed for another's.
//
// Wrap the listener with Listener and give ConnContext to the
// http.Server; the front door finds the connection of a request in its
// context.
type ConnLimit struct {
	max     int    // fixed
	onEvict func() // fixed; may be nil

	mu sync.Mutex
	// The pending connections in the order they were accepted: oldest
	// is closed first. Guarded by mu.
	oldest, newest *pendingConn
	pending        int // their number; guarded by mu
}

// NewConnLimit returns a limit of max pending connections (0:
// DefaultMaxPendingConns; negative is an error). onEvict, when set, is
// called once for each connection closed to make room; it must not block.
func NewConnLimit(max int, onEvict func()) (*ConnLimit, error) {
	switch {
	case max < 0:
		return nil, fmt.Errorf("frontdoor: the cap on connections that have not authenticated is negative (%d)", max)
	case max == 0:
		max = DefaultMaxPendingConns
	}
	return &ConnLimit{max: max, onEvict: onEvict}, nil
}

// Listener returns ln with its connections under the limit.
func (l *ConnLimit) Listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, l: l}
}

// ConnContext records c in ctx, for http.Server.ConnContext, so that the
// front door can mark it authenticated.
func (l *ConnLimit) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if pc, ok := c.(*pendingConn); ok && pc.l == l {
		return context.WithValue(ctx, pendingConnKey{}, pc)
	}
	return ctx
}

// Pending returns the number of connections that have not authenticated.
func (l *ConnLimit) Pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pending
}

type pendingConnKey struct{}

// authenticated marks the connection of a request's ctx as having
// presented a valid credential: it is no longer pending. A ctx without
// one (a server without a ConnLimit) is left alone.
func authenticated(ctx context.Context) {
	if pc, ok := ctx.Value(pendingConnKey{}).(*pendingConn); ok {
		pc.l.unlink(pc)
	}
}

type limitedListener struct {
	net.Listener
	l *ConnLimit
}

func (ll *limitedListener) Accept() (net.Conn, error) {
	c, err := ll.Listener.Accept()
	if err != nil {
		return nil, err
	}
	pc := &pendingConn{Conn: c, l: ll.l}
	if victim := ll.l.add(pc); victim != nil {
		victim.Conn.Close()
		if ll.l.onEvict != nil {
			ll.l.onEvict()
		}
	}
	return pc, nil
}

// pendingConn is a connection accepted under a ConnLimit.
type pendingConn struct {
	net.Conn
	l *ConnLimit // fixed

	// Guarded by l.mu.
	linked     bool // pending: in l's list
	prev, next *pendingConn
}

// Close takes the connection off the pending list and closes it.
func (c *pendingConn) Close() error {
	c.l.unlink(c)
	err := c.Conn.Close()
	if errors.Is(err, net.ErrClosed) {
		// Evicted: closed already, and the server's close is no error.
		return nil
	}
	return err
}

// add puts c at the newest end of the pending list and, when that makes
// one too many, takes the oldest off and returns it for the caller to
// close.
func (l *ConnLimit) add(c *pendingConn) (victim *pendingConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.linked, c.prev = true, l.newest
	if l.newest != nil {
		l.newest.next = c
	} else {
		l.oldest = c
	}
	l.newest = c
	l.pending++
	if l.pending <= l.max {
		return nil
	}
	victim = l.oldest
	l.unlinkLocked(victim)
	return victim
}

// unlink takes c off the pending list, if it is on it.
func (l *ConnLimit) unlink(c *pendingConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unlinkLocked(c)
}

func (l *ConnLimit) unlinkLocked(c *pendingConn) {
	if !c.linked {
		return
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		l.oldest = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		l.newest = c.prev
	}
	c.linked, c.prev, c.next = false, nil, nil
	l.pending--
}
