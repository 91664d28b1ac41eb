package host

import (
	"context"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboard-mcp/switchboard/internal/oauth"
)

// OAuthOptions configure the OAuth 2.1 client of HTTP servers that ask
// for a login. The flow is go-sdk's (discovery, registration, PKCE, the
// resource indicator, the iss check, step-up); grants are kept in
// TokensPath and refreshed before they expire and when a server refuses
// them.
type OAuthOptions struct {
	// TokensPath is the creds.json that keeps grants, keyed by issuer,
	// resource and client. "" keeps them in memory, per connection.
	TokensPath string
	// Authorize drives the browser leg of every connection's login: it
	// sends a person to authURL and returns what the redirect to
	// RedirectURL carried (code, state, iss). Nil: a server without a
	// valid grant fails with fault.CodeNeedsLogin, whose message names the
	// command to run, until Host.Login (which binds its own redirect
	// listener) or another process keeps a grant for it.
	Authorize func(ctx context.Context, server, authURL string) (*auth.AuthorizationResult, error)
	// RedirectURL is the loopback URL that Authorize listens on.
	RedirectURL string
	// CallbackURL, when set, is the URL at which the gateway itself
	// receives logins' redirects: its public URL followed by
	// /oauth/callback, where its front door serves the Host's callback
	// handler. Every login [Host.Login] and [View.Login] start registers
	// it and comes back there; no loopback listener is bound. "" binds a
	// loopback listener per login, so the browser must run on the host's
	// machine.
	CallbackURL string
	// ClientMetadataURL is Switchboard's client ID metadata document (an
	// https URL with a path), for servers whose "oauth" block names none.
	ClientMetadataURL string
	// LoginTimeout bounds a login started by Host.Login: a person has that
	// long in the browser, then the login is abandoned and its redirect
	// listener closed. Zero means DefaultLoginTimeout.
	LoginTimeout time.Duration
	// GrantKey is the keyring that seals each caller's own grants in the
	// state store, for servers with "oauth.perCaller": base64 keys of 32
	// bytes, separated by commas, the first sealing and every one
	// opening (`serve` reads it from SWITCHBOARD_GRANT_KEY). "" keeps no
	// caller's grant: such servers serve the operator alone, and refuse
	// every other caller.
	GrantKey string
	// MaxCallerConns caps the connections held open for callers of
	// servers with "oauth.perCaller", all servers together; past it the
	// least recently used idle one is closed. Zero means
	// DefaultMaxCallerConns.
	MaxCallerConns int
	// CallerIdle closes a caller's connection that has not been used for
	// that long. Zero means DefaultCallerIdle.
	CallerIdle time.Duration
}

// loginTimeout is o's LoginTimeout with its default.
func (o *OAuthOptions) loginTimeout() time.Duration {
	if o == nil || o.LoginTimeout <= 0 {
		return DefaultLoginTimeout
	}
	return o.LoginTimeout
}

func (o *OAuthOptions) upstream() *oauth.Config {
	if o == nil {
		return nil
	}
	c := &oauth.Config{TokensPath: o.TokensPath, Authorize: o.Authorize, RedirectURL: o.RedirectURL, ClientMetadataURL: o.ClientMetadataURL,
		ActorTokens: &oauth.ActorTokens{}}
	if o.CallbackURL != "" {
		c.Callback = oauth.NewCallback(o.CallbackURL)
	}
	return c
}

// oauthCallback is the handler that takes logins' redirects at
// OAuthOptions.CallbackURL, nil when it is not set. It answers without a
// bearer token (an authorization server's redirect carries none): it
// hands the code to the login whose state the redirect carries, and
// answers 400 to any other.
func (h *Host) oauthCallback() http.Handler {
	if h.opts.OAuth == nil || h.opts.OAuth.Callback == nil {
		return nil
	}
	return h.opts.OAuth.Callback
}

// NeedsLoginState is ServerStatus.Auth of a server that needs a login.
func NeedsLoginState(server string) string { return oauth.NeedsLoginState(server) }
