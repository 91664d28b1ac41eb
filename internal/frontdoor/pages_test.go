package frontdoor

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestPages: the control API passes the MCP path's checks (Host, token,
// JSON); the page passes the Host/Origin check only, sees no credentials,
// and checks a typed token with CheckToken; neither is served unless set.
func TestPages(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "api %s auth=%q", r.URL.Path, r.Header.Get("Authorization"))
	})
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "ui %s auth=%q good=%v bad=%v noauth=%v", r.URL.Path, r.Header.Get("Authorization"),
			CheckToken(r.Context(), testToken), CheckToken(r.Context(), wrongToken), NoAuth(r.Context()))
	})
	base := newServer(t, Options{Token: testToken, API: api, UI: ui})
	open := newServer(t, Options{NoAuth: true, API: api, UI: ui})
	plain := newServer(t, Options{Token: testToken})
	tests := []struct {
		name, base, method, path, token, host, origin, ctype string
		wantStatus                                           int
		wantBody                                             string
	}{
		{"api with the token", base, "GET", "/api/servers", testToken, "", "", "", 200, `api /api/servers auth=""`},
		{"api without a token", base, "GET", "/api/servers", "", "", "", "", 401, ""},
		{"api foreign Host", base, "GET", "/api/servers", testToken, "evil.example", "", "", 403, ""},
		{"api POST not JSON", base, "POST", "/api/approve", testToken, "", "", "text/plain", 415, ""},
		{"api not served", plain, "GET", "/api/servers", testToken, "", "", "", 404, ""},
		{"ui without a token", base, "GET", "/ui", "", "", "", "", 200, `ui /ui auth="" good=true bad=false noauth=false`},
		{"ui token stripped", base, "GET", "/ui/x", testToken, "", "", "", 200, `ui /ui/x auth="" good=true bad=false noauth=false`},
		{"ui foreign Origin", base, "POST", "/ui/login", "", "", "http://evil.example", "application/x-www-form-urlencoded", 403, ""},
		{"ui foreign Host", base, "GET", "/ui", "", "evil.example", "", "", 403, ""},
		{"ui without auth", open, "GET", "/ui", "", "", "", "", 200, `ui /ui auth="" good=true bad=true noauth=true`},
		{"ui not served", plain, "GET", "/ui", "", "", "", "", 404, ""},
		{"uix is not the page", base, "GET", "/uix", "", "", "", "", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, tt.base+tt.path, strings.NewReader("{}"))
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus || (tt.wantBody != "" && string(body) != tt.wantBody) {
				t.Errorf("%d %q, want %d %q", resp.StatusCode, body, tt.wantStatus, tt.wantBody)
			}
		})
	}
	if _, err := New(inner(), Options{Token: testToken, Path: "/api/mcp", API: api}); err == nil {
		t.Error("New accepted an MCP path under the API's")
	}
	if _, err := New(inner(), Options{Token: testToken, Path: "/ui", UI: ui}); err == nil {
		t.Error("New accepted the page's path as the MCP path")
	}
}
