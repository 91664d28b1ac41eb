package oauth

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/fault"
)

// TestLoginError: a refused code exchange is reported by its error code
// only, never with the response body (it may echo a credential); other
// errors pass as they are.
func TestLoginError(t *testing.T) {
	other := errors.New("dial failed")
	tests := []struct {
		name string
		err  error
		want string
		code fault.Code
	}{
		{"refused exchange", fmt.Errorf("token exchange failed: %w", &oauth2.RetrieveError{
			Body: []byte(`{"error":"invalid_grant","echo":"s3cret-token"}`), ErrorCode: "invalid_grant", ErrorDescription: "s3cret-token",
		}), `"invalid_grant"`, fault.CodeAuthFailure},
		{"other", other, "dial failed", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := loginError("gh", tt.err)
			if !strings.Contains(got.Error(), tt.want) || strings.Contains(got.Error(), "s3cret") || fault.CodeOf(got) != tt.code {
				t.Fatalf("loginError = %v (%s), want %q with code %q and no secret", got, fault.CodeOf(got), tt.want, tt.code)
			}
		})
	}
}
