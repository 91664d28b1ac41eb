package netguard

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

func TestControl(t *testing.T) {
	tests := []struct {
		network, address string
		want             string // "" means allowed
	}{
		{"tcp4", "8.8.8.8:443", ""},
		{"tcp6", "[2606:4700:4700::1111]:443", ""},
		{"tcp6", "[::ffff:8.8.8.8]:443", ""},
		{"tcp4", "127.0.0.1:80", "loopback"},
		{"tcp4", "127.0.0.53:53", "loopback"},
		{"tcp6", "[::1]:443", "loopback"},
		{"tcp6", "[::ffff:127.0.0.1]:80", "loopback"},
		{"tcp4", "10.0.0.1:80", "private"},
		{"tcp4", "192.168.0.1:80", "private"},
		{"tcp4", "169.254.169.254:80", "metadata"},
		{"tcp6", "[fd00:ec2::254]:80", "metadata"},
		{"tcp4", "100.64.0.1:80", "cgnat"},
		{"tcp4", "0.0.0.0:80", "unspecified"},
		{"tcp6", "[::]:80", "unspecified"},
		{"tcp6", "[fe80::1%eth0]:80", "link_local"},
		{"tcp6", "[2606:4700:4700::1111%eth0]:443", "zone"},
		{"tcp6", "[64:ff9b::a00:1]:80", "nat64"},
		{"tcp6", "[2002:7f00:1::]:80", "6to4"},
		{"tcp6", "[2001::1]:80", "teredo"},
		{"udp4", "224.0.0.251:5353", "multicast"},
		{"udp4", "255.255.255.255:67", "broadcast"},
		{"unix", "/var/run/docker.sock", "bad_address"},
		{"tcp", "localhost:80", "bad_address"},
		{"tcp", "8.8.8.8", "bad_address"},
		{"tcp", "", "bad_address"},
	}
	for _, tt := range tests {
		err := Control(tt.network, tt.address, nil)
		if got := reasonOf(t, err); got != tt.want {
			t.Errorf("Control(%q, %q) reason = %q, want %q", tt.network, tt.address, got, tt.want)
		}
		var e *Error
		if errors.As(err, &e) && e.Addr != tt.address {
			t.Errorf("Control(%q, %q) Addr = %q, want the dialled address", tt.network, tt.address, e.Addr)
		}
	}
}

func TestCheckRedirect(t *testing.T) {
	via := func(n int) []*http.Request {
		reqs := make([]*http.Request, n)
		for i := range reqs {
			reqs[i] = newRequest(t, "https://example.com/")
		}
		return reqs
	}
	tests := []struct {
		target string
		via    int
		want   string // "" means allowed; "limit" means the redirect limit
	}{
		{"https://example.com/next", 1, ""},
		{"https://8.8.8.8/next", 9, ""},
		{"http://localhost/", 1, ""}, // a hostname: Control judges it at dial time
		{"http://127.0.0.1:8080/", 1, "loopback"},
		{"http://[::1]/", 1, "loopback"},
		{"http://[::ffff:10.0.0.1]/", 1, "private"},
		{"http://169.254.169.254/latest/meta-data/", 1, "metadata"},
		{"http://192.168.1.1/admin", 1, "private"},
		{"http://2130706433/", 1, "loopback"},
		{"http://user:pw@example.com/", 1, "userinfo"},
		{"ftp://example.com/", 1, "bad_scheme"},
		{"https://example.com/next", 10, "limit"},
		{"http://127.0.0.1/", 10, "limit"},
	}
	for _, tt := range tests {
		err := CheckRedirect(newRequest(t, tt.target), via(tt.via))
		var got string
		switch {
		case err == nil:
		case strings.Contains(err.Error(), "stopped after 10 redirects"):
			got = "limit"
		default:
			got = reasonOf(t, err)
		}
		if got != tt.want {
			t.Errorf("CheckRedirect(%q, %d via) = %v, want %q", tt.target, tt.via, err, tt.want)
		}
	}
}

func newRequest(t *testing.T, raw string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestTransport(t *testing.T) {
	proxy := func(*http.Request) (*url.URL, error) { return url.Parse("http://proxy.example:3128") }
	dialTLS := func(context.Context, string, string) (net.Conn, error) { return nil, errors.New("unused") }
	base := &http.Transport{
		Proxy:           proxy,
		DialTLSContext:  dialTLS,
		DialContext:     (&net.Dialer{}).DialContext,
		MaxIdleConns:    7,
		TLSClientConfig: &tls.Config{ServerName: "kept"},
	}
	tr := Transport(base)
	if tr == base {
		t.Fatal("Transport returned base itself")
	}
	if tr.Proxy != nil || tr.DialTLSContext != nil || tr.DialTLS != nil || tr.Dial != nil {
		t.Error("Transport left a proxy or a dial function that bypasses Control")
	}
	if tr.DialContext == nil {
		t.Error("Transport has no DialContext")
	}
	if tr.MaxIdleConns != 7 || tr.TLSClientConfig == nil || tr.TLSClientConfig.ServerName != "kept" {
		t.Error("Transport did not keep base's other settings")
	}
	if base.Proxy == nil || base.DialTLSContext == nil {
		t.Error("Transport modified base")
	}

	def := Transport(nil)
	std := http.DefaultTransport.(*http.Transport)
	if def.Proxy != nil || def.DialContext == nil {
		t.Error("Transport(nil) has a proxy or no dialer")
	}
	if def.ForceAttemptHTTP2 != std.ForceAttemptHTTP2 || def.MaxIdleConns != std.MaxIdleConns ||
		def.IdleConnTimeout != std.IdleConnTimeout || def.TLSHandshakeTimeout != std.TLSHandshakeTimeout {
		t.Error("Transport(nil) does not carry http.DefaultTransport's settings")
	}
	if std.Proxy == nil {
		t.Error("Transport(nil) modified http.DefaultTransport")
	}
}

// countingListener counts accepted connections: a refused dial must never
// reach accept(2), whatever a handler would or would not see.
type countingListener struct {
	net.Listener
	accepts atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepts.Add(1)
	}
	return c, err
}

// TestGuardedClientEndToEnd runs a real canary server on loopback and
// checks that a client built from Transport and CheckRedirect never
// connects to it, by IP literal or by name.
func TestGuardedClientEndToEnd(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	canary := &countingListener{Listener: ln}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "canary")
	}))
	srv.Listener.Close()
	srv.Listener = canary
	srv.Start()
	t.Cleanup(srv.Close)
	port := ln.Addr().(*net.TCPAddr).Port

	tr := Transport(nil)
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr, CheckRedirect: CheckRedirect}

	for _, host := range []string{"127.0.0.1", "localhost", "[::ffff:127.0.0.1]"} {
		target := "http://" + net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(port)) + "/"
		resp, err := client.Get(target)
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s succeeded through the guard", target)
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("GET %s: %v (%T), want a *netguard.Error inside", target, err, err)
			continue
		}
		if e.Reason != ReasonLoopback {
			t.Errorf("GET %s: reason %q, want loopback", target, e.Reason)
		}
		var ue *url.Error
		var oe *net.OpError
		if !errors.As(err, &ue) || !errors.As(err, &oe) {
			t.Errorf("GET %s: %v, want *url.Error wrapping *net.OpError", target, err)
		}
	}
	if n := canary.accepts.Load(); n != 0 {
		t.Fatalf("canary accepted %d connections through the guard", n)
	}

	// Positive control: the canary does count a connection that is made.
	plain := &http.Client{Transport: &http.Transport{}}
	resp, err := plain.Get(srv.URL)
	if err != nil {
		t.Fatalf("unguarded GET %s: %v", srv.URL, err)
	}
	resp.Body.Close()
	plain.CloseIdleConnections()
	if n := canary.accepts.Load(); n != 1 {
		t.Fatalf("canary accepted %d connections without the guard, want 1", n)
	}
}
