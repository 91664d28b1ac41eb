package netguard

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url  string
		want string // "" means allowed
	}{
		// Allowed: public literals, and hostnames (judged at dial time).
		{"https://example.com/mcp", ""},
		{"http://example.com:8080/sse", ""},
		{"HTTPS://EXAMPLE.COM/", ""},
		{"https://8.8.8.8/", ""},
		{"https://[2606:4700:4700::1111]:443/mcp", ""},
		{"http://localhost/", ""},
		{"http://localhost:8080/", ""},
		{"http://metadata.google.internal/", ""},
		{"https://1password.com/", ""}, // numeric first label is fine
		{"https://123.example/", ""},
		{"https://x.0xg/", ""}, // "0xg" is not a number

		// Scheme.
		{"file:///etc/passwd", "bad_scheme"},
		{"gopher://127.0.0.1:6379/_INFO", "bad_scheme"},
		{"ftp://example.com/", "bad_scheme"},
		{"ws://example.com/", "bad_scheme"},
		{"example.com/mcp", "bad_scheme"},
		{"//example.com/mcp", "bad_scheme"},
		{"javascript:alert(1)", "bad_scheme"},

		// Userinfo.
		{"http://user:pw@host/", "userinfo"},
		{"http://user@host/", "userinfo"},
		{"http://example.com@10.0.0.1/", "userinfo"},
		{"http://:pw@host/", "userinfo"},

		// No host.
		{"http:///path", "no_host"},
		{"http://:80/", "no_host"},
		{"http:example.com", "no_host"},
		{"https://", "no_host"},

		// Unparseable.
		{"http://[::1/", "bad_url"},
		{"http://host:bad port/", "bad_url"},
		{"http://%zz/", "bad_url"},
		{"http://exa mple.com/", "bad_url"},

		// IP literals.
		{"http://127.0.0.1/", "loopback"},
		{"http://127.0.0.1:8080/mcp", "loopback"},
		{"http://[::1]:80/", "loopback"},
		{"http://[::ffff:127.0.0.1]/", "loopback"},
		{"http://[::ffff:a00:1]/", "private"},
		{"http://[0:0:0:0:0:ffff:7f00:1]/", "loopback"},
		{"http://10.0.0.1/", "private"},
		{"http://169.254.169.254/latest/meta-data/", "metadata"},
		{"http://[fd00:ec2::254]/", "metadata"},
		{"http://0.0.0.0:8080/", "unspecified"},
		{"http://[::]:8080/", "unspecified"},
		{"http://[fe80::1%25eth0]/", "link_local"},
		{"http://[2606:4700:4700::1111%25eth0]/", "zone"},
		{"http://[64:ff9b::a00:1]/", "nat64"},
		{"http://[2002:7f00:1::]/", "6to4"},

		// Numeric IPv4 forms other than a canonical dotted quad.
		{"http://0x7f000001/", "loopback"},
		{"http://0X7F000001/", "loopback"},
		{"http://2130706433/", "loopback"},
		{"http://017700000001/", "loopback"},
		{"http://127.1/", "loopback"},
		{"http://127.0.1/", "loopback"},
		{"http://0x7f.1/", "loopback"},
		{"http://0177.0.0.1/", "loopback"},
		{"http://127.0.0.1./", "loopback"},
		{"http://0/", "unspecified"},
		{"http://0x0/", "unspecified"},
		{"http://0xa9.0xfe.0xa9fe/", "metadata"},
		{"http://0xa9fea9fe/", "metadata"},
		{"http://2852039166/", "metadata"},
		{"http://167772161/", "private"},
		{"http://134744072/", "reserved"},   // 8.8.8.8, but not in a form everyone agrees on
		{"http://8.8.8.8./", "reserved"},    // trailing dot
		{"http://010.0.0.1/", "reserved"},   // 8.0.0.1 to inet_aton, 10.0.0.1 to a naive reader
		{"http://08.8.8.8/", "reserved"},    // not valid octal
		{"http://4294967296/", "reserved"},  // too large
		{"http://1.2.3.4.5/", "reserved"},   // too many parts
		{"http://1.256.3/", "reserved"},     // part out of range
		{"http://example.123/", "reserved"}, // numeric TLD: WHATWG parsers fail it
		{"http://99999999999999999999999/", "reserved"},
	}
	for _, tt := range tests {
		if got := reasonOf(t, CheckURL(tt.url)); got != tt.want {
			t.Errorf("CheckURL(%q) reason = %q, want %q", tt.url, got, tt.want)
		}
	}
}

func TestParseLooseIPv4(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" means not an address
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0177.0.0.01", "127.0.0.1"},
		{"0x7F.0X0.0.0x1", "127.0.0.1"},
		{"0xa9.0xfe.0xa9fe", "169.254.169.254"},
		{"1.2.3.4.", "1.2.3.4"},
		{"0x", "0.0.0.0"},
		{"4294967295", "255.255.255.255"},
		{"1.16777215", "1.255.255.255"},
		{"1.2.65535", "1.2.255.255"},
		{"", ""},
		{".", ""},
		{"1..2", ""},
		{"4294967296", ""},
		{"1.16777216", ""},
		{"1.2.65536", ""},
		{"1.2.3.256", ""},
		{"256.1", ""},
		{"1.2.3.4.5", ""},
		{"08", ""},
		{"0xg", ""},
		{"-1", ""},
		{"+1", ""},
		{"1_0", ""},
		{"1.2.3.4..", ""},
	}
	for _, tt := range tests {
		ip, ok := parseLooseIPv4(tt.in)
		got := ""
		if ok {
			got = ip.String()
		}
		if got != tt.want {
			t.Errorf("parseLooseIPv4(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCheckURLNoCredentials makes sure no refusal repeats a password.
func TestCheckURLNoCredentials(t *testing.T) {
	for _, raw := range []string{
		"http://user:s3cret@host/",
		"http://user:s3cret@host:bad port/",
		"http://user:s3cret@[::1/",
		"gopher://user:s3cret@host/",
	} {
		err := CheckURL(raw)
		if err == nil {
			t.Errorf("CheckURL(%q) = nil", raw)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("CheckURL(%q) leaks the password: %v", raw, err)
		}
	}
}

func TestCheckURLBadURLCause(t *testing.T) {
	err := CheckURL("http://[::1/")
	var e *Error
	if !errors.As(err, &e) || e.Reason != ReasonBadURL || e.Err == nil {
		t.Fatalf("CheckURL = %#v, want bad_url with a cause", err)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		t.Errorf("cause still a *url.Error, which repeats the URL: %v", ue)
	}
}

// FuzzCheckURL checks that CheckURL never panics and never passes a URL
// whose host is an IP literal (in any form Go, inet_aton or WHATWG would
// accept) that is not public.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com/mcp",
		"http://127.0.0.1:8080/",
		"http://[::ffff:127.0.0.1]/",
		"http://[fe80::1%25eth0]/",
		"http://0x7f.1/",
		"http://2130706433/",
		"http://127.0.0.1./",
		"http://user:pw@host/",
		"file:///etc/passwd",
		"http://[64:ff9b::a00:1]/",
		"https://8.8.8.8/",
		"http://%31%32%37.0.0.1/",
		"http://１２７.０.０.１/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if CheckURL(raw) != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("CheckURL(%q) = nil but url.Parse fails: %v", raw, err)
		}
		if u.User != nil {
			t.Fatalf("CheckURL(%q) = nil with userinfo", raw)
		}
		if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
			t.Fatalf("CheckURL(%q) = nil with scheme %q", raw, u.Scheme)
		}
		host := u.Hostname()
		if host == "" {
			t.Fatalf("CheckURL(%q) = nil with no host", raw)
		}
		if ip, err := netip.ParseAddr(host); err == nil && CheckAddr(ip) != nil {
			t.Fatalf("CheckURL(%q) = nil for non-public %s", raw, ip)
		}
		if ip := net.ParseIP(host); ip != nil {
			if a, _ := netip.AddrFromSlice(ip); CheckAddr(a) != nil {
				t.Fatalf("CheckURL(%q) = nil for non-public %s", raw, ip)
			}
		}
		if ip, ok := parseLooseIPv4(host); ok && CheckAddr(ip) != nil {
			t.Fatalf("CheckURL(%q) = nil for %q, which decodes to non-public %s", raw, host, ip)
		}
	})
}
