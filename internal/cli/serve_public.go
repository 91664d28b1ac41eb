package cli

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
)

// publicCallback is the URL at which the gateway takes logins' redirects
// (host.OAuthOptions.CallbackURL) for serve's --public-url raw, the URL
// clients and browsers reach the gateway at: raw without a trailing
// slash, followed by frontdoor.OAuthCallbackPath. A proxy in front that
// serves the gateway under a path must strip it. Plain http is taken for
// a loopback host only: an authorization server expects an https
// redirect URI anywhere else (OAuth 2.1 section 7.5.1). warning, when
// not "", says that the front door will refuse the redirect's Host.
func publicCallback(raw string, allowHosts []string) (callback, warning string, err error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", "", fmt.Errorf("serve: --public-url %q: %v", raw, err)
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return "", "", fmt.Errorf("serve: --public-url %q: want an absolute http or https URL, such as https://gateway.example.com", raw)
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", "", fmt.Errorf("serve: --public-url %q: a user, query or fragment has no place in it", raw)
	case u.Scheme == "http" && !loopback(net.JoinHostPort(u.Hostname(), "0")):
		return "", "", errors.New("serve: --public-url " + raw + ": plain http only on a loopback host; authorization servers expect an https redirect URI elsewhere")
	}
	if h := u.Hostname(); !loopback(net.JoinHostPort(h, "0")) && !slices.ContainsFunc(allowHosts, func(a string) bool {
		return strings.EqualFold(strings.Trim(a, "[]"), h)
	}) {
		warning = fmt.Sprintf("warning: --public-url names %s, which is not in --allow-host: the front door refuses a request whose Host names it, the login's redirect included, unless a proxy in front rewrites Host", h)
	}
	return strings.TrimRight(u.String(), "/") + frontdoor.OAuthCallbackPath, warning, nil
}
