package fault

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestIsMatchesCode(t *testing.T) {
	cause := context.DeadlineExceeded
	err := fmt.Errorf("wrapped: %w", New(CodeTimeout, "gh", `call tool "x"`, cause))
	tests := []struct {
		target error
		want   bool
	}{
		{Timeout, true},
		{Unavailable, false},
		{NotFound, false},
		{context.DeadlineExceeded, true}, // the cause stays reachable
	}
	for _, tt := range tests {
		if got := errors.Is(err, tt.target); got != tt.want {
			t.Errorf("errors.Is(err, %v) = %v, want %v", tt.target, got, tt.want)
		}
	}
	if got := CodeOf(err); got != CodeTimeout {
		t.Errorf("CodeOf = %q, want %q", got, CodeTimeout)
	}
	if got := CodeOf(errors.New("plain")); got != "" {
		t.Errorf("CodeOf(plain) = %q, want empty", got)
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{New(CodeUnavailable, "gh", "connect", errors.New("boom")), `server "gh": connect: unavailable: boom`},
		{New(CodeNotFound, "", `tool "x"`, nil), `tool "x": not_found`},
		{New(CodeServerError, "s", "", nil), `server "s": server_error`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestRetryable(t *testing.T) {
	for code, want := range map[Code]bool{
		CodeUnavailable: true, CodeTimeout: false, CodeUnknownOutcome: false,
		CodeServerError: false, CodeNotFound: false, CodeInvalidInput: false,
		CodeTransient: true, CodeRateLimited: true, CodeAuthFailure: false, CodePolicyBlocked: false, CodeTooLarge: false,
	} {
		if got := code.Retryable(); got != want {
			t.Errorf("%s.Retryable() = %v, want %v", code, got, want)
		}
	}
}

func TestErrorDoesNotRepeatServer(t *testing.T) {
	err := New(CodeUnavailable, "gh", "connect", errors.New(`server "gh": program "npx" not found`))
	if got, want := err.Error(), `server "gh": connect: unavailable: program "npx" not found`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
