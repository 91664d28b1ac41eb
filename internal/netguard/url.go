package netguard

import (
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// CheckURL validates a remote server's URL before anything is dialled: the
// scheme must be http or https, the URL must carry no userinfo, and a host
// must be present. A host that is an IP literal is judged by [CheckAddr]; a
// hostname is left to [Control] at dial time, where the resolved address is
// known.
//
// Hosts written as numbers in a form other than a canonical dotted quad
// ("2130706433", "0x7f.1", "127.1", "0177.0.0.1", "127.0.0.1.") are IPv4
// addresses to inet_aton(3), and so to glibc's resolver, to curl and to
// browsers (WHATWG URL §3.5), but hostnames to Go. The same text therefore
// names different machines to different tools ("010.0.0.1" is 8.0.0.1 to
// inet_aton and 10.0.0.1 to a naive reader), so all such hosts are refused:
// with the reason of the address they decode to when that is not public,
// and as reserved otherwise.
//
// Userinfo is refused because a server URL is no place for credentials
// (they would be logged and sent on every request) and because
// "http://public.example@10.0.0.1/" is a classic way to disguise the host.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the raw URL, which may hold a password; keep
		// only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &Error{Reason: ReasonBadURL, Err: err}
	}
	return checkURL(u)
}

func checkURL(u *url.URL) error {
	if u.User != nil {
		// Addr is the host only: the URL itself carries the credentials.
		return refuse(u.Hostname(), ReasonUserinfo)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return refuse(u.Redacted(), ReasonBadScheme)
	}
	host := u.Hostname()
	if host == "" {
		return refuse(u.Redacted(), ReasonNoHost)
	}
	return checkHost(host)
}

// checkHost judges a URL host (brackets and port already removed).
func checkHost(host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		return CheckAddr(ip)
	}
	if !endsInNumber(host) {
		return nil // a hostname: checked at dial time
	}
	ip, ok := parseLooseIPv4(host)
	if !ok {
		// Not a valid number either; no resolver agrees on what it means.
		return refuse(host, ReasonReserved)
	}
	if reason := classify(ip); reason != "" {
		return refuse(host, reason)
	}
	return refuse(host, ReasonReserved)
}

// endsInNumber reports whether host's last label (ignoring one trailing dot)
// is numeric, which is what makes WHATWG URL parsers (§3.5, "ends in a
// number checker") treat the whole host as an IPv4 address. No registered
// top-level domain is numeric (RFC 3696 §2), so no real hostname is caught.
func endsInNumber(host string) bool {
	labels := strings.Split(host, ".")
	if labels[len(labels)-1] == "" {
		if len(labels) == 1 {
			return false
		}
		labels = labels[:len(labels)-1]
	}
	last := labels[len(labels)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseLooseIPv4 decodes host the way inet_aton(3) and the WHATWG IPv4
// parser do: one to four dot-separated parts, each decimal, octal (leading
// 0) or hex (leading 0x); the last part fills all remaining bytes, so
// "127.1" is 127.0.0.1 and "2130706433" is 127.0.0.1 as well.
func parseLooseIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 0xff {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		// The last part covers the 5-len(parts) bytes left.
		if n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Number parses one part of a loose IPv4 host (WHATWG URL §3.5,
// "IPv4 number parser"). "0x" alone is zero, as in that parser.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, true
		}
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	// ParseUint with an explicit base accepts no sign, prefix or
	// underscore, so only digits of the base get through.
	n, err := strconv.ParseUint(s, base, 64)
	return n, err == nil
}
