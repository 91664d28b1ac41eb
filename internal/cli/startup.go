package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// startupWait bounds how long a command waits for the servers it starts
// (those without a saved catalogue) before it answers with what is ready:
// a server still starting is named, and a call to one of its tools waits
// for that server alone. serve does not wait before it listens; it waits
// as long for its banner's summary while it already answers.
const startupWait = 600 * time.Millisecond

// stdioWait bounds how long serve --stdio waits for the servers it starts
// (those without a saved catalogue) before it reads its first request, so
// that the client's first tools/list has their tools.
const stdioWait = time.Second

// serversWait returns how long r waits for the servers it starts: the
// Env's StartupWait, or def when that is zero.
func (r *run) serversWait(def time.Duration) time.Duration {
	if r.env.StartupWait != 0 {
		return r.env.StartupWait
	}
	return def
}

// progressAfter is how long a wait for one server goes before a terminal
// is shown its progress.
const progressAfter = time.Second

// terminal reports whether stderr is a terminal, where progress may be
// drawn and redrawn in place.
func (r *run) terminal() bool {
	if r.env.IsTerminal != nil {
		return r.env.IsTerminal(r.env.Stderr)
	}
	f, ok := r.env.Stderr.(*os.File)
	return ok && isTerminal(f)
}

// noteStarting names, on stderr, the servers still starting when the host
// was opened: their tools are not listed yet.
func (r *run) noteStarting() {
	for _, s := range r.host.Servers() {
		if s.State == host.StateStarting {
			fmt.Fprintf(r.env.Stderr, "note: server %q is still starting; its tools are not listed yet (a call to one waits for it)\n", launcher.Escape(s.Name))
		}
	}
}

// await waits for a server still starting (host.Host.Ready). On a terminal, a
// wait longer than progressAfter shows "waiting for NAME 4s/10s", redrawn
// in place each second and erased at the end: the time since the server
// started, and its startupTimeoutMs.
func (r *run) await(server string) error {
	done := make(chan error, 1)
	go func() { done <- r.host.Ready(r.ctx, server) }() // received below, whatever happens
	var limit time.Duration
	for _, sc := range r.cfg.Servers {
		if sc.Name == server {
			limit = sc.StartupTimeout
		}
	}
	tick := time.NewTicker(progressAfter)
	defer tick.Stop()
	shown := false
	for {
		select {
		case err := <-done:
			if shown {
				fmt.Fprint(r.env.Stderr, "\r\x1b[K")
			}
			return err
		case <-tick.C:
			if !r.terminal() {
				continue
			}
			fmt.Fprintf(r.env.Stderr, "\r\x1b[Kwaiting for %s %s/%s", launcher.Escape(server), seconds(time.Since(r.opening)), seconds(limit))
			shown = true
		}
	}
}

// startingServer returns the server a request failed on because it is
// still starting (host.ErrStarting), or "".
func startingServer(err error) string {
	var fe *fault.Error
	if errors.Is(err, host.ErrStarting) && errors.As(err, &fe) {
		return fe.Server
	}
	return ""
}

// seconds formats d in whole seconds, e.g. "4s".
func seconds(d time.Duration) string { return fmt.Sprintf("%ds", int(d/time.Second)) }

// settle waits, at most d, for the servers still starting.
func (r *run) settle(d time.Duration) {
	ctx, cancel := context.WithTimeout(r.ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range r.host.Servers() {
		if s.State == host.StateStarting {
			wg.Go(func() { r.host.Ready(ctx, s.Name) }) //nolint:errcheck // the state says it
		}
	}
	wg.Wait()
}
