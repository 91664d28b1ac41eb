package policy

import (
	"sync"
	"time"
)

// DefaultMaxKeys is the number of quota keys tracked at once when
// Quota.MaxKeys is zero.
const DefaultMaxKeys = 10000

// limiter enforces a Quota with one fixed window per key. A key's window
// opens at its first call after the previous window closed and lasts Per;
// within it at most Calls calls are admitted. A fixed window is exact and
// gives an exact RetryAfter with O(1) state per key; the price is that a
// client may make up to 2×Calls calls in a Per-long span that straddles two
// windows, which is acceptable for a quota (as opposed to a rate shaper).
//
// Memory is bounded two ways. A key whose window has closed carries no
// state (its next call opens a fresh window), so it is dropped as soon as
// the limiter notices. And at most maxKeys keys are kept: when a new key
// arrives with the table full, the key with the oldest open window is
// forgotten, which forgives the least remaining quota. Forgetting an open
// window lets that key start over, so with more than maxKeys keys active at
// once the limit is approximate; it never refuses a call for lack of room.
type limiter struct {
	calls   int
	per     time.Duration
	maxKeys int

	mu sync.Mutex
	// keys holds every open window. Windows are also linked in order of
	// opening, newest at head: since a window always opens at "now", the
	// tail is the one to close first, so expired windows are found at the
	// tail and so is the eviction victim.
	keys       map[string]*window
	head, tail *window
}

type window struct {
	key        string
	start      time.Time
	n          int // calls admitted in this window
	prev, next *window
}

func newLimiter(q Quota) *limiter {
	n := q.MaxKeys
	if n == 0 {
		n = DefaultMaxKeys
	}
	return &limiter{calls: q.Calls, per: q.Per, maxKeys: n, keys: make(map[string]*window)}
}

// take admits one call for key at now, or reports how long until the key's
// window closes. A refused call consumes nothing.
func (l *limiter) take(key string, now time.Time) (ok bool, retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()

	w := l.keys[key]
	if w != nil {
		elapsed := now.Sub(w.start)
		if elapsed >= l.per {
			// Reopen in place rather than delete and reallocate: a busy
			// key rolls over once per window.
			w.start, w.n = now, 0
			l.unlink(w)
			l.pushFront(w)
		} else if w.n >= l.calls {
			// elapsed is negative only if an injected clock stepped back;
			// never make a client wait longer than one window for it.
			return false, l.per - max(elapsed, 0)
		}
	}
	l.sweep(now)
	if w == nil {
		if len(l.keys) >= l.maxKeys {
			l.remove(l.tail)
		}
		w = &window{key: key, start: now}
		l.keys[key] = w
		l.pushFront(w)
	}
	w.n++
	return true, 0
}

// sweep drops closed windows from the tail. Each window is dropped once, so
// the cost is amortised over the calls that opened them.
func (l *limiter) sweep(now time.Time) {
	for l.tail != nil && now.Sub(l.tail.start) >= l.per {
		l.remove(l.tail)
	}
}

func (l *limiter) remove(w *window) {
	l.unlink(w)
	delete(l.keys, w.key)
}

func (l *limiter) pushFront(w *window) {
	w.prev, w.next = nil, l.head
	if l.head != nil {
		l.head.prev = w
	} else {
		l.tail = w
	}
	l.head = w
}

func (l *limiter) unlink(w *window) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		l.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		l.tail = w.prev
	}
	w.prev, w.next = nil, nil
}

// len reports the number of keys held, for tests.
func (l *limiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}
