package frontdoor

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestCheckHost(t *testing.T) {
	extra := hostSet{"gw.lan": true, "fd00::1": true}
	tests := []struct {
		host string
		ok   bool
	}{
		{"localhost", true},
		{"localhost:8939", true},
		{"LocalHost:1", true},
		{"localhost:", true},
		{"127.0.0.1", true},
		{"127.0.0.1:8939", true},
		{"127.255.255.254:65535", true},
		{"[::1]", true},
		{"[::1]:8939", true},
		{"[0:0:0:0:0:0:0:1]:8939", true},
		{"::1", true},
		{"[::ffff:127.0.0.1]:8939", true},
		{"::ffff:127.0.0.1", true},
		{"[::ffff:7f00:1]", true},
		{"gw.lan:8939", true},
		{"GW.LAN", true},
		{"[fd00::1]:8939", true},
		{"[fd00:0::1]", true},

		{"", false},
		{":8939", false},
		{"localhost.evil.com", false},
		{"localhost.evil.com:8939", false},
		{"127.0.0.1.nip.io", false},
		{"127.0.0.1.nip.io:8939", false},
		{"localhost.", false},
		{"localhost.localdomain", false},
		{"evil.com", false},
		{"sub.gw.lan", false},
		{"0.0.0.0", false},
		{"[::]:8939", false},
		{"128.0.0.1", false},
		{"127.1", false},
		{"0x7f000001", false},
		{"2130706433", false},
		{"0177.0.0.1", false},
		{"127.000.000.001", false},
		{"[127.0.0.1]", false},
		{"[::1", false},
		{"[::1]x", false},
		{"[::1]:port", false},
		{"[::1]:123456", false},
		{"localhost:123456", false},
		{"localhost:-1", false},
		{"localhost:8939:1", false},
		{"::1:8939", false}, // the IPv6 address ::1:8939, not loopback
		{"[fe80::1%25lo]:8939", false},
		{"[::1%lo]", false},
		{"::1%lo", false},
		{"[::ffff:10.0.0.1]", false},
		{"localhost@evil.com", false},
		{"evil.com#localhost", false},
		{"evil.com/localhost", false},
		{"localhost\x00", false},
		{" localhost", false},
	}
	for _, tt := range tests {
		if err := checkHost(tt.host, extra); (err == nil) != tt.ok {
			t.Errorf("checkHost(%q) = %v, want ok=%t", tt.host, err, tt.ok)
		}
	}
}

func TestCheckOrigin(t *testing.T) {
	extra := hostSet{"gw.lan": true}
	tests := []struct {
		origin string
		ok     bool
	}{
		{"http://localhost", true},
		{"http://localhost:3000", true},
		{"https://127.0.0.1:8939", true},
		{"http://[::1]:8939", true},
		{"HTTP://LOCALHOST", true},
		{"https://gw.lan", true},

		{"", false},
		{"null", false},
		{"NULL", false},
		{"localhost", false},
		{"//localhost", false},
		{"ftp://localhost", false},
		{"file://", false},
		{"file:///etc/passwd", false},
		{"chrome-extension://abcdef", false},
		{"ws://localhost", false},
		{"http://", false},
		{"http://evil.com", false},
		{"http://localhost.evil.com", false},
		{"http://127.0.0.1.nip.io", false},
		{"http://localhost/", false},
		{"http://localhost/path", false},
		{"http://localhost?x", false},
		{"http://localhost#x", false},
		{"http://user@localhost", false},
		{"http://localhost@evil.com", false},
		{"http://localhost\\@evil.com", false},
		{"http://::1", true}, // bare IPv6, as for Host
		{"http://[::1", false},
		{"http://gw.lan.evil.com", false},
	}
	for _, tt := range tests {
		if err := checkOrigin(tt.origin, extra); (err == nil) != tt.ok {
			t.Errorf("checkOrigin(%q) = %v, want ok=%t", tt.origin, err, tt.ok)
		}
	}
}

// oracleHostname extracts the hostname of a host[:port] value in a simpler
// way than splitHostname, for the fuzz target to cross-check against.
func oracleHostname(hostport string) string {
	if rest, ok := strings.CutPrefix(hostport, "["); ok {
		h, _, _ := strings.Cut(rest, "]")
		return h
	}
	if strings.Count(hostport, ":") > 1 {
		return hostport
	}
	h, _, _ := strings.Cut(hostport, ":")
	return h
}

// oracleLoopback is the rule, checked with package net rather than
// net/netip: "localhost" in any case, or an address in 127.0.0.0/8 or ::1,
// IPv4-mapped forms included.
func oracleLoopback(hostname string) bool {
	if strings.EqualFold(hostname, "localhost") {
		return true
	}
	ip := net.ParseIP(hostname) // rejects zones, leading zeros, short forms
	return ip != nil && ip.IsLoopback()
}

// FuzzHostCheck checks that the Host and Origin checks never panic and
// accept only what the rules allow: a loopback hostname, and an Origin that
// is absent or an http(s) origin with a loopback hostname. origin "" stands
// for no Origin header. It checks the functions and the handler, which
// must agree.
func FuzzHostCheck(f *testing.F) {
	for _, s := range [][2]string{
		{"localhost:8939", ""},
		{"127.0.0.1:8939", "http://localhost:3000"},
		{"[::1]:8939", "https://[::1]"},
		{"::1", "null"},
		{"[::ffff:127.0.0.1]:1", "http://127.0.0.2"},
		{"localhost.evil.com", "http://localhost.evil.com"},
		{"127.0.0.1.nip.io:8939", "http://127.0.0.1.nip.io"},
		{"[fe80::1%25lo]:1", "http://localhost@evil.com"},
		{"LOCALHOST:", "HTTPS://LOCALHOST:"},
		{"0x7f.1", "http://[::1"},
		{"[::1]:99999", "http://[::1]:8939/"},
	} {
		f.Add(s[0], s[1])
	}
	h, err := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}), Options{NoAuth: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, host, origin string) {
		hostErr := checkHost(host, nil)
		if hostErr == nil && !oracleLoopback(oracleHostname(host)) {
			t.Fatalf("checkHost accepted %q, hostname %q is not loopback", host, oracleHostname(host))
		}
		var originErr error
		if origin != "" {
			originErr = checkOrigin(origin, nil)
			if originErr == nil {
				scheme, rest, ok := strings.Cut(origin, "://")
				if !ok || !(strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")) {
					t.Fatalf("checkOrigin accepted %q: not http(s)", origin)
				}
				if !oracleLoopback(oracleHostname(rest)) {
					t.Fatalf("checkOrigin accepted %q, hostname %q is not loopback", origin, oracleHostname(rest))
				}
				// What a browser would see must agree: a URL parser finds
				// the same loopback host and no user, path or query.
				if u, err := url.Parse(origin); err == nil && (u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "") {
					t.Fatalf("checkOrigin accepted %q with user, path, query or fragment", origin)
				}
			}
		}

		r := &http.Request{
			Method:     http.MethodGet,
			URL:        &url.URL{Path: DefaultPath},
			Host:       host,
			Header:     http.Header{},
			Body:       http.NoBody,
			RemoteAddr: "127.0.0.1:1234",
		}
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		wantOK := hostErr == nil && originErr == nil
		switch {
		case wantOK && rec.Code != http.StatusNoContent:
			t.Fatalf("handler: Host %q Origin %q: status %d, want 204", host, origin, rec.Code)
		case !wantOK && rec.Code != http.StatusForbidden:
			t.Fatalf("handler: Host %q Origin %q: status %d, want 403", host, origin, rec.Code)
		}
	})
}
