package mcphttp

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of [SessionLimitOptions].
const (
	// DefaultMaxSessions caps the legacy sessions of all the handlers
	// that share a SessionLimits (a server and its profiles).
	DefaultMaxSessions = 4096
	// DefaultMaxSessionsPerClient caps the legacy sessions of one client.
	DefaultMaxSessionsPerClient = 256
	// DefaultSessionRetryAfter is the Retry-After of a new session refused
	// at the global cap.
	DefaultSessionRetryAfter = 30 * time.Second
)

// SessionLimitOptions configure [NewSessionLimits]. Nil means defaults.
type SessionLimitOptions struct {
	// Max caps the legacy sessions open at once; a request for a new one
	// past it is answered 503 with Retry-After, and no session is closed
	// for it. Default DefaultMaxSessions.
	Max int
	// PerClient caps the legacy sessions of one client (as Client names
	// it); a new session past it closes that client's idlest session: the
	// one with no call running whose last request is the oldest. When
	// every one of them has a call running, the new session is refused as
	// at Max. Default DefaultMaxSessionsPerClient, or Max when Client is
	// nil (a flood then closes the idlest sessions rather than lock
	// everyone out); at most Max.
	PerClient int
	// Client names the client that asks for a session: the gateway's
	// caller identity. Default: every request is from one client.
	Client func(*http.Request) string
	// RetryAfter is the Retry-After of a refusal, rounded up to seconds;
	// default DefaultSessionRetryAfter.
	RetryAfter time.Duration
}

// SessionLimits bounds the legacy sessions of the Handlers that share it
// (HandlerOptions.Sessions). go-sdk's stateful handler keeps the sessions
// and closes them; this only counts them, by the Mcp-Session-Id of the
// answer that opened each, and closes one through go-sdk (as a DELETE
// does) to make room. A session leaves the count when go-sdk closes it,
// whatever the reason: a DELETE, the session timeout, a shutdown, or this.
type SessionLimits struct {
	// Fixed at creation.
	max, perClient int
	client         func(*http.Request) string
	retryAfter     string // seconds

	mu sync.Mutex
	// Guarded by mu.
	sessions map[string]*sessionEntry // by session ID
	clients  map[string]*clientSessions
	total    int    // sessions counted and slots reserved
	clock    uint64 // ticks at every request on a session: the order of use
}

// clientSessions is one client's share: its sessions and the slots it
// reserved for sessions being opened. Guarded by SessionLimits.mu.
type clientSessions struct {
	sessions map[*sessionEntry]struct{}
	reserved int
}

// sessionEntry is one counted session. Its fields other than the fixed
// ones are guarded by SessionLimits.mu.
type sessionEntry struct {
	id, client string             // fixed
	ss         *mcp.ServerSession // fixed
	used       uint64             // the clock at the last POST's start or end
	busy       int                // POSTs running
}

// NewSessionLimits returns limits for Handlers to share.
func NewSessionLimits(opts *SessionLimitOptions) *SessionLimits {
	var o SessionLimitOptions
	if opts != nil {
		o = *opts
	}
	if o.Max <= 0 {
		o.Max = DefaultMaxSessions
	}
	if o.PerClient <= 0 {
		o.PerClient = DefaultMaxSessionsPerClient
		if o.Client == nil {
			o.PerClient = o.Max
		}
	}
	o.PerClient = min(o.PerClient, o.Max)
	if o.RetryAfter <= 0 {
		o.RetryAfter = DefaultSessionRetryAfter
	}
	if o.Client == nil {
		o.Client = func(*http.Request) string { return "" }
	}
	return &SessionLimits{
		max: o.Max, perClient: o.PerClient, client: o.Client,
		retryAfter: strconv.Itoa(int((o.RetryAfter + time.Second - 1) / time.Second)),
		sessions:   map[string]*sessionEntry{},
		clients:    map[string]*clientSessions{},
	}
}

// Len returns the number of sessions counted.
func (l *SessionLimits) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sessions)
}

// serveStateful serves r, peeked as method, through the stateful handler
// of h, counting the session it names or opens.
func (l *SessionLimits) serveStateful(h *Handler, w http.ResponseWriter, r *http.Request, method string) {
	if id := r.Header.Get(sessionIDHeader); id != "" {
		if r.Method == http.MethodPost {
			// Only a POST is use, as for go-sdk's session timeout: a
			// GET stream opened again is not.
			defer l.use(id)()
		}
		h.stateful.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost || (method != "" && method != "initialize") {
		// go-sdk keeps no session for a request without one that is
		// not an initialize: it closes the session it made for it.
		h.stateful.ServeHTTP(w, r)
		return
	}
	// An initialize (or a body the router could not read, a batch) opens
	// a session.
	client := l.client(r)
	victim, ok := l.reserve(client)
	if !ok {
		h.logger.Debug("mcp: new session refused: too many sessions", "client", client)
		w.Header().Set("Retry-After", l.retryAfter)
		http.Error(w, "Service Unavailable: too many sessions are open; try again later", http.StatusServiceUnavailable)
		return
	}
	if victim != nil {
		// go-sdk's own close, as for a DELETE: it forgets the session.
		h.logger.Debug("mcp: idlest session closed for a new one of its client", "client", client, "session", victim.ID()[:min(6, len(victim.ID()))])
		victim.Close()
	}
	// Deferred: a handler that panics (net/http recovers) gives its slot
	// back too.
	defer func() { l.settle(h.server, client, w.Header().Get(sessionIDHeader)) }()
	h.stateful.ServeHTTP(w, r)
}

// use marks session id used, and busy until the function returned is
// called.
func (l *SessionLimits) use(id string) (done func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.sessions[id]
	if e == nil {
		return func() {}
	}
	l.clock++
	e.used = l.clock
	e.busy++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.clock++
		e.used = l.clock
		e.busy--
	}
}

// reserve takes a slot for a session client is opening. At client's cap,
// it takes the slot of that client's idlest session, which it returns for
// the caller to close. ok is false when there is no slot: the global cap
// is reached, or every session of client at its cap has a call running.
func (l *SessionLimits) reserve(client string) (victim *mcp.ServerSession, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cs := l.clients[client]
	if cs == nil {
		cs = &clientSessions{sessions: map[*sessionEntry]struct{}{}}
		l.clients[client] = cs
	}
	if len(cs.sessions)+cs.reserved < l.perClient {
		if l.total >= l.max {
			l.forgetIfEmpty(client, cs)
			return nil, false
		}
		cs.reserved++
		l.total++
		return nil, true
	}
	var idlest *sessionEntry
	for e := range cs.sessions {
		if e.busy == 0 && (idlest == nil || e.used < idlest.used) {
			idlest = e
		}
	}
	if idlest == nil {
		return nil, false
	}
	// The slot passes from the idlest session to the new one (reserved
	// first, so that the client's share is not forgotten meanwhile).
	cs.reserved++
	l.total++
	l.removeLocked(idlest)
	return idlest.ss, true
}

// settle turns client's reserved slot into the count of the session id
// that the request opened, or gives it back when it opened none (id is
// empty, or go-sdk closed the session: its initialize failed).
func (l *SessionLimits) settle(server *mcp.Server, client, id string) {
	var ss *mcp.ServerSession
	if id != "" {
		for s := range server.Sessions() {
			if s.ID() == id {
				ss = s
				break
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	cs := l.clients[client]
	cs.reserved--
	if ss == nil || l.sessions[id] != nil {
		l.total--
		l.forgetIfEmpty(client, cs)
		return
	}
	l.clock++
	e := &sessionEntry{id: id, client: client, ss: ss, used: l.clock}
	l.sessions[id] = e
	cs.sessions[e] = struct{}{}
	// The count follows go-sdk's own end of the session. The goroutine
	// ends with the session: a shutdown closes them all.
	go func() {
		ss.Wait()
		l.remove(e)
	}()
}

// remove takes e out of the count, unless it is out already.
func (l *SessionLimits) remove(e *sessionEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.removeLocked(e)
}

func (l *SessionLimits) removeLocked(e *sessionEntry) {
	if l.sessions[e.id] != e {
		return
	}
	delete(l.sessions, e.id)
	cs := l.clients[e.client]
	delete(cs.sessions, e)
	l.total--
	l.forgetIfEmpty(e.client, cs)
}

func (l *SessionLimits) forgetIfEmpty(client string, cs *clientSessions) {
	if len(cs.sessions) == 0 && cs.reserved == 0 {
		delete(l.clients, client)
	}
}
