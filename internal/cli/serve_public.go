package cli

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
)

// publicCallback is the URL at which the gateway takes logins' redirects
// (host.OAuthOptions.CallbackURL) for raw, the URL clients and browsers
// reach the gateway at (serve's --public-url, or the configuration's
// "gateway.publicUrl"; from names which, for messages): raw without a
// trailing slash, followed by frontdoor.OAuthCallbackPath. A proxy in
// front that serves the gateway under a path must strip it. Plain http is
// taken for a loopback host only: an authorization server expects an
// https redirect URI anywhere else (OAuth 2.1 section 7.5.1). warning,
// when not "", says that the front door will refuse the redirect's Host.
func publicCallback(raw, from string, allowHosts []string) (callback, warning string, err error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", "", fmt.Errorf("serve: %s %q: %v", from, raw, err)
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return "", "", fmt.Errorf("serve: %s %q: want an absolute http or https URL, such as https://gateway.example.com", from, raw)
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", "", fmt.Errorf("serve: %s %q: a user, query or fragment has no place in it", from, raw)
	case u.Scheme == "http" && !loopback(net.JoinHostPort(u.Hostname(), "0")):
		return "", "", errors.New("serve: " + from + " " + raw + ": plain http only on a loopback host; authorization servers expect an https redirect URI elsewhere")
	}
	if h := u.Hostname(); !loopback(net.JoinHostPort(h, "0")) && !slices.ContainsFunc(allowHosts, func(a string) bool {
		return strings.EqualFold(strings.Trim(a, "[]"), h)
	}) {
		warning = fmt.Sprintf("warning: %s names %s, which is not in --allow-host: the front door refuses a request whose Host names it, the login's redirect included, unless a proxy in front rewrites Host", from, h)
	}
	return strings.TrimRight(u.String(), "/") + frontdoor.OAuthCallbackPath, warning, nil
}

// settlePublicURL sets the logins' redirect URL from cfg's
// "gateway.publicUrl" when --public-url (checked by checkServe) has not
// set it. serve --stdio does not read the field: it serves no HTTP.
func (r *server) settlePublicURL(cfg *config.Config) error {
	f := &r.serve
	if f.publicURL != "" || f.stdio || cfg.Gateway.PublicURL == "" {
		return nil
	}
	cb, warning, err := publicCallback(cfg.Gateway.PublicURL, "gateway.publicUrl in "+cfg.Source, f.allowHosts)
	if err != nil {
		return err
	}
	if warning != "" {
		fmt.Fprintln(r.env.Stderr, warning)
	}
	f.callback = cb
	return nil
}

// publicURLChanged reports, on a reload, whether cfg's "gateway.publicUrl"
// differs from prev's where it is the one in use. The logins' redirect URL
// is fixed when the host opens: a change takes effect at the next start.
func (r *server) publicURLChanged(prev, cfg *config.Config) bool {
	f := r.serve
	return r.serving() && !f.stdio && f.publicURL == "" && prev != nil && prev.Gateway.PublicURL != cfg.Gateway.PublicURL
}
