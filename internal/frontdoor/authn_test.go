package frontdoor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// goodJWT and scopeless stand for tokens the verifier accepts, with and
// without the required scope; broken is one it cannot check.
const (
	goodJWT   = "good-0123456789abcdef"
	scopeless = "scopeless-0123456789"
	broken    = "broken-0123456789abc"
)

// authServer is the front door with go-sdk's RequireBearerToken as
// Options.Authenticate, and the reasons it refused.
func authServer(t *testing.T, opts Options) (base string, refused func() []string) {
	t.Helper()
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		switch tok {
		case goodJWT:
			return &auth.TokenInfo{Scopes: []string{"mcp"}, UserID: "u"}, nil
		case scopeless:
			return &auth.TokenInfo{UserID: "u"}, nil
		case broken:
			return nil, context.DeadlineExceeded
		}
		return nil, auth.ErrInvalidToken
	}
	var mu sync.Mutex
	var reasons []string
	opts.Authenticate = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: "http://127.0.0.1/.well-known/oauth-protected-resource/mcp", Scopes: []string{"mcp"},
		AllowMissingExpiration: true})
	opts.OnRefuse = func(r string) {
		mu.Lock()
		reasons = append(reasons, r)
		mu.Unlock()
	}
	base = newServer(t, opts)
	return base, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), reasons...)
	}
}

func TestAuthenticate(t *testing.T) {
	known := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Known", r.URL.Path)
		w.WriteHeader(http.StatusOK)
	})
	base, refused := authServer(t, Options{WellKnown: known, SubPaths: true})
	bearer := func(tok string) http.Header {
		return hdr("Authorization", "Bearer "+tok, "Content-Type", "application/json")
	}
	tests := []struct {
		name      string
		req       request
		status    int
		challenge string // a part of WWW-Authenticate; "" for none expected
		reason    string // given to OnRefuse; "" for none
	}{
		{"admitted", request{path: "/mcp", header: bearer(goodJWT), body: "{}"}, http.StatusTeapot, "", ""},
		{"admitted to a sub-path", request{path: "/mcp/ro_1", header: bearer(goodJWT), body: "{}"}, http.StatusTeapot, "", ""},
		{"no token", request{path: "/mcp", header: hdr("Content-Type", "application/json"), body: "{}"}, http.StatusUnauthorized,
			`resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"`, RefusedNoToken},
		{"invalid token", request{path: "/mcp", header: bearer("nope-0123456789abcdef"), body: "{}"}, http.StatusUnauthorized,
			`Bearer error="invalid_token", resource_metadata=`, RefusedBadToken},
		{"missing scope", request{path: "/mcp", header: bearer(scopeless), body: "{}"}, http.StatusForbidden,
			`Bearer error="insufficient_scope", resource_metadata=`, RefusedScope},
		{"token that cannot be checked", request{path: "/mcp", header: bearer(broken), body: "{}"}, http.StatusInternalServerError, "", RefusedAuthError},
		{"two Authorization headers", request{path: "/mcp", header: hdr("Authorization", "Bearer "+goodJWT, "Authorization", "Bearer x"), body: "{}"},
			http.StatusUnauthorized, `error="invalid_token"`, RefusedBadToken},
		{"content type checked after authentication", request{path: "/mcp", header: hdr("Authorization", "Bearer "+goodJWT, "Content-Type", "text/plain"), body: "{}"},
			http.StatusUnsupportedMediaType, "", RefusedContentType},
		{"well-known without a token", request{method: http.MethodGet, path: "/.well-known/oauth-protected-resource/mcp"}, http.StatusOK, "", ""},
		{"well-known still checks Host", request{method: http.MethodGet, path: "/.well-known/oauth-protected-resource", host: "evil.example"},
			http.StatusForbidden, "", RefusedHost},
		{"sub-path of two segments", request{path: "/mcp/a/b", header: bearer(goodJWT), body: "{}"}, http.StatusNotFound, "", RefusedPath},
		{"sub-path with a dot", request{path: "/mcp/a.b", header: bearer(goodJWT), body: "{}"}, http.StatusNotFound, "", RefusedPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(refused())
			resp := do(t, base, tt.req)
			if resp.status != tt.status {
				t.Fatalf("status %d, want %d (body %q)", resp.status, tt.status, resp.body)
			}
			if got := resp.header.Get("WWW-Authenticate"); tt.challenge != "" && !strings.Contains(got, tt.challenge) {
				t.Errorf("WWW-Authenticate %q, want it to contain %s", got, tt.challenge)
			}
			var got []string
			if r := refused(); len(r) > before {
				got = r[before:]
			}
			switch {
			case tt.reason == "" && len(got) > 0:
				t.Errorf("refused as %v, want no refusal", got)
			case tt.reason != "" && (len(got) != 1 || got[0] != tt.reason):
				t.Errorf("refused as %v, want [%s]", got, tt.reason)
			}
			if tt.status == http.StatusTeapot && resp.header.Get("X-Inner-Saw-Auth") != "false" {
				t.Error("the credential reached the inner handler")
			}
		})
	}
}

// TestAuthenticateExcludesNoAuth: Authenticate and NoAuth are refused
// together; with Authenticate, Token is the page's login alone: a request
// of the MCP path bearing it still goes through Authenticate.
func TestAuthenticateExcludesNoAuth(t *testing.T) {
	refuse := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			w.WriteHeader(http.StatusUnauthorized)
		})
	}
	if _, err := New(inner(), Options{Authenticate: refuse, NoAuth: true}); err == nil || !strings.Contains(err.Error(), "Authenticate excludes NoAuth") {
		t.Errorf("Authenticate with NoAuth: %v, want a refusal", err)
	}
	h, err := New(inner(), Options{Authenticate: refuse, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1"+DefaultPath, strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("the page's token on the MCP path: %d, want Authenticate's 401", rec.Code)
	}
}
