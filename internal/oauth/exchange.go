package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

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
// exchanged again. With "oauth.actorToken" (delegation, RFC 8693 section
// 2.1), the request also carries the gateway's own access token as the
// actor_token: a client_credentials token as the configured client
// (x/oauth2's clientcredentials, reused until it expires, one shared by
// every caller's connection through Config.ActorTokens), so that the
// token issued names the gateway in its "act" claim. go-sdk's request has
// no field for it: that request is x/oauth2's clientcredentials token
// request with the token-exchange grant in its EndpointParams, as the
// jwt-bearer grants are made (machine.go).

// Token types of RFC 8693 section 3.
const tokenTypeAccess = "urn:ietf:params:oauth:token-type:access_token"

// exchangeHandler is the handler of a caller's connection that exchanges
// the caller's token (subject) for one meant for the server.
func exchangeHandler(a *config.OAuth, subject func() (string, error), actors *ActorTokens, hc *http.Client) auth.OAuthHandler {
	h := &jwtClientHandler{clientID: a.ClientID, secret: a.ClientSecret, issuer: a.Issuer, scopes: a.Scopes, hc: hc, subject: subject}
	if a.ActorToken == config.ActorClientCredentials {
		h.actors = actors
		if h.actors == nil {
			h.actors = &ActorTokens{}
		}
	}
	return h
}

// ActorTokens keeps the gateway's own access tokens that token exchanges
// send as their actor_token, one per token endpoint and client, each
// reused until it expires, so that every caller's connection shares one
// (Config.ActorTokens). The zero value is ready to use.
type ActorTokens struct {
	mu   sync.Mutex
	toks map[[2]string]*actorToken // guarded by mu; by token endpoint and client ID
}

// actorToken is one client's own token; mu is held while it is fetched.
type actorToken struct {
	mu  sync.Mutex
	tok *oauth2.Token // guarded by mu
}

// get returns the token kept for tokenURL and clientID while it is
// valid, else the one fetch makes.
func (a *ActorTokens) get(ctx context.Context, tokenURL, clientID string, fetch func(context.Context) (*oauth2.Token, error)) (string, error) {
	a.mu.Lock()
	if a.toks == nil {
		a.toks = make(map[[2]string]*actorToken)
	}
	k := [2]string{tokenURL, clientID}
	e := a.toks[k]
	if e == nil {
		e = &actorToken{}
		a.toks[k] = e
	}
	a.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tok.Valid() {
		return e.tok.AccessToken, nil
	}
	tok, err := fetch(ctx)
	if err != nil {
		return "", err
	}
	e.tok = tok
	return tok.AccessToken, nil
}

// grantTokenExchange is the grant type of RFC 8693 section 2.1.
const grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"

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
	if s.h.actors != nil {
		return s.exchangeAsActor(ctx, st)
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

// exchangeAsActor makes the token-exchange request with the caller's
// token st and the gateway's own token as the actor_token.
func (s *assertionSource) exchangeAsActor(ctx context.Context, st string) (*oauth2.Token, error) {
	at, err := s.actorToken(ctx)
	if err != nil {
		return nil, err
	}
	params := url.Values{}
	params.Set("grant_type", grantTokenExchange)
	params.Set("requested_token_type", tokenTypeAccess)
	params.Set("audience", s.issuer)
	params.Set("subject_token", st)
	params.Set("subject_token_type", tokenTypeAccess)
	params.Set("actor_token", at)
	params.Set("actor_token_type", tokenTypeAccess)
	tok, err := s.request(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("the token exchange: %w", err)
	}
	return tok, nil
}

// actorToken is the gateway's own access token at the server's
// authorization server (the client_credentials grant as the configured
// client), reused until it expires.
func (s *assertionSource) actorToken(ctx context.Context) (string, error) {
	return s.h.actors.get(ctx, s.tokenURL, s.h.clientID, func(ctx context.Context) (*oauth2.Token, error) {
		cfg := &clientcredentials.Config{ClientID: s.h.clientID, ClientSecret: s.h.secret, TokenURL: s.tokenURL,
			AuthStyle: oauth2.AuthStyleInParams}
		if s.basic {
			cfg.AuthStyle = oauth2.AuthStyleInHeader
		}
		ctx, cancel := context.WithTimeout(context.WithValue(ctx, oauth2.HTTPClient, s.h.hc), refreshTimeout)
		defer cancel()
		tok, err := cfg.Token(ctx)
		if err != nil {
			var re *oauth2.RetrieveError
			if errors.As(err, &re) {
				// The code only: the body may echo what was sent.
				return nil, fmt.Errorf("the authorization server refused the gateway's own token, for the actor_token (%s)", truncate(re.ErrorCode, 64))
			}
			return nil, errors.New("the gateway's own token, for the actor_token: the authorization server could not be reached")
		}
		return tok, nil
	})
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
