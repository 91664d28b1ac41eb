package host

import (
	"context"
	"sync"
	"sync/atomic"
)

// notifier calls Options.OnChange after the aggregate changed, on its own
// goroutine (run), one call at a time; a burst of changes made while a
// call runs is covered by one more call. A nil *notifier (no OnChange)
// does nothing.
type notifier struct {
	onChange func()
	pending  chan struct{} // one buffered token: a change not yet passed on

	seq atomic.Uint64 // the last change made

	mu   sync.Mutex
	done uint64        // guarded by mu: every change up to done was followed by a complete OnChange call
	wake chan struct{} // guarded by mu: closed when done moves, then replaced
}

// newNotifier returns the notifier of onChange, nil when onChange is.
func newNotifier(onChange func()) *notifier {
	if onChange == nil {
		return nil
	}
	return &notifier{onChange: onChange, pending: make(chan struct{}, 1)}
}

// changed records a change; it never blocks. It returns the change's
// sequence number, for wait (0 for a nil notifier).
func (n *notifier) changed() uint64 {
	if n == nil {
		return 0
	}
	seq := n.seq.Add(1)
	select {
	case n.pending <- struct{}{}:
	default: // one pending notification covers it
	}
	return seq
}

// run calls OnChange for the changes made, until stop is closed.
func (n *notifier) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-n.pending:
			seq := n.seq.Load() // changes up to here are in this call's view
			n.onChange()
			n.mu.Lock()
			n.done = seq
			if n.wake != nil {
				close(n.wake)
				n.wake = nil
			}
			n.mu.Unlock()
		}
	}
}

// wait waits until OnChange has run after change seq (see changed), ctx
// ends or stop is closed: a caller that changed what is listed can then
// answer knowing the gateway lists it.
func (n *notifier) wait(ctx context.Context, seq uint64, stop <-chan struct{}) {
	for n != nil && seq != 0 {
		n.mu.Lock()
		if n.done >= seq {
			n.mu.Unlock()
			return
		}
		if n.wake == nil {
			n.wake = make(chan struct{})
		}
		wake := n.wake
		n.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return
		case <-stop:
			return
		}
	}
}
