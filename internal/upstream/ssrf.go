package upstream

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/netguard"
)

// A remote server that is not trusted must be on the public internet: its
// URL, every address it resolves to when dialled and every redirect are
// checked by internal/netguard, so that a configuration (or a redirect)
// cannot turn Switchboard into a proxy to loopback, the LAN or a cloud
// metadata endpoint.

// guarded reports whether the server's connections go through the guard.
func (c *Conn) guarded() bool {
	return c.server.Trust.Level() != config.TrustTrusted
}

// checkURL refuses a non-public URL before any connection is made.
func (c *Conn) checkURL() error {
	if !c.guarded() {
		return nil
	}
	if err := netguard.CheckURL(c.server.URL); err != nil {
		return ssrfFault(c.server.Name, "connect", err)
	}
	return nil
}

// baseTransport is the transport under the capture round tripper.
func (c *Conn) baseTransport() http.RoundTripper {
	if !c.guarded() {
		return c.opts.HTTPTransport
	}
	if t, ok := c.opts.HTTPTransport.(*http.Transport); ok {
		return netguard.Transport(t)
	}
	return netguard.Transport(nil)
}

// httpClient is the client for the server's HTTP transports.
func (c *Conn) httpClient() *http.Client {
	hc := &http.Client{Transport: c.roundTripper()}
	if c.guarded() {
		hc.CheckRedirect = netguard.CheckRedirect
	}
	return hc
}

// ssrfFault explains a refused address, or returns nil when err is not
// one.
func ssrfFault(server, op string, err error) error {
	var ne *netguard.Error
	if !errors.As(err, &ne) {
		return nil
	}
	return fault.New(fault.CodePolicyBlocked, server, op, fmt.Errorf(
		"%w (a server that is not trusted must be on a public address; set \"trust\": \"trusted\" for a server you run yourself on this machine or your network)", ne))
}
