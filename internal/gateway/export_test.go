package gateway

import (
	"time"
)

// SetSessionIdle sets how long a legacy session of the raw path's
// endpoint may be idle (legacy.go); for sessions made after the call.
func SetSessionIdle(g *Gateway, d time.Duration) { g.sessionIdle.Store(int64(d)) }

// PlantWithdrawnHandover makes a handover token for session that the raw
// path has withdrawn (legacy.go), and returns it.
func PlantWithdrawnHandover(g *Gateway, session string) string {
	token := newToken()
	g.handoverMu.Lock()
	g.handovers[token] = &handover{session: session}
	g.handoverMu.Unlock()
	return token
}

// LegacySessions reports how many legacy sessions the gateway knows.
func LegacySessions(g *Gateway) int {
	g.legacy.mu.Lock()
	defer g.legacy.mu.Unlock()
	return len(g.legacy.m)
}
