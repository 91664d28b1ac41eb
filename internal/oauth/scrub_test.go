package oauth_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/internal/oauth"
)

// TestTokenErrorScrubbed: an authorization server's refusal of a token
// request reaches the dial's error by its error code (or status) only,
// never with the body it answered, which may echo the credential.
func TestTokenErrorScrubbed(t *testing.T) {
	tests := []struct {
		name, body, want string
		status           int
	}{
		{"error code", `{"error":"invalid_client","error_description":"bad secret s3cret-echo"}`, `"invalid_client"`, http.StatusUnauthorized},
		{"no error code", `<html>s3cret-echo</html>`, "502 Bad Gateway", http.StatusBadGateway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := machineServer(t, nil, func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			})
			c, err := dialOAuth(t, machineConfig(srv), func(string) (string, bool) { return "s", true })
			if err == nil {
				c.Close()
				t.Fatal("dial succeeded")
			}
			if strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("dial error = %v; want %q and no body", err, tt.want)
			}
		})
	}
	if err := oauth.ScrubTokenError(errors.New("other")); err.Error() != "other" {
		t.Fatalf("oauth.ScrubTokenError(other) = %v", err)
	}
	if err := oauth.ScrubTokenError(&oauth2.RetrieveError{Body: []byte("s3cret")}); strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("scrubTokenError without a response = %v", err)
	}
}
