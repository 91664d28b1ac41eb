package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// A server with "oauth.perCaller" acts upstream as each caller: a caller
// that authenticated (a named client, or a JWT's subject) calls through a
// connection of its own, whose OAuth handler holds that caller's grant
// alone (grants.go), so that no request made for one caller can carry
// another's token: go-sdk's transport takes the token from the
// connection's handler at each request, and handlers are never shared.
// The operator (the CLI, the gateway's static token, a caller without
// an identity) uses the server's one connection and the operator's grant,
// which also discovers the server's tools: the catalogue, its pins and
// the lockfile are the server's, whoever calls. A caller's connection
// carries its calls, resource reads, prompts and completions; it is
// dialled at its first use, kept while used, closed after
// OAuthOptions.CallerIdle without use, and the least recently used idle
// one is closed when OAuthOptions.MaxCallerConns are open. A dial that
// fails is not kept: the next call dials again.

// Defaults of OAuthOptions.MaxCallerConns and CallerIdle.
const (
	DefaultMaxCallerConns = 256
	DefaultCallerIdle     = 10 * time.Minute
)

// grantRecheck is how often a caller's connection checks that its grant
// is still kept: a logout on another replica, or by `switchboard logout
// --caller`, retires it within that time.
var grantRecheck = 30 * time.Second

// callerKey names one caller's connection to one server: with its own
// grant, or with tokens exchanged for the caller's (exchange).
type callerKey struct {
	server, caller string
	exchange       bool
}

// callerPool holds the callers' connections.
type callerPool struct {
	max  int             // fixed at init
	idle time.Duration   // fixed at init
	wg   *sync.WaitGroup // the Host's watchers, which own the closing goroutines; fixed at init

	mu     sync.Mutex
	conns  map[callerKey]*callerConn // guarded by mu
	closed bool                      // guarded by mu: closeAll ran
}

// callerConn is one caller's connection to one server, or its dial in
// progress.
type callerConn struct {
	key   callerKey
	cfg   *config.Server // the settings it was dialled with: a reload that changes them dials anew
	ready chan struct{}  // closed when the dial has ended
	conn  *upstream.Conn // written before ready closes; nil when the dial failed
	err   error          // written before ready closes

	inflight atomic.Int64 // uses in progress, the dial's wait included
	lastUse  atomic.Int64 // UnixNano of the last use's start or end
	retired  bool         // guarded by callerPool.mu: out of the pool, closed when its last use ends
	checked  atomic.Int64 // UnixNano of the last check that its grant is still kept
	// subject is the caller's latest access token, for a connection
	// that exchanges it (callerKey.exchange).
	subject atomic.Pointer[string]
}

func (p *callerPool) init(o *OAuthOptions, wg *sync.WaitGroup) {
	p.max, p.idle, p.wg = DefaultMaxCallerConns, DefaultCallerIdle, wg
	if o != nil && o.MaxCallerConns > 0 {
		p.max = o.MaxCallerConns
	}
	if o != nil && o.CallerIdle > 0 {
		p.idle = o.CallerIdle
	}
}

// dead reports whether c's dial ended without a live connection.
func (c *callerConn) dead() bool {
	select {
	case <-c.ready:
	default:
		return false
	}
	if c.conn == nil {
		return true
	}
	select {
	case <-c.conn.Done():
		return true
	default:
		return false
	}
}

// perCallerLogins reports whether sc's callers log in as themselves:
// "oauth.perCaller", or its report-only mode.
func perCallerLogins(sc *config.Server) bool {
	return sc.OAuth != nil && (sc.OAuth.PerCaller || sc.OAuth.PerCallerReport) && sc.Transport == config.TransportHTTP
}

// wouldUse is the report-only decision about a call of identity to sc
// ("perCaller": "report"), made with the server's one grant: whether the
// caller has a grant of its own (or a token to exchange), "" for other
// servers and for the operator.
func (h *Host) wouldUse(ctx context.Context, sc *config.Server, identity, subjectToken string) string {
	if identity == "" || sc.OAuth == nil || !sc.OAuth.PerCallerReport || sc.Transport != config.TransportHTTP {
		return ""
	}
	if sc.OAuth.TokenExchange && subjectToken != "" {
		return GrantWouldOwn
	}
	if ts, err := (callerGrants{h: h, caller: identity}).Load(ctx, sc.URL); err == nil && len(ts) > 0 {
		return GrantWouldOwn
	}
	return GrantWouldLogin
}

// perCaller returns the identity whose own grant a call to sc uses, ""
// when the call uses the server's one connection.
func perCaller(sc *config.Server, identity string) string {
	if sc.OAuth == nil || !sc.OAuth.PerCaller || sc.Transport != config.TransportHTTP {
		return ""
	}
	return identity
}

// callerConn returns caller's connection to s, dialling it when there is
// none. The caller must call release when done with it.
func (h *Host) callerConn(ctx context.Context, s *server, sc *config.Server, caller, subjectToken string) (*callerConn, error) {
	k := callerKey{server: s.name, caller: caller, exchange: sc.OAuth.TokenExchange && subjectToken != ""}
	if h.opts.OAuth == nil || (!k.exchange && (h.grantKeys == nil || h.store == nil)) {
		return nil, fault.New(fault.CodeNeedsLogin, s.name, "", errPerCallerOff)
	}
	p := &h.callers
	now := time.Now()
	var stale []*callerConn
	p.mu.Lock()
	if p.closed || h.closed.Load() {
		p.mu.Unlock()
		return nil, fault.New(fault.CodeUnavailable, s.name, "", errors.New("the host is closed"))
	}
	if p.conns == nil {
		p.conns = map[callerKey]*callerConn{}
	}
	stale = p.idleLocked(now, stale)
	c := p.conns[k]
	if c != nil && (c.cfg != sc || c.dead()) {
		stale = p.retire(c, stale)
		c = nil
	}
	if c == nil {
		if len(p.conns) >= p.max {
			lru := p.lruIdle()
			if lru == nil {
				p.mu.Unlock()
				p.closeConns(stale)
				return nil, fault.New(fault.CodeUnavailable, s.name, "", fmt.Errorf("%d callers' connections are in use, the most this gateway holds (OAuthOptions.MaxCallerConns)", p.max))
			}
			stale = p.retire(lru, stale)
		}
		c = &callerConn{key: k, cfg: sc, ready: make(chan struct{})}
		c.lastUse.Store(now.UnixNano())
		c.checked.Store(now.UnixNano())
		c.subject.Store(&subjectToken)
		p.conns[k] = c
		h.watchers.Go(func() { h.dialCaller(c, s) })
	}
	c.inflight.Add(1)
	if k.exchange {
		// The caller's latest token is the one exchanged next.
		c.subject.Store(&subjectToken)
	}
	p.mu.Unlock()
	p.closeConns(stale)
	select {
	case <-c.ready:
	case <-ctx.Done():
		p.release(c)
		return nil, fault.New(fault.CodeTimeout, s.name, "connect", fmt.Errorf("connecting as the caller: %w", ctx.Err()))
	}
	if c.conn == nil {
		p.release(c)
		p.forget(c)
		return nil, c.err
	}
	if !k.exchange && now.Sub(time.Unix(0, c.checked.Load())) > grantRecheck {
		c.checked.Store(now.UnixNano())
		if gs, err := (callerGrants{h: h, caller: caller}).Load(ctx, sc.URL); err == nil && len(gs) == 0 {
			// Logged out elsewhere: the connection's token in memory
			// must not outlive the grant.
			p.release(c)
			p.drop(s.name, caller)
			return h.callerConn(ctx, s, sc, caller, subjectToken)
		}
	}
	return c, nil
}

// idleLocked retires the connections unused for p.idle or whose dial
// failed, and returns gone with those to close now. p.mu is held.
func (p *callerPool) idleLocked(now time.Time, gone []*callerConn) []*callerConn {
	for _, c := range p.conns {
		if c.inflight.Load() == 0 && (c.dead() || now.Sub(time.Unix(0, c.lastUse.Load())) > p.idle) {
			gone = p.retire(c, gone)
		}
	}
	return gone
}

// sweep retires the idle connections, and those to servers that are no
// longer configured (configured reports which are), once a second.
func (p *callerPool) sweep(now time.Time, configured func(server string) bool) {
	p.mu.Lock()
	gone := p.idleLocked(now, nil)
	for k, c := range p.conns {
		if !configured(k.server) {
			gone = p.retire(c, gone)
		}
	}
	p.mu.Unlock()
	p.closeConns(gone)
}

// lruIdle is the least recently used connection without uses in
// progress, nil when every one is in use. p.mu is held.
func (p *callerPool) lruIdle() *callerConn {
	var lru *callerConn
	for _, c := range p.conns {
		if c.inflight.Load() == 0 && (lru == nil || c.lastUse.Load() < lru.lastUse.Load()) {
			lru = c
		}
	}
	return lru
}

// dialCaller dials c as its caller, bounded by the server's startup
// timeout and the Host's life.
func (h *Host) dialCaller(c *callerConn, s *server) {
	defer close(c.ready)
	ctx, cancel := upstream.WithStartup(h.life, c.cfg)
	defer cancel()
	o := h.opts
	// The server's list changes and resource updates reach the Host
	// through its one connection.
	o.OnListChanged, o.OnResourceUpdated = nil, nil
	oc := *h.opts.OAuth
	oc.TokensPath, oc.Authorize, oc.RedirectURL = "", nil, ""
	oc.Grants = callerGrants{h: h, caller: c.key.caller}
	oc.LoginHint = callerLoginHint
	if c.key.exchange {
		oc.Grants = nil
		oc.SubjectToken = func() (string, error) { return *c.subject.Load(), nil }
	}
	o.OAuth = &oc
	conn, err := upstream.Dial(ctx, c.cfg, &o)
	if err != nil {
		c.err = ownLogin(s.name, maskErr(c.cfg, err))
		return
	}
	c.conn = conn
	h.log.Debug("connected as a caller", "server", s.name, "caller", c.key.caller)
}

// ErrOwnLogin marks the needs_login failure of a caller that has no
// grant of its own for a server with "oauth.perCaller" (errors.Is): the
// caller logs in, not the operator.
var ErrOwnLogin = errors.New("needs a login of your own to this server")

// ownLogin is err, a caller's needs_login, marked ErrOwnLogin; other
// errors are returned as they are.
func ownLogin(server string, err error) error {
	if fault.CodeOf(err) != fault.CodeNeedsLogin || errors.Is(err, ErrOwnLogin) {
		return err
	}
	return needsOwnLogin(server)
}

// needsOwnLogin is the needs_login failure of a caller without a grant of
// its own for server.
func needsOwnLogin(server string) error {
	return fault.New(fault.CodeNeedsLogin, server, "", fmt.Errorf("%w (a client that declares URL-mode elicitation is offered it)", ErrOwnLogin))
}

// callerLoginHint says how a caller without a grant logs in.
const callerLoginHint = "a login of your own: a client that declares URL-mode elicitation is offered it"

// release ends one use of c, and closes c when it was retired and this
// was its last use.
func (p *callerPool) release(c *callerConn) {
	c.lastUse.Store(time.Now().UnixNano())
	p.mu.Lock()
	last := c.inflight.Add(-1) == 0 && c.retired
	p.mu.Unlock()
	if last {
		p.closeConns([]*callerConn{c})
	}
}

// retire takes c out of the pool: new uses dial afresh, and c is closed
// once the uses in progress end (a call in flight is never cut short).
// It returns gone with c added when c can be closed now. p.mu is held.
func (p *callerPool) retire(c *callerConn, gone []*callerConn) []*callerConn {
	if p.conns[c.key] == c {
		delete(p.conns, c.key)
	}
	if c.retired {
		return gone
	}
	c.retired = true
	if c.inflight.Load() == 0 {
		gone = append(gone, c)
	}
	return gone
}

// forget drops c from the pool when it is still there.
func (p *callerPool) forget(c *callerConn) {
	p.mu.Lock()
	if p.conns[c.key] == c {
		delete(p.conns, c.key)
	}
	p.mu.Unlock()
}

// drop retires caller's connections to server ("" for every server's),
// after a login or a logout changed the grant.
func (p *callerPool) drop(server, caller string) {
	var gone []*callerConn
	p.mu.Lock()
	for k, c := range p.conns {
		if k.caller == caller && (server == "" || k.server == server) {
			gone = p.retire(c, gone)
		}
	}
	p.mu.Unlock()
	p.closeConns(gone)
}

// closeAll closes every caller's connection, for Host.Close.
func (p *callerPool) closeAll() {
	p.mu.Lock()
	p.closed = true
	gone := make([]*callerConn, 0, len(p.conns))
	for _, c := range p.conns {
		gone = append(gone, c)
	}
	p.conns = nil
	p.mu.Unlock()
	p.closeConns(gone)
}

// closeConns closes the connections of cs; a dial in progress closes
// its connection once it ends.
func (p *callerPool) closeConns(cs []*callerConn) {
	for _, c := range cs {
		p.wg.Go(func() {
			<-c.ready
			if c.conn != nil {
				c.conn.Close()
			}
		})
	}
}

// callerConns returns how many callers' connections are open or being
// dialled, for the status page and tests.
func (h *Host) callerConns() int {
	h.callers.mu.Lock()
	defer h.callers.mu.Unlock()
	return len(h.callers.conns)
}

// subjectTokenOf is the caller's token a call's options carry.
func subjectTokenOf(opts *CallOptions) string {
	if opts == nil {
		return ""
	}
	return opts.SubjectToken
}

// identityOf is the identity a call's options carry (CallOptions.Client).
func identityOf(opts *CallOptions) string {
	if opts == nil {
		return ""
	}
	return opts.Client
}

// asWhom is who the upstream saw a call on c made by (CallRecord.As):
// the subject of the caller's grant, else "own grant" when its tokens do
// not say.
func asWhom(c *callerConn) string {
	if s := c.conn.AuthSubject(); s != "" {
		return s
	}
	return "own grant"
}

// viewConn is the connection a request of v's caller to server goes
// through: the caller's own for a server with "oauth.perCaller", else
// the server's one. done ends its use.
func (h *Host) viewConn(ctx context.Context, v *View, server string) (conn *upstream.Conn, done func(), err error) {
	s := h.comp.Load().servers[server]
	if s == nil {
		return nil, nil, fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server %q", server))
	}
	if conn, err = s.ensure(ctx); err != nil {
		return nil, nil, err
	}
	sc := s.cfg.Load()
	who := perCaller(sc, v.c.identity())
	if who == "" {
		return conn, func() {}, nil
	}
	c, err := h.callerConn(ctx, s, sc, who, v.c.Token)
	if err != nil {
		return nil, nil, err
	}
	return c.conn, func() { h.callers.release(c) }, nil
}
