// Package netguard is the SSRF guard for remote (HTTP / SSE) MCP servers
// that are not trusted.
//
// An untrusted server's URL comes from a catalogue or a user's config, and
// whatever it names, Switchboard will connect to and send requests to. Left
// unchecked, "http://169.254.169.254/" reads cloud credentials and
// "http://127.0.0.1:6379/" talks to a local database. So such a server must
// be reached at a public unicast address, and nothing else.
//
// The guard works in three places, because checking the URL alone is not
// enough:
//
//   - [CheckURL] refuses bad schemes, userinfo and IP-literal hosts before
//     anything is dialled, so the error is early and readable.
//   - [Control], installed on the dialer by [Transport], checks the address
//     actually being connected to, after DNS. A hostname that resolves to a
//     private address, or that resolves to a public one at check time and a
//     private one at connect time (DNS rebinding), is refused there.
//   - [CheckRedirect] runs [CheckURL] on every redirect target; the redirect's
//     connection, if any, goes through [Control] as well.
//
// A caller checks the configured URL with [CheckURL] when it loads the
// config, then talks to the server through
//
//	&http.Client{Transport: netguard.Transport(nil), CheckRedirect: netguard.CheckRedirect}
//
// Which addresses are refused is decided by [CheckAddr] against the IANA
// IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and the RFCs
// that update them). Every refusal is an [*Error] with a stable Reason.
//
// This package is a leaf: it imports nothing from Switchboard.
package netguard

// Reasons a destination is refused. They are stable: callers may switch on
// them and they may appear in logs and user-facing messages.
const (
	// Address ranges (see CheckAddr).
	ReasonLoopback      = "loopback"
	ReasonPrivate       = "private"
	ReasonLinkLocal     = "link_local"
	ReasonMetadata      = "metadata" // cloud instance-metadata endpoints
	ReasonCGNAT         = "cgnat"
	ReasonUnspecified   = "unspecified"
	ReasonMulticast     = "multicast"
	ReasonBroadcast     = "broadcast"
	ReasonReserved      = "reserved" // also: non-canonical numeric IPv4 hosts
	ReasonDocumentation = "documentation"
	ReasonBenchmarking  = "benchmarking"
	ReasonNAT64         = "nat64"
	Reason6to4          = "6to4"
	ReasonTeredo        = "teredo"
	ReasonUniqueLocal   = "unique_local"
	ReasonThisNetwork   = "this_network"
	ReasonZone          = "zone" // an IPv6 zone on an otherwise public address

	// URL shape (see CheckURL).
	ReasonBadScheme = "bad_scheme"
	ReasonUserinfo  = "userinfo"
	ReasonNoHost    = "no_host"
	ReasonBadURL    = "bad_url" // the URL does not parse

	// Dial address (see Control).
	ReasonBadAddress = "bad_address" // not an IP:port, so it cannot be checked
)

// Error is a refused destination.
type Error struct {
	// Addr is what was refused, as the check saw it: an IP address, the
	// "ip:port" being dialled, the host of a URL, or a URL with its userinfo
	// removed. It never holds credentials, and is empty when the URL did not
	// parse (the raw text may hold them).
	Addr string
	// Reason is one of the Reason constants.
	Reason string
	// Err is the underlying cause, if any (for ReasonBadURL, the parse
	// error without the URL text).
	Err error
}

func (e *Error) Error() string {
	msg := "netguard: refused"
	if e.Addr != "" {
		msg += " " + e.Addr
	}
	msg += ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

func refuse(addr, reason string) *Error { return &Error{Addr: addr, Reason: reason} }
