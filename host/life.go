package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/sandbox"
	"github.com/switchboard-mcp/switchboard/internal/supervise"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// life is a server's connection and its lifecycle: the state the status
// reports, the live connection and the attempt that made it, the dial in
// progress, an idle stop or a final stop, a hold on its launch, and the
// sandbox of its last process. It is one part of a server (see server);
// code outside it calls its methods, and every change of state goes
// through setStateLocked.
//
// mu guards every field below it. It is taken before the supervisor's own
// lock (claim acquires an attempt under it, restart resets the
// supervisor), and never held while dialling, calling or closing a
// connection, calling the store, or taking another part's lock.
type life struct {
	// Fixed at creation.
	h    *Host
	name string

	mu    sync.Mutex
	state State     // changed only by setStateLocked (or setUnseen, before anyone sees the server)
	since time.Time // when state last changed
	err   error     // why the last dial or connection failed, or why the launch is held; nil after a dial succeeds
	// loginAsked is when the dial that failed for want of an OAuth login
	// started; zero otherwise. A grant kept after it (login.go) starts
	// the server afresh.
	loginAsked time.Time
	conn       *upstream.Conn
	attempt    supervise.Attempt       // the Attempt that made conn
	caps       *mcp.ServerCapabilities // declared at the last handshake; kept when the connection ends
	dialing    chan struct{}           // closed when the dial in progress ends; nil when none
	idling     bool                    // conn is being closed for idleness
	stopped    bool                    // removed by Reload or closed with the Host: no connection is kept
	launchHeld string                  // "new", "changed", "unlocked" or "lockfile" while the server is held for its launch (launch.go); "" otherwise
	sandbox    sandbox.Status          // the sandbox of the last start (sandbox.go)
	sandboxSet bool                    // sandbox is known: the server started, or was refused, in this process
	limits     sandbox.Events          // what the limits did to the last process
}

// setStateLocked is the one way a running server's state changes. Called
// with l.mu held.
func (l *life) setStateLocked(to State) {
	if l.state == to {
		return
	}
	l.h.log.Debug("server state", "server", l.name, "from", l.state, "to", to)
	l.state, l.since = to, time.Now()
}

// setUnseen puts a server that nothing else sees yet (newServer) in a
// state, with its error; since is when it was first set.
func (l *life) setUnseen(to State, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.since.IsZero() {
		l.since = time.Now()
	}
	l.state, l.err = to, err
}

// currentState returns the server's state.
func (l *life) currentState() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state
}

// current returns the live connection; nil when none.
func (l *life) current() *upstream.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conn
}

// currentAttempt returns the Attempt that made the live connection.
func (l *life) currentAttempt() supervise.Attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.attempt
}

// dialInProgress returns a channel closed when the dial in progress ends;
// nil when none.
func (l *life) dialInProgress() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dialing
}

// claimKind is what ensure does next with a server (see claim).
type claimKind int

const (
	claimDial    claimKind = iota // dial under attempt; call dialed(dialing) when it ends
	claimLive                     // conn is live
	claimClosing                  // conn is being closed for idleness: wait for it to end
	claimWait                     // another dial is in progress: wait for wait
	claimLogin                    // no attempt granted, and a login was asked for: try again after it
	claimRefused                  // err says why the server cannot be dialled now
)

// claim is ensure's next step, decided under life.mu.
type claim struct {
	kind    claimKind
	conn    *upstream.Conn    // claimLive, claimClosing
	attempt supervise.Attempt // the Attempt of conn, or the one granted for claimDial
	wait    <-chan struct{}   // claimWait
	dialing chan struct{}     // claimDial: pass to dialed
	after   time.Duration     // claimLogin: when the supervisor allows the next attempt
	err     error             // claimRefused
}

// claim decides, in one step under life.mu, what a caller that wants the
// connection does: take the live one, wait for an idle close or a dial in
// progress, or dial under an attempt sup grants (marking the dial in
// progress, so that concurrent callers share it). A connection being
// closed for idleness is never handed out.
func (l *life) claim(sup *supervise.Supervisor) claim {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.launchHeld != "":
		return claim{kind: claimRefused, err: l.err}
	case l.conn != nil && l.idling:
		return claim{kind: claimClosing, conn: l.conn, attempt: l.attempt}
	case l.conn != nil:
		return claim{kind: claimLive, conn: l.conn, attempt: l.attempt}
	case l.dialing != nil:
		return claim{kind: claimWait, wait: l.dialing}
	}
	a, wait, ok := sup.Acquire()
	switch {
	case !ok && !l.loginAsked.IsZero():
		return claim{kind: claimLogin, after: wait}
	case !ok:
		return claim{kind: claimRefused, err: l.leftOutLocked(wait)}
	}
	ch := make(chan struct{})
	l.dialing = ch
	l.setStateLocked(StateStarting)
	return claim{kind: claimDial, attempt: a, dialing: ch}
}

// dialed ends the dial in progress that claim started.
func (l *life) dialed(ch chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dialing = nil
	close(ch)
}

// leftOut explains why the server cannot be dialled now.
func (l *life) leftOut(wait time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leftOutLocked(wait)
}

// leftOutLocked is leftOut, called with l.mu held.
func (l *life) leftOutLocked(wait time.Duration) error {
	msg := "the server is not connected"
	if l.err != nil {
		msg = fmt.Sprintf("the server failed: %s", withoutServer(l.err, l.name))
	}
	if wait > 0 {
		msg += fmt.Sprintf("; next attempt in %v", wait.Round(time.Second))
	}
	return fault.New(fault.CodeUnavailable, l.name, "", privateAs(l.err, errors.New(msg)))
}

// failed records a dial that failed with err; a dial that failed for want
// of a login, started at start, is remembered for retryAfterLogin. The
// state becomes sup's.
func (l *life) failed(err error, start time.Time, sup *supervise.Supervisor) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = err
	l.loginAsked = time.Time{}
	if fault.CodeOf(err) == fault.CodeNeedsLogin {
		l.loginAsked = start
	}
	l.setStateLocked(stateOf(sup))
}

// connected makes conn, made under a, the live connection, unless the
// Host is closed or the server stopped (the caller closes conn); watch is
// started under l.mu, after that check, so that Close, which sets closed
// before it takes each server's lock, waits for it. It reports whether
// conn was taken, and whether it follows a failure or a dropped
// connection.
func (l *life) connected(conn *upstream.Conn, a supervise.Attempt, watch func()) (ok, restarted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h.closed.Load() || l.stopped {
		return false, false
	}
	l.conn, l.attempt = conn, a
	l.caps = conn.Info().Capabilities
	restarted = l.err != nil // the last connection ended, or the last attempt failed
	l.err, l.loginAsked = nil, time.Time{}
	l.setStateLocked(StateReady)
	l.h.watchers.Go(watch)
	return true, restarted
}

// drop records that conn ended, once (watch, ensure and a call may all
// see it), and reports whether it was still the server's and whether it
// ended for idleness. The supervisor learns of it in the same critical
// section that clears the connection (a.Dropped, or sup.Reset after an
// idle stop: not a failure), so a call that finds no connection finds a
// supervisor that allows the redial, never one still Ready.
func (l *life) drop(conn *upstream.Conn, a supervise.Attempt, sup *supervise.Supervisor, err error) (ok, idle bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != conn || l.h.closed.Load() {
		return false, false
	}
	l.conn = nil
	select {
	case <-conn.Done():
	default:
		// Seen broken by a call before it ended by itself: close it, so
		// its watcher (and Close) are not left waiting.
		l.h.watchers.Go(func() { conn.Close() })
	}
	if l.idling {
		l.idling = false
		l.setStateLocked(StateIdle)
		sup.Reset()
		return true, true
	}
	l.err = err
	a.Dropped(err)
	if !l.stopped {
		l.setStateLocked(stateOf(sup))
	}
	return true, false
}

// settled reports whether the server needs no more start-up attempts: it
// is connected or stopped.
func (l *life) settled() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conn != nil || l.stopped
}

// isStopped reports whether the server was stopped for good.
func (l *life) isStopped() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stopped
}

// markIdle marks the live connection for an idle stop and returns it,
// when idle (which reads no lock) says so under l.mu: claim never hands
// out a connection marked idling, so no call starts on it after this.
func (l *life) markIdle(idle func() bool) *upstream.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil || l.idling || !idle() {
		return nil
	}
	l.idling = true
	return l.conn
}

// stop stops the server for good and returns its connection, for the
// caller to close.
func (l *life) stop() *upstream.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	c := l.conn
	l.conn = nil
	if l.state != StateDisabled {
		l.setStateLocked(StateClosed)
	}
	return c
}

// takeForRestart waits for a dial in progress, then takes the live
// connection out (for the caller to close) and resets sup, both under
// l.mu, so that no call is handed the old connection and no dial is
// granted before the reset; the connection's own watcher, and calls that
// see it end, then find it is no longer the server's and record nothing.
// The error is cleared too: the next dial is the restart, not a recovery
// from the last failure. It returns ctx's error if ctx ends first.
func (l *life) takeForRestart(ctx context.Context, sup *supervise.Supervisor) (*upstream.Conn, error) {
	l.mu.Lock()
	for l.dialing != nil {
		ch := l.dialing
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		l.mu.Lock()
	}
	defer l.mu.Unlock()
	c := l.conn
	l.conn, l.idling, l.err = nil, false, nil
	sup.Reset()
	l.setStateLocked(StateIdle)
	return c, nil
}

// loginAskedAt returns when the dial that failed for want of a login
// started; zero when none did.
func (l *life) loginAskedAt() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loginAsked
}

// startAfterLogin makes a server whose dial asked for a login at asked
// starting again, and reports whether it did; false when another caller
// got there first (a newer failure, a connection or a dial).
func (l *life) startAfterLogin(asked time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.loginAsked != asked || l.conn != nil || l.dialing != nil {
		return false
	}
	l.loginAsked = time.Time{}
	l.setStateLocked(StateStarting)
	return true
}

// startUnlessConnected makes a server without a live connection starting
// again, and reports whether it did.
func (l *life) startUnlessConnected() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		return false
	}
	l.loginAsked = time.Time{}
	l.setStateLocked(StateStarting)
	return true
}

// holdLaunch holds a server that nothing else sees yet (newServer) for
// its launch (why is launchHeld's value) and returns the error its calls
// get.
func (l *life) holdLaunch(why string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.launchHeld = why
	l.state, l.err = StateHeld, launchHeldError(l.name, why)
	return l.err
}

// heldForLaunch reports whether the server is held for its launch.
func (l *life) heldForLaunch() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.launchHeld != ""
}

// releaseLaunch releases a server held for its launch, starting (idle
// when noStart), and reports whether it was held.
func (l *life) releaseLaunch(noStart bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.launchHeld == "" {
		return false
	}
	l.launchHeld, l.err = "", nil
	l.setStateLocked(StateStarting)
	if noStart {
		l.setStateLocked(StateIdle)
	}
	return true
}

// setSandbox records the sandbox of a start; the limits start afresh.
func (l *life) setSandbox(st sandbox.Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sandbox, l.sandboxSet, l.limits = st, true, sandbox.Events{}
}

// setLimits records what the limits did to the last process, and returns
// its sandbox's mode.
func (l *life) setLimits(ev sandbox.Events) sandbox.Mode {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.limits = ev
	return l.sandbox.Mode
}

// lifeView is a copy of a server's life at one moment. What it points to
// is never mutated.
type lifeView struct {
	state      State
	since      time.Time
	err        error
	conn       *upstream.Conn
	caps       *mcp.ServerCapabilities
	launch     string // launchHeld
	sandbox    sandbox.Status
	sandboxSet bool
	limits     sandbox.Events
}

// view returns a copy of the life.
func (l *life) view() lifeView {
	l.mu.Lock()
	defer l.mu.Unlock()
	return lifeView{
		state: l.state, since: l.since, err: l.err, conn: l.conn, caps: l.caps, launch: l.launchHeld,
		sandbox: l.sandbox, sandboxSet: l.sandboxSet, limits: l.limits,
	}
}
