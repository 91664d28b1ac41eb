package host

import (
	"testing"
	"time"
)

// TestRelistPace: the gap after each re-listing, from a fresh pace, for a
// sequence of outcomes: whether the re-listing found a change (c) and
// whether more notifications came while it was pending (f).
func TestRelistPace(t *testing.T) {
	t.Parallel()
	s := time.Second
	type step struct{ changed, flooded bool }
	c, f, cf, none := step{changed: true}, step{flooded: true}, step{true, true}, step{}
	tests := []struct {
		name     string
		outcomes []step
		want     []time.Duration
	}{
		{"flood", []step{f, f, f, f}, []time.Duration{4 * s, 5 * s, 5 * s, 5 * s}},
		{"changes", []step{c, cf}, []time.Duration{0, s}},
		{"a change resets", []step{f, f, cf, f}, []time.Duration{4 * s, 5 * s, s, 4 * s}},
		{"lone notifications finding nothing", []step{none, none, none}, []time.Duration{0, 0, 0}},
		{"a lone notification after a flood resets", []step{f, f, none}, []time.Duration{4 * s, 5 * s, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p relistPace
			at := time.Unix(1000, 0)
			for i, st := range tt.outcomes {
				p.flooded = st.flooded
				changed := st.changed
				p.ran(at, changed)
				if p.gap != tt.want[i] || !p.next.Equal(at.Add(tt.want[i])) {
					t.Errorf("after re-listing %d (changed=%v): gap %v, next %v; want gap %v", i+1, changed, p.gap, p.next.Sub(at), tt.want[i])
				}
				at = p.next
			}
		})
	}
}
