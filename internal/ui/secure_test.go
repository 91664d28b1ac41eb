package ui_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestSecureCookies: the login form's and the session's cookies are
// Secure when the browser came over TLS, directly or through a proxy that
// says so in X-Forwarded-Proto, and only then.
func TestSecureCookies(t *testing.T) {
	p := newPage(t)
	tlsSrv := httptest.NewTLSServer(p.srv.Config.Handler)
	t.Cleanup(tlsSrv.Close)
	for _, tc := range []struct {
		name   string
		base   string
		client *http.Client
		proto  string
		secure bool
	}{
		{"plain", p.url, &http.Client{}, "", false},
		{"proxy", p.url, &http.Client{}, "https", true},
		{"tls", tlsSrv.URL, tlsSrv.Client(), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			do := func(req *http.Request) *http.Response {
				t.Helper()
				if tc.proto != "" {
					req.Header.Set("X-Forwarded-Proto", tc.proto)
				}
				rt := tc.client.Transport
				if rt == nil {
					rt = http.DefaultTransport
				}
				resp, err := rt.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp
			}
			req, _ := http.NewRequest(http.MethodGet, tc.base+"/ui", nil)
			resp := do(req)
			var login *http.Cookie
			for _, c := range resp.Cookies() {
				if c.Name == "sb_login" {
					login = c
				}
			}
			if login == nil || login.Secure != tc.secure {
				t.Fatalf("login cookie %+v, want Secure %v", login, tc.secure)
			}
			// The login cookie's value is the form's CSRF token.
			req, _ = http.NewRequest(http.MethodPost, tc.base+"/ui/login", strings.NewReader(url.Values{"csrf": {login.Value}, "token": {token}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(login)
			resp = do(req)
			var session *http.Cookie
			for _, c := range resp.Cookies() {
				if c.Name == "sb_session" {
					session = c
				}
			}
			if resp.StatusCode != http.StatusSeeOther || session == nil || session.Secure != tc.secure {
				t.Fatalf("login: %s, session cookie %+v, want Secure %v", resp.Status, session, tc.secure)
			}
		})
	}
}
