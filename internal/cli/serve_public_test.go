package cli

import (
	"strings"
	"testing"
)

// TestPublicCallback: serve's --public-url gives the gateway's callback
// URL, refuses what cannot be a redirect URI's base, and warns when the
// front door would refuse the redirect's Host.
func TestPublicCallback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw     string
		allow   []string
		want    string // callback URL, or a substring of the error
		wantErr bool
		warn    bool
	}{
		{"http://127.0.0.1:8939", nil, "http://127.0.0.1:8939/oauth/callback", false, false},
		{"http://localhost:8939/", nil, "http://localhost:8939/oauth/callback", false, false},
		{"http://[::1]:8939", nil, "http://[::1]:8939/oauth/callback", false, false},
		{"https://gw.example.com", []string{"gw.example.com"}, "https://gw.example.com/oauth/callback", false, false},
		{"https://GW.example.com/switchboard/", []string{"gw.example.com"}, "https://GW.example.com/switchboard/oauth/callback", false, false},
		{"https://gw.example.com", nil, "https://gw.example.com/oauth/callback", false, true},
		{"http://gw.example.com", []string{"gw.example.com"}, "plain http only on a loopback host", true, false},
		{"gw.example.com", nil, "absolute http or https URL", true, false},
		{"ftp://gw.example.com", nil, "absolute http or https URL", true, false},
		{"https://gw.example.com/?x=1", nil, "query", true, false},
		{"https://gw.example.com/#x", nil, "fragment", true, false},
		{"https://ann@gw.example.com", nil, "user", true, false},
		{"https://", nil, "absolute", true, false},
	} {
		got, warn, err := publicCallback(tc.raw, "--public-url", tc.allow)
		switch {
		case tc.wantErr && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %q, %v; want an error with %q", tc.raw, got, err, tc.want)
		case !tc.wantErr && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.raw, got, err, tc.want)
		case (warn != "") != tc.warn:
			t.Errorf("%s: warning %q; want one: %v", tc.raw, warn, tc.warn)
		}
	}
}
