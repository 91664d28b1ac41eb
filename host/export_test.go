package host

import "time"

// SetGrantRecheck sets how often a caller's connection checks that its
// grant is still kept, until the returned function restores it.
func SetGrantRecheck(d time.Duration) (restore func()) {
	old := grantRecheck
	grantRecheck = d
	return func() { grantRecheck = old }
}
