//go:build unix

package launcher

import (
	"sync"
	"unicode/utf8"
)

// ring keeps the last limit bytes written to it. It is safe for concurrent
// use: the stderr pump writes while callers read the tail.
type ring struct {
	limit int // fixed at creation

	mu    sync.Mutex
	buf   []byte // len(buf) == limit once full
	w     int    // next write position once full; also the oldest byte
	full  bool
	total int64 // bytes ever written
}

func newRing(limit int) *ring {
	return &ring{limit: limit, buf: make([]byte, 0, limit)}
}

// Write appends p, dropping the oldest bytes beyond the limit. It never fails.
func (r *ring) Write(p []byte) (int, error) {
	n := len(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += int64(n)
	if len(p) >= r.limit {
		r.buf = append(r.buf[:0], p[len(p)-r.limit:]...)
		r.w, r.full = 0, true
		return n, nil
	}
	if !r.full {
		room := r.limit - len(r.buf)
		if len(p) < room {
			r.buf = append(r.buf, p...)
			return n, nil
		}
		r.buf = append(r.buf, p[:room]...)
		p = p[room:]
		r.w, r.full = 0, true
	}
	// Full: overwrite the oldest bytes, wrapping at most once (len(p) < limit).
	c := copy(r.buf[r.w:], p)
	c += copy(r.buf, p[c:])
	r.w = (r.w + c) % r.limit
	return n, nil
}

// Bytes returns a copy of the kept bytes, oldest first, and how many bytes
// were ever written (more than it returns when older bytes were dropped).
// When older bytes were dropped, a UTF-8 sequence cut in half at the start
// is trimmed too.
func (r *ring) Bytes() (_ []byte, total int64) {
	r.mu.Lock()
	out := make([]byte, 0, len(r.buf))
	if r.full {
		out = append(out, r.buf[r.w:]...)
		out = append(out, r.buf[:r.w]...)
	} else {
		out = append(out, r.buf...)
	}
	total = r.total
	dropped := total > int64(len(out))
	r.mu.Unlock()

	if dropped {
		for i := 0; i < utf8.UTFMax-1 && len(out) > 0 && !utf8.RuneStart(out[0]); i++ {
			out = out[1:]
		}
	}
	return out, total
}
