package netguard

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// maxRedirects matches net/http's default policy.
const maxRedirects = 10

// Control is a [net.Dialer] Control function that refuses connections to
// addresses that are not public (see [CheckAddr]).
//
// It runs after name resolution, on each address the dialer actually
// tries, just before connect(2). That is what defeats DNS rebinding: a name
// that resolved to a public address when it was checked and to 127.0.0.1
// when it is dialled is judged on 127.0.0.1. An address that is not an
// "ip:port" (a Unix socket path, say) cannot be judged and is refused.
func Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &Error{Addr: address, Reason: ReasonBadAddress, Err: err}
	}
	if e := checkAddr(ap.Addr()); e != nil {
		e.Addr = address // report what was dialled, port included
		return e
	}
	return nil
}

// Transport returns a copy of base whose connections are all checked by
// [Control]. A nil base means [http.DefaultTransport]'s settings. base is
// not modified.
//
// The copy differs from base in three ways, each because the check would
// otherwise be bypassed:
//
//   - DialContext is a [net.Dialer] (30 s connect timeout and keep-alive,
//     as in http.DefaultTransport) with Control set. Any dial function in
//     base is dropped.
//   - DialTLSContext and DialTLS are unset, so TLS runs over that dialer.
//   - Proxy is nil, so HTTP_PROXY and friends are ignored. Through a proxy
//     the dialer would connect to, and Control would judge, the proxy's
//     address; the proxy would then reach the real target, private or not,
//     unchecked. Untrusted servers are therefore always reached directly.
func Transport(base *http.Transport) *http.Transport {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	t := base.Clone()
	dialer := &net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control:   Control,
	}
	t.DialContext = dialer.DialContext
	// The deprecated Dial and DialTLS are still honoured when set.
	t.Dial = nil
	t.DialTLSContext = nil
	t.DialTLS = nil
	t.Proxy = nil
	return t
}

// CheckRedirect is an [http.Client] CheckRedirect function that runs
// [CheckURL]'s checks on every redirect target and, like net/http's
// default policy, stops after 10 redirects.
//
// A redirect to a hostname that resolves privately is caught by [Control]
// when the client dials it; checking here as well stops literal targets,
// bad schemes and userinfo before any dial, with a clear error.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errors.New("netguard: stopped after 10 redirects")
	}
	if req.URL == nil {
		return refuse("", ReasonNoHost)
	}
	return checkURL(req.URL)
}
