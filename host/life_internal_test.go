package host

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/supervise"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestLifeClaim walks a server's life through claim's decisions: one dial
// at a time, shared by the callers that come meanwhile; a connection being
// closed for idleness never handed out; a held launch refused with its
// own error until released; a stopped server keeps no connection.
func TestLifeClaim(t *testing.T) {
	t.Parallel()
	l := &life{h: &Host{log: slog.New(slog.DiscardHandler)}, name: "a"}
	l.setUnseen(StateIdle, nil)
	sup := supervise.New("a", supervise.Policy{Attempts: 3}, nil)

	first := l.claim(sup)
	if first.kind != claimDial || first.dialing == nil || l.currentState() != StateStarting {
		t.Fatalf("first claim = %+v in state %s, want a dial, starting", first, l.currentState())
	}
	second := l.claim(sup)
	if second.kind != claimWait || second.wait != (<-chan struct{})(first.dialing) {
		t.Fatalf("claim during a dial = %+v, want to wait for that dial", second)
	}
	l.dialed(first.dialing)
	select {
	case <-second.wait:
	default:
		t.Fatal("dialed did not release the callers waiting for the dial")
	}
	if l.dialInProgress() != nil {
		t.Fatal("a dial is still in progress after dialed")
	}

	conn := &upstream.Conn{} // never used: only compared
	l.mu.Lock()
	l.conn, l.attempt = conn, first.attempt
	l.mu.Unlock()
	if c := l.claim(sup); c.kind != claimLive || c.conn != conn {
		t.Fatalf("claim with a live connection = %+v", c)
	}
	if got := l.markIdle(func() bool { return true }); got != conn {
		t.Fatalf("markIdle = %p, want the live connection", got)
	}
	if got := l.markIdle(func() bool { return true }); got != nil {
		t.Fatal("a connection was marked for an idle stop twice")
	}
	if c := l.claim(sup); c.kind != claimClosing || c.conn != conn {
		t.Fatalf("claim with a connection closing for idleness = %+v, want to wait for its close", c)
	}
	if ok, _ := l.drop(&upstream.Conn{}, first.attempt, sup, errors.New("x")); ok {
		t.Fatal("a drop of a connection that is not the live one was recorded")
	}

	err := l.holdLaunch("new")
	if c := l.claim(sup); c.kind != claimRefused || c.err != err || fault.CodeOf(err) != fault.CodeLaunchChanged {
		t.Fatalf("claim of a held launch = %+v, want refused with %v", c, err)
	}
	if l.currentState() != StateHeld || !l.heldForLaunch() {
		t.Fatalf("held launch: state %s", l.currentState())
	}
	if !l.releaseLaunch(true) || l.releaseLaunch(true) {
		t.Fatal("releaseLaunch released other than once")
	}
	if l.currentState() != StateIdle || l.heldForLaunch() {
		t.Fatalf("released under noStart: state %s, want idle", l.currentState())
	}

	if c := l.stop(); c != conn || l.currentState() != StateClosed || l.current() != nil {
		t.Fatalf("stop = %p in state %s, want the connection handed back, closed", c, l.currentState())
	}
	if ok, _ := l.connected(&upstream.Conn{}, first.attempt, func() { t.Error("a stopped server started a watcher") }); ok {
		t.Fatal("a stopped server took a connection")
	}
}
