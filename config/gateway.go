package config

import (
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
)

// Gateway holds the settings of the gateway's HTTP endpoint (`switchboard
// serve --http`), the top-level "gateway" object. Its zero value is the
// default: no OAuth, no public URL.
type Gateway struct {
	// OAuth ("oauth") makes the gateway an OAuth 2.1 resource server that
	// accepts JWT access tokens; nil means none. serve's --oauth-* flags
	// override its fields one by one.
	OAuth *GatewayOAuth
	// PublicURL ("publicUrl") is the URL at which clients and browsers
	// reach the gateway, such as https://gw.example.com: the logins the
	// gateway starts come back to PublicURL/oauth/callback, through its
	// front door. An absolute https URL (http only on a loopback host),
	// without a user, query or fragment; ${VAR} references are expanded.
	// "" means none: each login binds a loopback listener of its own.
	// serve's --public-url takes its place.
	PublicURL string
}

// GatewayOAuth is the gateway as an OAuth 2.1 resource server: it accepts
// JWT access tokens of one authorization server (the "gateway.oauth"
// object; the fields of serve's --oauth-issuer, --oauth-audience,
// --oauth-jwks and --oauth-scopes). Its values have ${VAR} references
// expanded.
type GatewayOAuth struct {
	// Issuer ("issuer") is the authorization server whose tokens are
	// accepted: an https URL (http only on a loopback host). Required.
	Issuer string
	// Audience ("audience") is the value a token's "aud" must hold: the
	// gateway's resource identifier, normally its URL. Required.
	Audience string
	// JWKS ("jwks") is where the issuer's signing keys are: an https URL
	// (http only on a loopback host) or an absolute file path. "" means
	// the jwks_uri of the issuer's metadata.
	JWKS string
	// Scopes ("scopes") must all be in a token; nil means none. With
	// scopes, a token that has no "scope", "scp" or "roles" claim at all
	// is refused.
	Scopes []string
	// RequireAtJWT ("requireAtJwt") accepts only tokens whose header typ
	// is "at+jwt" (RFC 9068). Default false: "JWT", or no typ, is
	// accepted too, as Keycloak, Microsoft Entra, Auth0 and Okta send
	// them; ID tokens are refused by their claims (at_hash, c_hash,
	// Keycloak's typ "ID") either way.
	RequireAtJWT bool
}

// Equal reports whether o and p hold the same settings (nil equals nil).
func (o *GatewayOAuth) Equal(p *GatewayOAuth) bool {
	if o == nil || p == nil {
		return o == p
	}
	return o.Issuer == p.Issuer && o.Audience == p.Audience && o.JWKS == p.JWKS && slices.Equal(o.Scopes, p.Scopes) && o.RequireAtJWT == p.RequireAtJWT
}

var (
	gatewayFields      = []string{"oauth", "publicUrl"}
	gatewayOAuthFields = []string{"issuer", "audience", "jwks", "scopes", "requireAtJwt"}
)

// checkIssuerURL returns what is wrong with an issuer or key set URL, or
// "": the rule of jwtauth, which checks the flags' values.
func checkIssuerURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "want an absolute URL"
	}
	switch u.Scheme {
	case "https":
		return ""
	case "http":
		if h := u.Hostname(); h == "localhost" || h == "127.0.0.1" || h == "::1" {
			return ""
		}
		return "http is allowed only on a loopback host; want an https URL"
	}
	return "want an https URL"
}

// checkJWKS returns what is wrong with a key set location, or "".
func checkJWKS(s string) string {
	if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
		return checkIssuerURL(s)
	}
	if !filepath.IsAbs(s) {
		return "want an https URL or an absolute file path"
	}
	return ""
}

// checkPublicURL returns what is wrong with the gateway's public URL, or
// "": where an authorization server sends a person's browser back, so
// https (OAuth 2.1 section 7.5.1 allows plain http for a loopback host
// alone), and a base that /oauth/callback is appended to.
func checkPublicURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return "want an absolute https URL, such as https://gw.example.com"
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "a user, query or fragment has no place in it"
	case u.Scheme == "http" && !loopbackHost(u.Hostname()):
		return "http is allowed only on a loopback host; want an https URL (authorization servers expect an https redirect URI)"
	}
	return ""
}

// loopbackHost reports whether h is localhost or a loopback address.
func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Unmap().IsLoopback()
}

func checkAudience(s string) string {
	if s == "" {
		return "must not be empty"
	}
	return ""
}

// decodeGateway decodes the top-level "gateway" object.
func (d *decoder) decodeGateway(n *node, p *jsonPath) Gateway {
	var g Gateway
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return g
	}
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "oauth":
			g.OAuth = d.decodeGatewayOAuth(m.val, fp)
		case "publicUrl":
			g.PublicURL, _ = d.expandedURL(m.val, fp, checkPublicURL)
		default:
			d.unknown(fp, m.key, gatewayFields, nil, "")
		}
	}
	return g
}

// decodeGatewayOAuth decodes "gateway.oauth"; nil after an error.
func (d *decoder) decodeGatewayOAuth(n *node, p *jsonPath) *GatewayOAuth {
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return nil
	}
	start := len(d.errs)
	o := &GatewayOAuth{}
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "issuer":
			o.Issuer, _ = d.expandedURL(m.val, fp, checkIssuerURL)
		case "audience":
			o.Audience, _ = d.expandedURL(m.val, fp, checkAudience)
		case "jwks":
			o.JWKS, _ = d.expandedURL(m.val, fp, checkJWKS)
		case "scopes":
			if v, ok := d.strs(m.val, fp, ""); ok {
				for i, s := range v {
					if s == "" || strings.ContainsAny(s, " \t\r\n,") {
						d.add(fp.i(i), "", "want a scope: not empty, without spaces or commas", nil)
					}
				}
				if len(v) > 0 {
					o.Scopes = v
				}
			}
		case "requireAtJwt":
			o.RequireAtJWT, _ = d.boolean(m.val, fp, "")
		default:
			d.unknown(fp, m.key, gatewayOAuthFields, nil, "")
		}
	}
	if len(d.errs) > start {
		return nil
	}
	if !hasMember(n, "issuer") || !hasMember(n, "audience") {
		d.add(p, "", `"issuer" and "audience" go together: a token is accepted from one issuer for one audience`, nil)
		return nil
	}
	return o
}

// validateGateway checks a hand-built Config's gateway settings.
func (c *Config) validateGateway(add func(p *jsonPath, msg string)) {
	if u := c.Gateway.PublicURL; u != "" {
		if msg := checkPublicURL(u); msg != "" {
			add((*jsonPath)(nil).k("gateway").k("publicUrl"), msg)
		}
	}
	o := c.Gateway.OAuth
	if o == nil {
		return
	}
	p := (*jsonPath)(nil).k("gateway").k("oauth")
	if msg := checkIssuerURL(o.Issuer); msg != "" {
		add(p.k("issuer"), msg)
	}
	if msg := checkAudience(o.Audience); msg != "" {
		add(p.k("audience"), msg)
	}
	if o.JWKS != "" {
		if msg := checkJWKS(o.JWKS); msg != "" {
			add(p.k("jwks"), msg)
		}
	}
	for i, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n,") {
			add(p.k("scopes").i(i), "want a scope: not empty, without spaces or commas")
		}
	}
}
