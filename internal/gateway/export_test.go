package gateway

import "time"

// AgeLegacySessions moves back by d when go-sdk last served a POST of each
// legacy session the raw path knows (legacy.go).
func AgeLegacySessions(g *Gateway, d time.Duration) {
	g.legacy.mu.Lock()
	defer g.legacy.mu.Unlock()
	for _, ls := range g.legacy.m {
		ls.lastSDK.Add(-int64(d))
	}
}
