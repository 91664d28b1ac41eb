package cli

import "testing"

func TestServeAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		flag, addr string
		allowHosts []string
		exposed    bool
	}{
		{"", defaultServeAddr, nil, false},
		{"18007", "127.0.0.1:18007", nil, false},
		{"18007", "127.0.0.1:18007", []string{"gw.example"}, true},
		{":18008", ":18008", nil, true},
		{"0.0.0.0:18008", "0.0.0.0:18008", nil, true},
		{"[::]:18008", "[::]:18008", nil, true},
		{"192.0.2.1:18008", "192.0.2.1:18008", nil, true},
		{"localhost:18008", "localhost:18008", nil, false},
		{"[::1]:18008", "[::1]:18008", nil, false},
		{"127.0.0.1:0", "127.0.0.1:0", nil, false},
	}
	for _, tt := range tests {
		addr := serveAddr(tt.flag)
		if addr != tt.addr {
			t.Errorf("serveAddr(%q) = %q, want %q", tt.flag, addr, tt.addr)
		}
		if got := exposure(addr, tt.allowHosts); (got != "") != tt.exposed {
			t.Errorf("exposure(%q, %q) = %q, want exposed %v", addr, tt.allowHosts, got, tt.exposed)
		}
	}
}
