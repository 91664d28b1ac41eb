package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/switchboard-mcp/switchboard/config"
)

// machineHandler returns the OAuth handler of a server whose "oauth"
// block has the client_credentials grant (a machine client, RFC 6749
// section 4.4): go-sdk's extauth handler for a client secret, and
// private_key_jwt (RFC 7523) for a private key, which go-sdk lacks.
func machineHandler(a *config.OAuth, hc *http.Client) (auth.OAuthHandler, error) {
	switch a.Grant {
	case config.GrantJWTBearer:
		return &jwtClientHandler{clientID: a.ClientID, issuer: a.Issuer, scopes: a.Scopes, hc: hc, workload: identityToken(a)}, nil
	case config.GrantEnterprise:
		return &jwtClientHandler{clientID: a.ClientID, secret: a.ClientSecret, issuer: a.Issuer, scopes: a.Scopes, hc: hc,
			idToken: identityToken(a), idpTokenURL: a.IdPTokenURL, idpClientID: a.IdPClientID}, nil
	}
	creds := &oauthex.ClientCredentials{ClientID: a.ClientID, Issuer: a.Issuer}
	if a.PrivateKey == "" {
		creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: a.ClientSecret}
		return extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{Credentials: creds, HTTPClient: hc})
	}
	key, method, err := parsePrivateKey(a.PrivateKey)
	if err != nil {
		return nil, err
	}
	return &jwtClientHandler{clientID: a.ClientID, issuer: a.Issuer, scopes: a.Scopes, key: key, method: method, hc: hc}, nil
}

// issuersEqual compares issuers by go-sdk's rule (its internal
// authutil.IssuersEqual): equal but for a trailing slash. An empty issuer
// equals none.
func issuersEqual(a, b string) bool {
	return a != "" && strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

// identityToken returns the reader of a's identity token: the file, read
// each time (the platform rotates it), or the environment's value.
func identityToken(a *config.OAuth) func() (string, error) {
	if path := a.AssertionFile; path != "" {
		return func() (string, error) {
			b, err := os.ReadFile(path)
			if err != nil {
				return "", fmt.Errorf(`"assertionFile": %w`, err)
			}
			return strings.TrimSpace(string(b)), nil
		}
	}
	token := a.Assertion
	return func() (string, error) { return token, nil }
}

// parsePrivateKey reads a PEM private key and the JWS algorithm that goes
// with it: ES256/ES384/ES512 by curve, RS256 for RSA. No key material is
// ever in an error.
func parsePrivateKey(pemText string) (crypto.Signer, jose.SignatureAlgorithm, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, "", errors.New(`"privateKeyEnv": not a PEM private key`)
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, "", fmt.Errorf(`"privateKeyEnv": the private key does not parse (%s)`, block.Type)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return k, jose.ES256, nil
		case elliptic.P384():
			return k, jose.ES384, nil
		case elliptic.P521():
			return k, jose.ES512, nil
		}
	case *rsa.PrivateKey:
		return k, jose.RS256, nil
	}
	return nil, "", errors.New(`"privateKeyEnv": want an EC (P-256, P-384, P-521) or RSA private key`)
}

// jwtClientHandler is a machine client whose token requests carry a JWT:
// the client_credentials grant with private_key_jwt client
// authentication (key set: a fresh assertion signed for the authorization
// server's issuer each time), or the jwt_bearer grant of workload identity
// federation (workload set: the platform's token, read each time; one
// request, no retry and no other grant after a refusal). Discovery is
// go-sdk's (protected-resource and authorization-server metadata).
type jwtClientHandler struct {
	clientID, issuer string
	scopes           []string
	key              crypto.Signer
	method           jose.SignatureAlgorithm
	workload         func() (string, error)
	hc               *http.Client

	// Enterprise-managed authorization: the person's ID token, exchanged
	// at the identity provider for an ID-JAG (go-sdk's
	// oauthex.ExchangeToken), which is the jwt-bearer grant, with the
	// client's secret (client_secret_basic where the server takes it).
	idToken                  func() (string, error)
	idpTokenURL, idpClientID string
	secret                   string

	// Token exchange (RFC 8693, exchange.go): the caller's own access
	// token, exchanged at the server's authorization server for one meant
	// for the server, as clientID with its secret; with actors, the
	// client's own token kept there sent as the actor_token.
	subject func() (string, error)
	actors  *ActorTokens

	mu sync.Mutex
	ts oauth2.TokenSource // guarded by mu; nil before Authorize
}

func (h *jwtClientHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts, nil
}

func (h *jwtClientHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer io.Copy(io.Discard, resp.Body) //nolint:errcheck // draining only
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("the server's WWW-Authenticate: %w", err)
	}
	resource := req.URL.String()
	prm := h.resourceMetadata(ctx, cs, resource)
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], h.hc)
	if err != nil {
		return fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil { // the 2025-03-26 fallback
		asm = &oauthex.AuthServerMeta{Issuer: prm.AuthorizationServers[0], TokenEndpoint: strings.TrimSuffix(prm.AuthorizationServers[0], "/") + "/token"}
	}
	if !issuersEqual(h.issuer, asm.Issuer) {
		// The credential goes to its own authorization server only,
		// whatever the server's metadata names.
		return fmt.Errorf("the authorization server %q is not the client's issuer %q", asm.Issuer, h.issuer)
	}
	scopes := h.scopes
	if len(scopes) == 0 {
		for _, c := range cs {
			if c.Scheme == "bearer" && c.Params["scope"] != "" {
				scopes = strings.Fields(c.Params["scope"])
			}
		}
	}
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	src := &assertionSource{h: h, issuer: asm.Issuer, tokenURL: asm.TokenEndpoint, resource: prm.Resource, scopes: scopes,
		basic: slices.Contains(asm.TokenEndpointAuthMethodsSupported, "client_secret_basic")}
	tok, err := src.token(ctx)
	if err != nil {
		return err
	}
	ts := oauth2.ReuseTokenSource(tok, src)
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return nil
}

// resourceMetadata finds the protected-resource metadata where the
// challenge says, else at the well-known paths (path-based first), else
// falls back (2025-03-26) to the server's origin as authorization server.
func (h *jwtClientHandler) resourceMetadata(ctx context.Context, cs []oauthex.Challenge, resource string) *oauthex.ProtectedResourceMetadata {
	u, err := url.Parse(resource)
	if err == nil {
		var tries [][2]string // metadata URL, resource
		for _, c := range cs {
			if m := c.Params["resource_metadata"]; m != "" {
				tries = append(tries, [2]string{m, resource})
			}
		}
		origin := u.Scheme + "://" + u.Host
		tries = append(tries,
			[2]string{origin + "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/"), resource},
			[2]string{origin + "/.well-known/oauth-protected-resource", origin})
		for _, t := range tries {
			prm, err := oauthex.GetProtectedResourceMetadata(ctx, t[0], t[1], h.hc)
			if err == nil && prm != nil && len(prm.AuthorizationServers) > 0 {
				return prm
			}
		}
		return &oauthex.ProtectedResourceMetadata{Resource: resource, AuthorizationServers: []string{origin}}
	}
	return &oauthex.ProtectedResourceMetadata{Resource: resource, AuthorizationServers: []string{resource}}
}

// assertionTTL is the life of a client assertion.
const assertionTTL = 5 * time.Minute

// assertionSource makes a token request with a fresh client assertion.
type assertionSource struct {
	h                          *jwtClientHandler
	issuer, tokenURL, resource string
	scopes                     []string
	basic                      bool // the server takes client_secret_basic
}

// grantJWTBearer is the grant type of RFC 7523 section 2.1.
const grantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// Token makes a token request when ReuseTokenSource's token has expired;
// oauth2.TokenSource gives it no context.
func (s *assertionSource) Token() (*oauth2.Token, error) {
	return s.token(context.Background())
}

// token makes a token request bounded by ctx and refreshTimeout.
func (s *assertionSource) token(ctx context.Context) (*oauth2.Token, error) {
	params := url.Values{}
	if s.h.subject != nil {
		return s.exchange(ctx)
	}
	if s.h.idToken != nil {
		jag, err := s.idJAG(ctx)
		if err != nil {
			return nil, err
		}
		params.Set("grant_type", grantJWTBearer)
		params.Set("assertion", jag)
		return s.request(ctx, params)
	}
	if s.h.workload != nil {
		a, err := s.h.workload()
		if err != nil {
			return nil, err
		}
		// clientcredentials lets EndpointParams name the grant type.
		params.Set("grant_type", grantJWTBearer)
		params.Set("assertion", a)
		return s.request(ctx, params)
	}
	now := time.Now()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: s.h.method, Key: s.h.key}, (&jose.SignerOptions{}).WithType("JWT"))
	var assertion string
	if err == nil {
		assertion, err = jwt.Signed(signer).Claims(jwt.Claims{
			Issuer: s.h.clientID, Subject: s.h.clientID, Audience: jwt.Audience{s.issuer},
			IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(assertionTTL)),
			ID: rand.Text(),
		}).Serialize()
	}
	if err != nil {
		return nil, fmt.Errorf("signing the client assertion: %w", err)
	}
	params.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
	params.Set("client_assertion", assertion)
	return s.request(ctx, params)
}

// idJAG exchanges the person's ID token at the identity provider for an
// identity assertion grant for this authorization server and resource.
func (s *assertionSource) idJAG(ctx context.Context) (string, error) {
	idToken, err := s.h.idToken()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	tok, err := oauthex.ExchangeToken(ctx, s.h.idpTokenURL, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG, Audience: s.issuer, Resource: s.resource, Scope: s.scopes,
		SubjectToken: idToken, SubjectTokenType: oauthex.TokenTypeIDToken,
	}, &oauthex.ClientCredentials{ClientID: s.h.idpClientID}, s.h.hc)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return "", fmt.Errorf("the identity provider refused the token exchange (%s)", re.ErrorCode)
		}
		return "", errors.New("the token exchange at the identity provider failed")
	}
	return tok.AccessToken, nil
}

// request makes the token request with params.
func (s *assertionSource) request(ctx context.Context, params url.Values) (*oauth2.Token, error) {
	if s.resource != "" {
		params.Set("resource", s.resource)
	}
	cfg := &clientcredentials.Config{ClientID: s.h.clientID, ClientSecret: s.h.secret, TokenURL: s.tokenURL, Scopes: s.scopes,
		AuthStyle: oauth2.AuthStyleInParams, EndpointParams: params}
	if s.h.secret != "" && s.basic {
		cfg.AuthStyle = oauth2.AuthStyleInHeader
	}
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, oauth2.HTTPClient, s.h.hc), refreshTimeout)
	defer cancel()
	tok, err := cfg.Token(ctx)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			// The code only: the body may echo what was sent.
			return nil, fmt.Errorf("the authorization server refused the token request (%s)", re.ErrorCode)
		}
		return nil, errors.New("the token request failed: the authorization server could not be reached")
	}
	return tok, nil
}
