package netguard

import "net/netip"

// special lists every range that is not a public unicast destination.
// Lookups take the longest matching prefix, so a specific entry (a metadata
// address, the broadcast address) wins over the range that contains it and
// the order of the table does not matter.
//
// The source is the IANA IPv4 and IPv6 Special-Purpose Address Registries
// (RFC 6890, updated by RFCs 8190 and later), plus well-known cloud metadata
// endpoints. Registry entries that the registry marks "globally reachable"
// (AS112, AMT, the anycast service addresses in 192.0.0.0/24 and
// 2001::/23) are refused too: they are infrastructure, never an MCP server,
// and refusing them keeps the rule "every registry entry is refused".
//
// IPv6 space outside 2000::/3 (global unicast, RFC 4291 §2.4) that no entry
// names is refused as reserved by CheckAddr itself, which also covers the
// deprecated IPv4-compatible (::a.b.c.d, RFC 4291 §2.5.5.1), IPv4-translated
// (::ffff:0:a.b.c.d, RFC 2765) and site-local (fec0::/10, RFC 3879) forms.
var special = []struct {
	prefix netip.Prefix
	reason string
}{
	// IPv4 Special-Purpose Address Registry.
	{pfx("0.0.0.0/8"), ReasonThisNetwork},         // RFC 791 §3.2; Linux treats 0.x as local
	{pfx("0.0.0.0/32"), ReasonUnspecified},        // RFC 1122 §3.2.1.3; connects to the local host
	{pfx("10.0.0.0/8"), ReasonPrivate},            // RFC 1918
	{pfx("100.64.0.0/10"), ReasonCGNAT},           // RFC 6598 shared address space
	{pfx("127.0.0.0/8"), ReasonLoopback},          // RFC 1122 §3.2.1.3
	{pfx("169.254.0.0/16"), ReasonLinkLocal},      // RFC 3927
	{pfx("172.16.0.0/12"), ReasonPrivate},         // RFC 1918
	{pfx("192.0.0.0/24"), ReasonReserved},         // RFC 6890 IETF protocol assignments (DS-Lite, PCP, TURN, NAT64 discovery)
	{pfx("192.0.2.0/24"), ReasonDocumentation},    // RFC 5737 TEST-NET-1
	{pfx("192.31.196.0/24"), ReasonReserved},      // RFC 7535 AS112-v4
	{pfx("192.52.193.0/24"), ReasonReserved},      // RFC 7450 AMT
	{pfx("192.88.99.0/24"), Reason6to4},           // RFC 3068 6to4 relay anycast, deprecated by RFC 7526
	{pfx("192.168.0.0/16"), ReasonPrivate},        // RFC 1918
	{pfx("192.175.48.0/24"), ReasonReserved},      // RFC 7534 AS112 direct delegation
	{pfx("198.18.0.0/15"), ReasonBenchmarking},    // RFC 2544
	{pfx("198.51.100.0/24"), ReasonDocumentation}, // RFC 5737 TEST-NET-2
	{pfx("203.0.113.0/24"), ReasonDocumentation},  // RFC 5737 TEST-NET-3
	{pfx("224.0.0.0/4"), ReasonMulticast},         // RFC 5771
	{pfx("240.0.0.0/4"), ReasonReserved},          // RFC 1112 §4 future use
	{pfx("255.255.255.255/32"), ReasonBroadcast},  // RFC 919 limited broadcast

	// IPv6 Special-Purpose Address Registry. ::ffff:0:0/96 (IPv4-mapped)
	// has no entry: CheckAddr unmaps it and judges the IPv4 address.
	{pfx("::/128"), ReasonUnspecified},          // RFC 4291 §2.5.2; connects to the local host on Linux
	{pfx("::1/128"), ReasonLoopback},            // RFC 4291 §2.5.3
	{pfx("64:ff9b::/96"), ReasonNAT64},          // RFC 6052 well-known prefix: embeds any IPv4 address
	{pfx("64:ff9b:1::/48"), ReasonNAT64},        // RFC 8215 local-use translation
	{pfx("100::/64"), ReasonReserved},           // RFC 6666 discard-only
	{pfx("2001::/23"), ReasonReserved},          // RFC 2928 IETF protocol assignments (anycast, AMT, AS112, DET)
	{pfx("2001::/32"), ReasonTeredo},            // RFC 4380: embeds the server's and client's IPv4 addresses
	{pfx("2001:2::/48"), ReasonBenchmarking},    // RFC 5180
	{pfx("2001:10::/28"), ReasonReserved},       // RFC 4843 ORCHID, deprecated
	{pfx("2001:20::/28"), ReasonReserved},       // RFC 7343 ORCHIDv2
	{pfx("2001:db8::/32"), ReasonDocumentation}, // RFC 3849
	{pfx("2002::/16"), Reason6to4},              // RFC 3056: embeds an IPv4 address
	{pfx("2620:4f:8000::/48"), ReasonReserved},  // RFC 7534 AS112 direct delegation
	{pfx("3fff::/20"), ReasonDocumentation},     // RFC 9637
	{pfx("fc00::/7"), ReasonUniqueLocal},        // RFC 4193
	{pfx("fe80::/10"), ReasonLinkLocal},         // RFC 4291 §2.5.6
	{pfx("ff00::/8"), ReasonMulticast},          // RFC 4291 §2.7

	// Cloud instance-metadata endpoints. All but one already sit in a
	// refused range; naming them makes the refusal obvious in logs.
	{pfx("169.254.169.254/32"), ReasonMetadata}, // AWS, GCP, Azure, OpenStack, DigitalOcean
	{pfx("169.254.170.2/32"), ReasonMetadata},   // AWS ECS task metadata and credentials
	{pfx("100.100.100.200/32"), ReasonMetadata}, // Alibaba Cloud
	{pfx("192.0.0.192/32"), ReasonMetadata},     // Oracle Cloud
	{pfx("fd00:ec2::254/128"), ReasonMetadata},  // AWS IMDS over IPv6
	// Azure WireServer: a public Microsoft address that answers only from
	// inside Azure VMs and hands out VM configuration. No registry lists
	// it, so it must be named here.
	{pfx("168.63.129.16/32"), ReasonMetadata},
}

// globalUnicast6 is the only IPv6 space IANA allocates for global unicast
// (IANA IPv6 Address Space registry; RFC 4291 §2.4).
var globalUnicast6 = pfx("2000::/3")

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// CheckAddr reports whether ip is a public unicast address: it returns nil
// if so and an [*Error] naming the range otherwise.
//
// An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is judged as the IPv4
// address it carries, since that is where a dual-stack socket connects.
// NAT64, 6to4 and Teredo addresses are refused outright: each can embed an
// arbitrary IPv4 address (127.0.0.1 or 10.x among them) that a translator
// or relay on the path would reach on our behalf. An address with a zone is
// refused; zones only make sense for link-scoped destinations.
func CheckAddr(ip netip.Addr) error {
	if e := checkAddr(ip); e != nil {
		return e
	}
	return nil // not a typed nil *Error
}

func checkAddr(ip netip.Addr) *Error {
	if !ip.IsValid() {
		return refuse("", ReasonUnspecified)
	}
	addr := ip.String()
	if reason := classify(ip.WithZone("").Unmap()); reason != "" {
		return refuse(addr, reason)
	}
	if ip.Zone() != "" {
		return refuse(addr, ReasonZone)
	}
	return nil
}

// classify returns the reason ip (unmapped, without zone) is refused, or ""
// if it is public.
func classify(ip netip.Addr) string {
	best, reason := -1, ""
	for _, s := range special {
		if s.prefix.Bits() > best && s.prefix.Contains(ip) {
			best, reason = s.prefix.Bits(), s.reason
		}
	}
	if reason == "" && ip.Is6() && !globalUnicast6.Contains(ip) {
		return ReasonReserved
	}
	return reason
}
