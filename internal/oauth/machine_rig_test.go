package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// machineServer serves on 127.0.0.1 an MCP endpoint, /mcp, that refuses
// every request with a Bearer challenge naming its protected-resource
// metadata; that metadata; authorization-server metadata offering the
// client_credentials grant, with the fields of extra added; and /token,
// answered by token. Every answer is typed JSON. It closes with the test.
func machineServer(t testing.TB, extra map[string]any, token http.HandlerFunc) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource":
			json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL}})
		case "/.well-known/oauth-authorization-server":
			meta := map[string]any{"issuer": srv.URL, "token_endpoint": srv.URL + "/token",
				"grant_types_supported": []string{"client_credentials"}, "code_challenge_methods_supported": []string{"S256"}}
			for k, v := range extra {
				meta[k] = v
			}
			json.NewEncoder(w).Encode(meta)
		case "/token":
			token(w, r)
		default:
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// machineConfig is the configuration of one trusted server, m, at
// srv's /mcp, with a client_credentials grant (client m, its secret in
// $S) from srv as its issuer.
func machineConfig(srv *httptest.Server) string {
	return `{"mcpServers":{"m":{"url":"` + srv.URL + `/mcp","trust":"trusted","oauth":{"grant":"client_credentials","clientId":"m","clientSecretEnv":"S","issuer":"` + srv.URL + `"}}}}`
}

// dialOAuth parses src, a configuration of one server, with lookup as its
// environment, and dials that server with OAuth for at most 10 seconds.
func dialOAuth(t testing.TB, src string, lookup func(string) (string, bool)) (*upstream.Conn, error) {
	t.Helper()
	cfg, err := config.Parse([]byte(src), "t.json", &config.LoadOptions{LookupEnv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return upstream.Dial(ctx, cfg.Servers[0], &upstream.Options{OAuth: &oauth.Config{}})
}
