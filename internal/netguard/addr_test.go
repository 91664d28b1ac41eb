package netguard

import (
	"errors"
	"net/netip"
	"testing"
)

// reasonOf returns err's Reason, "" for nil, and fails on any other error.
func reasonOf(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *netguard.Error", err, err)
	}
	return e.Reason
}

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr string
		want string // "" means allowed
	}{
		// Public addresses.
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"9.255.255.255", ""},
		{"11.0.0.0", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"126.255.255.255", ""},
		{"128.0.0.0", ""},
		{"169.253.255.255", ""},
		{"169.255.0.0", ""},
		{"172.15.255.255", ""},
		{"172.32.0.0", ""},
		{"192.0.1.0", ""},
		{"192.167.255.255", ""},
		{"192.169.0.0", ""},
		{"198.17.255.255", ""},
		{"198.20.0.0", ""},
		{"223.255.255.255", ""},
		{"2606:4700:4700::1111", ""},
		{"2001:4860:4860::8888", ""},
		{"2a00:1450:4001::1", ""},
		{"2001:200::1", ""}, // just past 2001::/23
		{"::ffff:8.8.8.8", ""},

		// IPv4 special-purpose registry.
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "this_network"},
		{"0.255.255.255", "this_network"},
		{"10.0.0.1", "private"},
		{"10.255.255.255", "private"},
		{"100.64.0.1", "cgnat"},
		{"100.127.255.255", "cgnat"},
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"169.254.0.1", "link_local"},
		{"169.254.169.254", "metadata"},
		{"169.254.170.2", "metadata"},
		{"100.100.100.200", "metadata"},
		{"192.0.0.192", "metadata"},
		{"168.63.129.16", "metadata"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.0.0.1", "reserved"},
		{"192.0.0.9", "reserved"},
		{"192.0.2.1", "documentation"},
		{"192.31.196.1", "reserved"},
		{"192.52.193.1", "reserved"},
		{"192.88.99.1", "6to4"},
		{"192.168.1.1", "private"},
		{"192.175.48.1", "reserved"},
		{"198.18.0.1", "benchmarking"},
		{"198.19.255.255", "benchmarking"},
		{"198.51.100.7", "documentation"},
		{"203.0.113.9", "documentation"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.255", "multicast"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.254", "reserved"},
		{"255.255.255.255", "broadcast"},

		// IPv4-mapped IPv6 is judged as the IPv4 address.
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:169.254.169.254", "metadata"},
		{"::ffff:0.0.0.0", "unspecified"},
		{"::ffff:7f00:1", "loopback"},

		// IPv6 special-purpose registry.
		{"::", "unspecified"},
		{"::1", "loopback"},
		{"64:ff9b::a00:1", "nat64"},
		{"64:ff9b::8.8.8.8", "nat64"},
		{"64:ff9b:1::1", "nat64"},
		{"100::1", "reserved"},
		{"2001::1", "teredo"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "teredo"},
		{"2001:1::1", "reserved"},
		{"2001:2::1", "benchmarking"},
		{"2001:3::1", "reserved"},
		{"2001:4:112::1", "reserved"},
		{"2001:10::1", "reserved"},
		{"2001:20::1", "reserved"},
		{"2001:30::1", "reserved"},
		{"2001:1ff:ffff::1", "reserved"},
		{"2001:db8::1", "documentation"},
		{"2002:7f00:1::", "6to4"},
		{"2002:808:808::1", "6to4"},
		{"2620:4f:8000::1", "reserved"},
		{"3fff::1", "documentation"},
		{"fc00::1", "unique_local"},
		{"fd12:3456::1", "unique_local"},
		{"fd00:ec2::254", "metadata"},
		{"fe80::1", "link_local"},
		{"febf:ffff::1", "link_local"},
		{"ff02::1", "multicast"},
		{"ff0e::1", "multicast"},

		// IPv6 outside 2000::/3 that no entry names.
		{"::127.0.0.1", "reserved"},       // IPv4-compatible, deprecated
		{"::ffff:0:7f00:1", "reserved"},   // IPv4-translated (SIIT)
		{"fec0::1", "reserved"},           // site-local, deprecated
		{"100:0:0:1::1", "reserved"},      // dummy IPv6 prefix
		{"5f00::1", "reserved"},           // SRv6 SIDs
		{"4000::1", "reserved"},           // unallocated
		{"e000::1", "reserved"},           // unallocated
		{"::2", "reserved"},               // unallocated
		{"1fff:ffff:ffff::1", "reserved"}, // just below 2000::/3

		// Zones.
		{"fe80::1%eth0", "link_local"},
		{"ff02::1%1", "multicast"},
		{"2606:4700:4700::1111%eth0", "zone"},
	}
	for _, tt := range tests {
		ip, err := netip.ParseAddr(tt.addr)
		if err != nil {
			t.Fatalf("bad test address %q: %v", tt.addr, err)
		}
		if got := reasonOf(t, CheckAddr(ip)); got != tt.want {
			t.Errorf("CheckAddr(%s) reason = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

func TestCheckAddrError(t *testing.T) {
	err := CheckAddr(netip.MustParseAddr("::ffff:127.0.0.1"))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("CheckAddr = %v, want *Error", err)
	}
	if e.Addr != "::ffff:127.0.0.1" || e.Reason != ReasonLoopback {
		t.Errorf("Error = %+v", e)
	}
	if got, want := err.Error(), "netguard: refused ::ffff:127.0.0.1: loopback"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	// A nil error must be an untyped nil, not a nil *Error in an interface.
	if err := CheckAddr(netip.MustParseAddr("8.8.8.8")); err != nil {
		t.Errorf("CheckAddr(8.8.8.8) = %#v, want nil", err)
	}
	if got := reasonOf(t, CheckAddr(netip.Addr{})); got != ReasonUnspecified {
		t.Errorf("CheckAddr(zero Addr) reason = %q, want unspecified", got)
	}
}

// TestSpecialTable checks the table itself: each prefix is written in
// canonical form, appears once, and refuses its first and last address with
// its own reason unless a longer entry claims that address; its IPv4 entries
// are refused in IPv4-mapped form too.
func TestSpecialTable(t *testing.T) {
	known := map[string]bool{
		ReasonLoopback: true, ReasonPrivate: true, ReasonLinkLocal: true,
		ReasonMetadata: true, ReasonCGNAT: true, ReasonUnspecified: true,
		ReasonMulticast: true, ReasonBroadcast: true, ReasonReserved: true,
		ReasonDocumentation: true, ReasonBenchmarking: true, ReasonNAT64: true,
		Reason6to4: true, ReasonTeredo: true, ReasonUniqueLocal: true,
		ReasonThisNetwork: true,
	}
	seen := map[netip.Prefix]bool{}
	for _, s := range special {
		if s.prefix != s.prefix.Masked() {
			t.Errorf("%s is not canonical (want %s)", s.prefix, s.prefix.Masked())
		}
		if seen[s.prefix] {
			t.Errorf("%s listed twice", s.prefix)
		}
		seen[s.prefix] = true
		if !known[s.reason] {
			t.Errorf("%s has unknown reason %q", s.prefix, s.reason)
		}
		for _, ip := range []netip.Addr{s.prefix.Addr(), lastAddr(s.prefix)} {
			got := reasonOf(t, CheckAddr(ip))
			if got == "" {
				t.Errorf("%s (in %s) allowed", ip, s.prefix)
				continue
			}
			if got != s.reason && !claimedByLonger(ip, s.prefix) {
				t.Errorf("%s (in %s) reason %q, want %q", ip, s.prefix, got, s.reason)
			}
			if ip.Is4() {
				mapped := netip.AddrFrom16(ip.As16())
				if m := reasonOf(t, CheckAddr(mapped)); m != got {
					t.Errorf("%s reason %q, want %q as for %s", mapped, m, got, ip)
				}
			}
		}
	}
}

func claimedByLonger(ip netip.Addr, p netip.Prefix) bool {
	for _, s := range special {
		if s.prefix.Bits() > p.Bits() && s.prefix.Contains(ip) {
			return true
		}
	}
	return false
}

// lastAddr returns the highest address in p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	ip, _ := netip.AddrFromSlice(b)
	return ip
}
