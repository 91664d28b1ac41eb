package host

import (
	"math"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Trust scores: successes raise a server's score towards 1, failures
// lower it towards 0, flagged metadata costs a step; a score above neutral
// decays back towards it (half-life 7 days), so good standing must be
// earned continually while bad standing is remembered.
const (
	neutralScore   = 0.5
	scoreHalfLife  = 7 * 24 * time.Hour
	outcomeOK      = "ok"
	outcomeToolErr = "tool_error"
	outcomeError   = "error"
	outcomeFlagged = "flagged"
)

// trustScore is one server's trust score. It is safe for concurrent use:
// every call's outcome counts, so it has a lock of its own rather than the
// server's.
type trustScore struct {
	mu    sync.Mutex
	value float64   // at at; see decayed
	at    time.Time // when value was last set; zero: never
	dirty bool      // changed since the last save
}

func newTrustScore() *trustScore { return &trustScore{value: neutralScore} }

// load sets the score read from the store.
func (t *trustScore) load(v float64, at time.Time) {
	t.mu.Lock()
	t.value, t.at = v, at
	t.mu.Unlock()
}

// add counts one outcome.
func (t *trustScore) add(outcome string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	v := decayed(t.value, t.at, now)
	switch outcome {
	case outcomeOK:
		v += 0.02 * (1 - v)
	case outcomeToolErr:
		v -= 0.01 * v
	case outcomeError:
		v -= 0.05 * v
	case outcomeFlagged:
		v -= 0.1 * v
	}
	t.value, t.at, t.dirty = v, now, true
}

// current is the score now, decay applied.
func (t *trustScore) current() float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return decayed(t.value, t.at, time.Now())
}

// unsaved returns the score to save, if it changed since the last call.
func (t *trustScore) unsaved(server string) (store.Score, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.dirty {
		return store.Score{}, false
	}
	t.dirty = false
	return store.Score{Server: server, Value: t.value, UpdatedAt: t.at}, true
}

// decayed applies the decay of scores above neutral.
func decayed(v float64, at, now time.Time) float64 {
	if v <= neutralScore || at.IsZero() {
		return v
	}
	f := math.Exp2(-float64(now.Sub(at)) / float64(scoreHalfLife))
	return neutralScore + (v-neutralScore)*f
}
