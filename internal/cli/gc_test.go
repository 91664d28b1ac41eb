package cli

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestTuneGC: serve raises GOGC and sets a soft memory limit, unless the
// operator set either in the environment.
func TestTuneGC(t *testing.T) {
	// Serial: it sets the process's GC percent and memory limit, as an in-process serve does.
	tests := []struct {
		name        string
		env         map[string]string
		wantPercent int
		wantLimit   int64
	}{
		{"defaults", nil, gcPercent, gcMemoryLimit},
		{"GOGC set", map[string]string{"GOGC": "150"}, 100, math.MaxInt64},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, 100, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldPercent, oldLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
			t.Cleanup(func() { debug.SetGCPercent(oldPercent); debug.SetMemoryLimit(oldLimit) })
			set := tuneGC(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if (set != "") != (tt.env == nil) {
				t.Errorf("tuneGC = %q", set)
			}
			if got := debug.SetGCPercent(100); got != tt.wantPercent {
				t.Errorf("GC percent = %d, want %d", got, tt.wantPercent)
			}
			if got := debug.SetMemoryLimit(-1); got != tt.wantLimit {
				t.Errorf("memory limit = %d, want %d", got, tt.wantLimit)
			}
		})
	}
}
