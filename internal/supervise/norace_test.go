//go:build !race

package supervise

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = false
