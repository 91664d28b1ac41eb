package fault

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestMask(t *testing.T) {
	mask := func(s string) string { return strings.ReplaceAll(s, "s3cret", "***") }
	inner := New(CodeTimeout, "gh", "connect", &Private{Err: fmt.Errorf("dial https://u:s3cret@h: %w", context.DeadlineExceeded)})
	tests := []struct {
		name string
		err  error
	}{
		{"fault error on top", inner},
		{"wrapped", fmt.Errorf("start: %w", inner)},
		{"plain", fmt.Errorf("token s3cret: %w", context.DeadlineExceeded)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Mask(tt.err, mask)
			if strings.Contains(got.Error(), "s3cret") || !strings.Contains(got.Error(), "***") {
				t.Errorf("Mask: %q", got)
			}
			if !errors.Is(got, context.DeadlineExceeded) {
				t.Error("the cause is no longer reachable")
			}
			if CodeOf(got) != CodeOf(tt.err) || IsPrivate(got) != IsPrivate(tt.err) {
				t.Errorf("code %q private %v, want %q %v", CodeOf(got), IsPrivate(got), CodeOf(tt.err), IsPrivate(tt.err))
			}
			var fe *Error
			if errors.As(got, &fe) && fe.Err != nil && strings.Contains(fe.Err.Error(), "s3cret") {
				t.Errorf("errors.As finds an unmasked cause: %q", fe.Err)
			}
			if again := Mask(got, mask); again.Error() != got.Error() {
				t.Errorf("Mask twice: %q, then %q", got, again)
			}
		})
	}
	if Mask(nil, mask) != nil {
		t.Error("Mask(nil) != nil")
	}
	plain := errors.New("nothing secret")
	if Mask(plain, mask) != plain {
		t.Error("an error without secrets is replaced")
	}
}
