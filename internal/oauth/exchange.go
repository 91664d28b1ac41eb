package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/config"
)

// Token exchange (RFC 8693) for a server with "oauth.tokenExchange": a
// caller that came to the gateway with a JWT is not asked to log in; the
// gateway exchanges that token, on the caller's behalf, at the server's
// authorization server (discovered as for a machine client, and refused
// unless it is the configured issuer) for an access token meant for the
// server (the resource indicator and the issuer as audience), as the
// configured client with its secret. go-sdk's oauthex.ExchangeToken makes
// the request; the token is reused until it expires
// (oauth2.ReuseTokenSource), then the caller's current token is
// exchanged again. The actor token of RFC 8693 section 2.1 is not sent:
// go-sdk's request has no field for it.

// Token types of RFC 8693 section 3.
const tokenTypeAccess = "urn:ietf:params:oauth:token-type:access_token"

// exchangeHandler is the handler of a caller's connection that exchanges
// the caller's token (subject) for one meant for the server.
func exchangeHandler(a *config.OAuth, subject func() (string, error), hc *http.Client) auth.OAuthHandler {
	return &jwtClientHandler{clientID: a.ClientID, secret: a.ClientSecret, issuer: a.Issuer, scopes: a.Scopes, hc: hc, subject: subject}
}

// exchange makes the token-exchange request with the caller's current
// token.
func (s *assertionSource) exchange(ctx context.Context) (*oauth2.Token, error) {
	st, err := s.h.subject()
	if err != nil {
		return nil, err
	}
	if st == "" {
		return nil, errors.New("the caller presented no token to exchange")
	}
	client := &oauthex.ClientCredentials{ClientID: s.h.clientID}
	if s.h.secret != "" {
		client.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: s.h.secret}
	}
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	tok, err := oauthex.ExchangeToken(ctx, s.tokenURL, &oauthex.TokenExchangeRequest{
		RequestedTokenType: tokenTypeAccess, Audience: s.issuer, Resource: s.resource, Scope: s.scopes,
		SubjectToken: st, SubjectTokenType: tokenTypeAccess,
	}, client, s.h.hc)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			// The code only: the body may echo the caller's token.
			return nil, fmt.Errorf("the authorization server refused the token exchange (%s)", truncate(re.ErrorCode, 64))
		}
		return nil, errors.New("the token exchange failed: the authorization server could not be reached or answered wrongly")
	}
	return tok, nil
}

// machineSubject is who the server knows the current token of a machine
// or token-exchange handler's holder as, "" when it does not say.
func machineSubject(m auth.OAuthHandler) string {
	ts, err := m.TokenSource(context.Background())
	if err != nil || ts == nil {
		return ""
	}
	tok, err := ts.Token()
	if err != nil {
		return ""
	}
	return subjectOf(tok)
}
