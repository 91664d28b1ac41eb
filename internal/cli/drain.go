package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"
)

// defaultDrainDelay is serve's --drain-delay: the time a load balancer
// takes to see /readyz fail and stop sending requests, with a margin. The
// HAProxy configuration in docs/REPLICAS.md checks every second and takes a
// replica out after 2 failed checks (inter 1s, fall 2): out within 2
// seconds of the first failure, plus one check interval of margin.
const defaultDrainDelay = 3 * time.Second

// errDraining is the readiness of a replica that has been told to stop.
var errDraining = errors.New("draining: shutting down")

// drainReady wraps the readiness check ready: from the moment r.ctx ends
// (SIGTERM, Ctrl-C), the replica is not ready.
func (r *run) drainReady(ready func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		if r.ctx.Err() != nil {
			return errDraining
		}
		return ready(ctx)
	}
}

// drainDelayed returns the context `serve --http` serves until. On SIGTERM
// it ends delay after r.ctx does, so that a load balancer's health checks,
// which fail from the signal on (drainReady), take the replica out of its
// rotation while it still serves everything as before. Only then does the
// server stop accepting connections and close the idle ones: were it to
// close them at once, a request the balancer sends on a kept-alive
// connection just as it closes would end without an answer, and the
// balancer cannot tell whether it ran. Anything else that ends r.ctx
// (Ctrl-C: a person waits, not a balancer) ends the context at once.
//
// The goroutine that ends the context writes the notes a person reads
// about it to w, each before the step it announces: the drain note when
// the delay starts, the closing note (the calls in flight have grace to
// finish) just before the context ends. Written there, and not by
// callbacks on the contexts, a note cannot be lost to a serve that
// returns as the context ends, nor come after "stopped".
//
// stop ends the context and waits for the goroutine that watches r.ctx.
func (r *run) drainDelayed(w io.Writer, delay, grace time.Duration) (serving context.Context, stop func()) {
	serving, cancel := context.WithCancel(context.WithoutCancel(r.ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		select {
		case <-r.ctx.Done():
		case <-serving.Done():
			return
		}
		if sig, _ := r.signal.Load().(syscall.Signal); sig == syscall.SIGTERM && delay > 0 {
			fmt.Fprintf(w, "switchboard: draining: not ready (/readyz answers 503), serving for %v more (--drain-delay)\n", delay)
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-serving.Done():
				return
			}
		}
		fmt.Fprintf(w, "switchboard: draining: no new connections; the calls in flight have %v to finish (--grace)\n", grace)
	}()
	return serving, func() {
		cancel()
		<-done
	}
}
