package host

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
)

// What an operator does to a running Host (the gateway's control API):
// restart a server, have approvals made elsewhere taken at once, see the
// calls in flight.

// Restart stops the named server's connection (a stdio server's process
// group, through the launcher's bounded stop sequence) and starts it again
// through its supervisor, whatever its state: a failed or backed-off
// server gets a fresh schedule. A dial in progress is waited for first.
// The stop is not an exit (no EventExited); the new connection is an
// EventRestarted. It returns the new dial's error.
func (h *Host) Restart(ctx context.Context, name string) error {
	s := h.comp.Load().servers[name]
	if s == nil {
		return fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server %q", name))
	}
	if sc := s.cfg.Load(); !runnable(sc) || h.closed.Load() {
		_, err := s.ensure(ctx) // says why: disabled, misconfigured, closed
		return err
	}
	c, err := s.life.takeForRestart(ctx, s.sup)
	if err != nil {
		return fault.New(fault.CodeTimeout, name, "restart", err)
	}
	if c != nil {
		c.Close() //nolint:errcheck // the stop is bounded; the dial below says whether the server works
		h.log.Debug("server stopped for a restart", "server", name, "status", c.ExitStatus())
	}
	if _, err := s.ensure(ctx); err != nil {
		return err
	}
	h.log.Debug("server restarted on request", "server", name)
	h.event(ServerEvent{Server: name, Kind: EventRestarted})
	return nil
}

// approvalsChanged re-reads the approved definitions of the servers that
// hold any back, at once (a running Host otherwise does so every second,
// or on the store's change feed), and rebuilds the aggregate when they
// changed: an approval made through the store by this process is in force
// when it returns.
func (h *Host) approvalsChanged() {
	if h.refreshPins() {
		h.rebuild()
		h.changed()
	}
}

// liveCalls are the calls in flight. Its lock guards next and calls, and
// is taken alone.
type liveCalls struct {
	mu    sync.Mutex
	next  uint64
	calls map[uint64]*hostlink.LiveCall
}

// begin records a call in flight and returns the options to call with (a
// progress callback that also records the progress) and the function that
// ends the record.
func (l *liveCalls) begin(server, tool string, opts *CallOptions) (*CallOptions, func()) {
	lc := &hostlink.LiveCall{Start: time.Now(), Server: server, Tool: tool}
	if opts != nil {
		lc.Client, lc.ClientName = opts.Client, opts.ClientName
	}
	l.mu.Lock()
	if l.calls == nil {
		l.calls = map[uint64]*hostlink.LiveCall{}
	}
	l.next++
	id := l.next
	lc.ID = id
	l.calls[id] = lc
	l.mu.Unlock()
	if opts != nil && opts.Progress != nil {
		o := *opts
		inner := opts.Progress
		o.Progress = func(p Progress) {
			l.mu.Lock()
			lc.Progress, lc.Total, lc.Message = p.Progress, p.Total, escapeLine(p.Message)
			l.mu.Unlock()
			inner(p)
		}
		opts = &o
	}
	return opts, func() {
		l.mu.Lock()
		delete(l.calls, id)
		l.mu.Unlock()
	}
}

func (l *liveCalls) list() []hostlink.LiveCall {
	l.mu.Lock()
	out := make([]hostlink.LiveCall, 0, len(l.calls))
	for _, c := range l.calls {
		out = append(out, *c)
	}
	l.mu.Unlock()
	slices.SortFunc(out, func(a, b hostlink.LiveCall) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// escapeLine keeps a server's progress message printable on one line.
func escapeLine(s string) string {
	const max = 200
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
