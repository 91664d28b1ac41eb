package frontdoor

import (
	"net/http"
	"strings"
	"testing"
)

// TestOAuthCallback: OAuthCallbackPath reaches Options.OAuthCallback
// without a token, after the Host and Origin checks; without the option
// it is 404; and no MCP path may take it.
func TestOAuthCallback(t *testing.T) {
	cb := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("callback " + r.URL.RawQuery))
	})
	base := newServer(t, Options{Token: testToken, OAuthCallback: cb, SubPaths: true, Path: "/oauth"})
	for _, tc := range []struct {
		name string
		req  request
		want int
		body string
	}{
		{"no token", request{method: http.MethodGet, path: OAuthCallbackPath + "?state=s&code=c"}, http.StatusOK, "callback state=s&code=c"},
		{"foreign host", request{method: http.MethodGet, path: OAuthCallbackPath + "?state=s", host: "evil.example"}, http.StatusForbidden, ""},
		{"foreign origin", request{method: http.MethodGet, path: OAuthCallbackPath, header: hdr("Origin", "https://evil.example")}, http.StatusForbidden, ""},
		{"below it", request{method: http.MethodGet, path: OAuthCallbackPath + "/x"}, http.StatusNotFound, ""},
	} {
		got := do(t, base, tc.req)
		if got.status != tc.want || (tc.body != "" && got.body != tc.body) {
			t.Errorf("%s: %d %q; want %d %q", tc.name, got.status, got.body, tc.want, tc.body)
		}
	}
	plain := newServer(t, Options{Token: testToken})
	if got := do(t, plain, request{method: http.MethodGet, path: OAuthCallbackPath}); got.status != http.StatusNotFound {
		t.Errorf("without OAuthCallback: %d; want 404", got.status)
	}
	if _, err := New(inner(), Options{Token: testToken, Path: OAuthCallbackPath}); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("Path %s: %v; want reserved", OAuthCallbackPath, err)
	}
}
