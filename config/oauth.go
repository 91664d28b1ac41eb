package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// OAuth is a Streamable HTTP server's "oauth" block: how Switchboard
// identifies itself to the server's authorization server when the server
// asks for an OAuth 2.1 login. Registration is tried in the order the MCP
// specification gives: the client ID metadata document (ClientMetadataURL,
// when the authorization server supports it), the pre-registered client
// (ClientID), then dynamic client registration (unless NoRegistration).
// Without the block, a server that asks for a login gets the metadata
// document when one is configured for Switchboard, else dynamic
// registration.
type OAuth struct {
	// ClientID ("clientId") is a client registered with the
	// authorization server ahead of time.
	ClientID string
	// ClientSecretEnv ("clientSecretEnv") names the environment variable
	// that holds ClientID's secret; "" for a public client.
	ClientSecretEnv string
	// ClientSecret is the value of ClientSecretEnv. Never shown: Redacted
	// clears it.
	ClientSecret string
	// Scopes ("scopes"), when set, are the scopes asked for instead of
	// those of the server's challenge or its scopes_supported.
	Scopes []string
	// ClientMetadataURL ("clientMetadataUrl") is an HTTPS URL, with a
	// path, of a client ID metadata document that describes Switchboard.
	ClientMetadataURL string
	// Issuer ("issuer"), when set, is the only authorization server
	// ClientID may be used with.
	Issuer string
	// Grant ("grant") is GrantAuthorizationCode (the default: a person
	// logs in) or GrantClientCredentials (a machine client: ClientID with
	// its secret or its private key, no person and no login).
	Grant string
	// PrivateKeyEnv ("privateKeyEnv") names the environment variable that
	// holds ClientID's private key (PEM: PKCS#8, EC or RSA), for
	// private_key_jwt client authentication (RFC 7523) with
	// GrantClientCredentials.
	PrivateKeyEnv string
	// PrivateKey is the value of PrivateKeyEnv. Never shown: Redacted
	// clears it.
	PrivateKey string
	// AssertionFile ("assertionFile") is, for GrantJWTBearer, the file
	// that holds the workload's identity token (a JWT its platform
	// issues and rotates, such as a Kubernetes projected service-account
	// token); it is read again for each token request.
	AssertionFile string
	// AssertionEnv ("assertionEnv") names, for GrantJWTBearer, the
	// environment variable that holds the workload's identity token
	// instead.
	AssertionEnv string
	// Assertion is the value of AssertionEnv. Never shown: Redacted
	// clears it.
	Assertion string
	// IdPTokenURL ("idpTokenUrl") is, for GrantEnterprise, the token
	// endpoint of the enterprise identity provider that exchanges the
	// person's ID token (AssertionFile or AssertionEnv) for an identity
	// assertion grant (RFC 8693), and IdPClientID ("idpClientId") the
	// client registered there.
	IdPTokenURL string
	IdPClientID string
	// PerCaller ("perCaller") makes each caller of the gateway use its
	// own grant to the server, kept per caller in the state store,
	// encrypted: a caller without one is asked to log in, and never uses
	// another's. The operator's grant (`switchboard login`) discovers the
	// server's tools. Only with GrantAuthorizationCode. "perCaller":
	// "report" sets PerCallerReport instead.
	PerCaller bool
	// PerCallerReport ("perCaller": "report") is PerCaller's report-only
	// mode: every caller still uses the server's one grant, callers may
	// already log in as themselves, and each call records whom the
	// server would have seen, or that the caller would be asked to log
	// in.
	PerCallerReport bool
	// TokenExchange ("tokenExchange"), with PerCaller, exchanges the
	// access token a caller presented to the gateway (a JWT) at Issuer's
	// token endpoint for one meant for the server (RFC 8693), as
	// ClientID, instead of asking the caller to log in. Needs Issuer and
	// ClientID.
	TokenExchange bool
	// ActorToken ("actorToken") names, with TokenExchange, the token that
	// says who acts on the caller's behalf (RFC 8693 section 2.1,
	// delegation): ActorClientCredentials sends the gateway's own access
	// token, from the client_credentials grant as ClientID with its
	// secret, as the exchange's actor_token, so that the token issued
	// names the gateway in its "act" claim. "" (the default) sends none.
	ActorToken string
}

// ActorClientCredentials is the one source of OAuth.ActorToken: the
// client's own token, from the client_credentials grant.
const ActorClientCredentials = "client_credentials"

// The grants of the "oauth" block.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	// GrantJWTBearer: workload identity federation (RFC 7523 section
	// 2.1): the workload's identity token is the grant.
	GrantJWTBearer = "jwt_bearer"
	// GrantEnterprise: enterprise-managed authorization: the person's ID
	// token from the enterprise identity provider is exchanged there for
	// an identity assertion grant (ID-JAG), which the server's
	// authorization server takes as a jwt-bearer grant from ClientID.
	GrantEnterprise = "enterprise"
)

var oauthFields = []string{"clientId", "clientSecretEnv", "scopes", "clientMetadataUrl", "issuer", "grant", "privateKeyEnv", "assertionFile", "assertionEnv", "idpTokenUrl", "idpClientId", "perCaller", "tokenExchange", "actorToken"}

var oauthHints = map[string]string{
	"clientSecret":  `a secret is never written in the configuration: put it in an environment variable and name it in "clientSecretEnv"`,
	"client_id":     `did you mean "clientId"?`,
	"client_secret": `put the secret in an environment variable and name it in "clientSecretEnv"`,
	"scope":         `did you mean "scopes"? (a list of strings)`,
	"privateKey":    `a key is never written in the configuration: put it in an environment variable and name it in "privateKeyEnv"`,
	"grant_type":    `did you mean "grant"?`,
}

// decodeOAuth decodes a server's "oauth" block; the secret is resolved by
// resolveOAuth, with the server's other references.
func (d *decoder) decodeOAuth(n *node, p *jsonPath, server string) (*OAuth, bool) {
	if n.kind != kindObject {
		d.wrongType(n, p, server, "object")
		return nil, false
	}
	o := &OAuth{}
	ok := true
	for _, m := range n.members {
		fp := p.k(m.key)
		var good bool
		switch m.key {
		case "clientId":
			o.ClientID, good = d.nonEmpty(m.val, fp, server, "client ID")
		case "clientSecretEnv":
			o.ClientSecretEnv, good = d.envName(m.val, fp, server)
		case "scopes":
			o.Scopes, good = d.strs(m.val, fp, server)
			for _, s := range o.Scopes {
				if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
					d.add(fp, server, fmt.Sprintf("invalid scope %s", quote(s)), nil)
					good = false
				}
			}
		case "clientMetadataUrl":
			o.ClientMetadataURL, good = d.str(m.val, fp, server)
			if good {
				if u, err := url.Parse(o.ClientMetadataURL); err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" {
					d.add(fp, server, "want an https URL with a path", nil)
					good = false
				}
			}
		case "issuer":
			o.Issuer, good = d.httpURL(m.val, fp, server)
		case "grant":
			o.Grant, good = d.str(m.val, fp, server)
			if good && o.Grant != GrantAuthorizationCode && o.Grant != GrantClientCredentials && o.Grant != GrantJWTBearer && o.Grant != GrantEnterprise {
				d.add(fp, server, fmt.Sprintf("unknown grant %s: want %q, %q, %q or %q", quote(o.Grant), GrantAuthorizationCode, GrantClientCredentials, GrantJWTBearer, GrantEnterprise), nil)
				good = false
			}
		case "privateKeyEnv":
			o.PrivateKeyEnv, good = d.envName(m.val, fp, server)
		case "assertionFile":
			o.AssertionFile, good = d.nonEmpty(m.val, fp, server, "file name")
		case "idpTokenUrl":
			o.IdPTokenURL, good = d.httpURL(m.val, fp, server)
		case "idpClientId":
			o.IdPClientID, good = d.nonEmpty(m.val, fp, server, "client ID")
		case "assertionEnv":
			o.AssertionEnv, good = d.envName(m.val, fp, server)
		case "perCaller":
			if m.val.kind == kindString {
				good = m.val.str == "report"
				o.PerCallerReport = good
				if !good {
					d.add(fp, server, fmt.Sprintf(`want true, false or "report", not %s`, quote(m.val.str)), nil)
				}
			} else {
				o.PerCaller, good = d.boolean(m.val, fp, server)
			}
		case "tokenExchange":
			o.TokenExchange, good = d.boolean(m.val, fp, server)
		case "actorToken":
			o.ActorToken, good = d.str(m.val, fp, server)
			if good && o.ActorToken != ActorClientCredentials {
				d.add(fp, server, fmt.Sprintf(`unknown actor token %s: want %q (the gateway's own token, from the client_credentials grant as "clientId")`, quote(o.ActorToken), ActorClientCredentials), nil)
				good = false
			}
		default:
			d.unknown(fp, m.key, oauthFields, oauthHints, server)
		}
		ok = ok && good
	}
	if ok && o.ClientSecretEnv != "" && o.ClientID == "" {
		d.add(p.k("clientSecretEnv"), server, `a secret needs the client it belongs to: set "clientId"`, nil)
		ok = false
	}
	if !ok {
		return o, false
	}
	if o.Grant == "" {
		o.Grant = GrantAuthorizationCode
	}
	switch {
	case o.PrivateKeyEnv != "" && o.Grant != GrantClientCredentials:
		d.add(p.k("privateKeyEnv"), server, `a private key signs client_credentials requests: set "grant": "client_credentials"`, nil)
		ok = false
	case o.Grant == GrantClientCredentials && o.ClientID == "":
		d.add(p, server, `the client_credentials grant needs "clientId"`, nil)
		ok = false
	case o.Grant == GrantClientCredentials && (o.ClientSecretEnv == "") == (o.PrivateKeyEnv == ""):
		d.add(p, server, `the client_credentials grant needs one of "clientSecretEnv" and "privateKeyEnv"`, nil)
		ok = false
	case (o.AssertionFile != "" || o.AssertionEnv != "") && o.Grant != GrantJWTBearer && o.Grant != GrantEnterprise:
		d.add(p, server, `an identity token is for the jwt_bearer or enterprise grant: set "grant"`, nil)
		ok = false
	case (o.Grant == GrantJWTBearer || o.Grant == GrantEnterprise) && (o.AssertionFile == "") == (o.AssertionEnv == ""):
		d.add(p, server, fmt.Sprintf(`the %s grant needs one of "assertionFile" and "assertionEnv"`, o.Grant), nil)
		ok = false
	case (o.IdPTokenURL != "" || o.IdPClientID != "") != (o.Grant == GrantEnterprise):
		d.add(p, server, `the enterprise grant, and only it, needs "idpTokenUrl" and "idpClientId"`, nil)
		ok = false
	case o.Grant == GrantEnterprise && (o.IdPTokenURL == "" || o.IdPClientID == "" || o.ClientID == ""):
		d.add(p, server, `the enterprise grant needs "idpTokenUrl", "idpClientId" and "clientId"`, nil)
		ok = false
	case (o.PerCaller || o.PerCallerReport) && o.Grant != GrantAuthorizationCode:
		d.add(p.k("perCaller"), server, fmt.Sprintf(`each caller's own grant is a person's login: the %s grant has one grant for every caller`, o.Grant), nil)
		ok = false
	case o.TokenExchange && !o.PerCaller && !o.PerCallerReport:
		d.add(p.k("tokenExchange"), server, `token exchange makes a grant per caller: set "perCaller": true`, nil)
		ok = false
	case o.TokenExchange && o.ClientID == "":
		d.add(p.k("tokenExchange"), server, `token exchange needs the client that asks for it: set "clientId"`, nil)
		ok = false
	case o.ActorToken != "" && !o.TokenExchange:
		d.add(p.k("actorToken"), server, `an actor token is sent with a token exchange: set "tokenExchange": true`, nil)
		ok = false
	case o.ActorToken != "" && o.ClientSecretEnv == "":
		d.add(p.k("actorToken"), server, `the actor token is the client's own, from the client_credentials grant: set "clientSecretEnv"`, nil)
		ok = false
	}
	if ok && o.Issuer == "" {
		if f := credentialField(o); f != "" {
			d.add(p.k(f), server, `a credential goes only to the authorization server it belongs to: set "issuer"`, nil)
			ok = false
		}
	}
	return o, ok
}

// credentialField names the field of o that hands a credential to the
// authorization server ("" when o has none): a client secret, a private
// key, an identity token, or a grant other than a person's login.
func credentialField(o *OAuth) string {
	switch {
	case o.ClientSecretEnv != "":
		return "clientSecretEnv"
	case o.PrivateKeyEnv != "":
		return "privateKeyEnv"
	case o.AssertionFile != "":
		return "assertionFile"
	case o.AssertionEnv != "":
		return "assertionEnv"
	case o.TokenExchange:
		return "tokenExchange"
	case o.Grant != GrantAuthorizationCode:
		return "grant"
	}
	return ""
}

// cloneOAuth copies o without its secret when redact is set.
func cloneOAuth(o *OAuth, redact bool) *OAuth {
	if o == nil {
		return nil
	}
	c := *o
	c.Scopes = slices.Clone(o.Scopes)
	if redact {
		c.ClientSecret, c.PrivateKey, c.Assertion = "", "", ""
	}
	return &c
}

// httpURL decodes an http or https URL with a host.
func (d *decoder) httpURL(n *node, p *jsonPath, server string) (string, bool) {
	v, good := d.str(n, p, server)
	if !good {
		return v, false
	}
	if u, err := url.Parse(v); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		d.add(p, server, "want an http or https URL", nil)
		return v, false
	}
	return v, true
}

// envName decodes the name of an environment variable.
func (d *decoder) envName(n *node, p *jsonPath, server string) (string, bool) {
	v, good := d.str(n, p, server)
	if good && !validIdent(v) {
		d.add(p, server, fmt.Sprintf("invalid environment variable name %s: want letters, digits and '_', not starting with a digit", quote(v)), nil)
		return v, false
	}
	return v, good
}

// nonEmpty decodes a string that must not be empty; what names it in the
// error.
func (d *decoder) nonEmpty(n *node, p *jsonPath, server, what string) (string, bool) {
	v, good := d.str(n, p, server)
	if good && v == "" {
		d.add(p, server, "empty "+what, nil)
		return v, false
	}
	return v, good
}
