package frontdoor

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// hostSet is the set of extra hostnames that [Options.AllowedHosts] admits
// in Host and Origin, in canonical form (see canonicalHostname).
type hostSet map[string]bool

// newHostSet validates and canonicalises [Options.AllowedHosts]. An entry
// is a bare hostname or IP address: "gateway.lan", "192.0.2.7", "fd00::1"
// or "[fd00::1]". Schemes, ports, paths, wildcards and IPv6 zones are
// rejected, so that a misconfiguration fails at start instead of silently
// never matching.
func newHostSet(hosts []string) (hostSet, error) {
	set := make(hostSet, len(hosts))
	for i, h := range hosts {
		name, ok := parseAllowedHost(h)
		if !ok {
			return nil, fmt.Errorf("frontdoor: AllowedHosts[%d] %q is not a bare hostname or IP address (no scheme, port, path or wildcard)", i, h)
		}
		set[name] = true
	}
	return set, nil
}

func parseAllowedHost(h string) (string, bool) {
	bracketed := strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]")
	if bracketed {
		h = h[1 : len(h)-1]
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		if ip.Zone() != "" || (bracketed && !ip.Is6()) {
			return "", false
		}
		return ip.String(), true
	}
	if bracketed || !isDNSName(h) {
		return "", false
	}
	return strings.ToLower(h), true
}

// isDNSName reports whether s is a plausible DNS name: letters, digits,
// '-', '_' and non-empty dot-separated labels.
func isDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range []byte(label) {
			switch {
			case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
			default:
				return false
			}
		}
	}
	return true
}

var (
	errHostSyntax   = errors.New("malformed host")
	errHostNotLocal = errors.New("host is not loopback or allowed")
)

// checkHost checks a Host header value ("host", "host:port", "[v6]:port" or
// a bare "v6"). The hostname must be loopback (see isLoopbackHostname) or in
// extra.
func checkHost(hostport string, extra hostSet) error {
	name, err := splitHostname(hostport)
	if err != nil {
		return err
	}
	if isLoopbackHostname(name) || extra[name] {
		return nil
	}
	return errHostNotLocal
}

var (
	errOriginNull   = errors.New("origin is null")
	errOriginScheme = errors.New("origin scheme is not http or https")
	errOriginSyntax = errors.New("malformed origin")
)

// checkOrigin checks an Origin header value. It must be the serialisation
// of an http or https origin (RFC 6454 §6.1: scheme "://" host [":" port],
// nothing else) whose host passes [checkHost]. "null", sent by sandboxed
// frames, file: pages and some redirects, is rejected: it names no host
// that could be checked.
func checkOrigin(origin string, extra hostSet) error {
	if origin == "null" {
		return errOriginNull
	}
	scheme, rest, ok := strings.Cut(origin, "://")
	if !ok {
		return errOriginSyntax
	}
	if !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") {
		return errOriginScheme
	}
	// Userinfo, paths, queries and fragments are not part of an origin; a
	// browser never sends them, and "http://localhost@evil.com" must not be
	// read as localhost.
	if strings.ContainsAny(rest, "/?#@\\") {
		return errOriginSyntax
	}
	return checkHost(rest, extra)
}

// splitHostname returns the canonical hostname of a host[:port] value:
// IP addresses in netip's canonical form, names in lower case. It accepts
// "[v6]" and "[v6]:port", a bare IPv6 address without a port (as the
// requirements allow "::1"), and "name" or "name:port" where port is at
// most five digits (RFC 3986 §3.2.3 allows an empty port). IPv6 zones are
// rejected: a zone is never needed to reach this host's loopback, and it
// cannot name a loopback interface portably.
func splitHostname(hostport string) (string, error) {
	var host, port string
	switch {
	case strings.HasPrefix(hostport, "["):
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", errHostSyntax
		}
		host, port = hostport[1:end], hostport[end+1:]
		if port != "" {
			if port[0] != ':' {
				return "", errHostSyntax
			}
			port = port[1:]
		}
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.Is6() || ip.Zone() != "" || !validPort(port) {
			return "", errHostSyntax
		}
		return ip.String(), nil
	case strings.Count(hostport, ":") > 1:
		// A bare IPv6 address; with more than one colon there is no way to
		// tell a port apart, so none is allowed.
		ip, err := netip.ParseAddr(hostport)
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", errHostSyntax
		}
		return ip.String(), nil
	default:
		host, port, _ = strings.Cut(hostport, ":")
		if host == "" || !validPort(port) {
			return "", errHostSyntax
		}
		if ip, err := netip.ParseAddr(host); err == nil {
			// Without brackets and colons only IPv4 parses here, but say so.
			if !ip.Is4() {
				return "", errHostSyntax
			}
			return ip.String(), nil
		}
		return strings.ToLower(host), nil
	}
}

func validPort(port string) bool {
	if len(port) > 5 {
		return false
	}
	for _, c := range []byte(port) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isLoopbackHostname reports whether a canonical hostname (from
// splitHostname) is "localhost" or a loopback address: 127.0.0.0/8, ::1,
// or an IPv4-mapped IPv6 form of 127.0.0.0/8 such as ::ffff:127.0.0.1.
// Names that merely start or end like one ("localhost.evil.com",
// "127.0.0.1.nip.io", "localhost.") are not loopback: their owner decides
// what they resolve to, which is exactly what DNS rebinding exploits.
func isLoopbackHostname(name string) bool {
	if name == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(name)
	if err != nil || ip.Zone() != "" {
		return false
	}
	return ip.Unmap().IsLoopback()
}
