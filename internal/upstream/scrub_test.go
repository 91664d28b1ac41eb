package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/config"
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
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource":
					json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL}})
				case "/.well-known/oauth-authorization-server":
					json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL, "token_endpoint": srv.URL + "/token",
						"grant_types_supported": []string{"client_credentials"}, "code_challenge_methods_supported": []string{"S256"}})
				case "/token":
					w.WriteHeader(tt.status)
					w.Write([]byte(tt.body))
				default:
					w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
					w.WriteHeader(http.StatusUnauthorized)
				}
			}))
			defer srv.Close()
			src := `{"mcpServers":{"m":{"url":"` + srv.URL + `/mcp","trust":"trusted","oauth":{"grant":"client_credentials","clientId":"m","clientSecretEnv":"S","issuer":"` + srv.URL + `"}}}}`
			cfg, err := config.Parse([]byte(src), "t.json", &config.LoadOptions{LookupEnv: func(string) (string, bool) { return "s", true }})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Dial(ctx, cfg.Servers[0], &Options{OAuth: &OAuth{}})
			if err == nil {
				c.Close()
				t.Fatal("dial succeeded")
			}
			if strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("dial error = %v; want %q and no body", err, tt.want)
			}
		})
	}
	if err := scrubTokenError(errors.New("other")); err.Error() != "other" {
		t.Fatalf("scrubTokenError(other) = %v", err)
	}
	if err := scrubTokenError(&oauth2.RetrieveError{Body: []byte("s3cret")}); strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("scrubTokenError without a response = %v", err)
	}
}
