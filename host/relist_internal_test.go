package host

import (
	"testing"
	"time"
)

// TestRelistPace: the gap after each re-listing, from a fresh pace, for a
// sequence of outcomes (true: the re-listing found a change).
func TestRelistPace(t *testing.T) {
	s := time.Second
	tests := []struct {
		name     string
		outcomes []bool
		want     []time.Duration
	}{
		{"flood", []bool{false, false, false, false}, []time.Duration{4 * s, 5 * s, 5 * s, 5 * s}},
		{"changes", []bool{true, true}, []time.Duration{s, s}},
		{"a change resets", []bool{false, false, true, false}, []time.Duration{4 * s, 5 * s, s, 4 * s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p relistPace
			at := time.Unix(1000, 0)
			for i, changed := range tt.outcomes {
				p.ran(at, changed)
				if p.gap != tt.want[i] || !p.next.Equal(at.Add(tt.want[i])) {
					t.Errorf("after re-listing %d (changed=%v): gap %v, next %v; want gap %v", i+1, changed, p.gap, p.next.Sub(at), tt.want[i])
				}
				at = p.next
			}
		})
	}
}
