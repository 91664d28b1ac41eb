package host

import (
	"context"
	"encoding/json"
	"time"
)

// SetGrantRecheck sets how often a caller's connection checks that its
// grant is still kept, until the returned function restores it.
func SetGrantRecheck(d time.Duration) (restore func()) {
	old := grantRecheck
	grantRecheck = d
	return func() { grantRecheck = old }
}

// Refused records a refusal as View.Resolve does, with the error given.
func Refused(ctx context.Context, v *View, name string, args json.RawMessage, err error) {
	v.refused(ctx, name, args, err)
}
