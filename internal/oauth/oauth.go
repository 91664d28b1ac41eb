// Package oauth is the OAuth 2.1 client of Streamable HTTP servers, beside
// the connection core (internal/upstream) that uses it. The flow itself is
// go-sdk's (auth.AuthorizationCodeHandler): protected-resource metadata
// from the challenge or the well-known paths, authorization-server
// metadata (RFC 8414, OIDC, the 2025-03-26 fallbacks), registration by
// client ID metadata document, pre-registered client or dynamic
// registration, PKCE S256, the resource indicator, the RFC 9207 iss check,
// scopes from the challenge or scopes_supported, step-up on
// insufficient_scope. This package adds what a host needs around it:
// grants kept in creds.json and reused across connections and processes,
// the dynamically registered client kept and reused (keptclient.go), a
// refresh before expiry (by the wall clock, so a grant survives sleep) and
// on a 401, a connection without a browser that fails with needs_login
// instead of starting a flow nobody can finish, the one login flow with
// its redirect listener, loopback or routed through the gateway's own
// callback path (login.go, redirect.go, callback.go: a Relay lets the
// redirect reach any replica sharing a store), DPoP (dpop.go)
// and machine clients (machine.go).
//
// A connection uses it through a Handler (New): the auth.OAuthHandler of
// go-sdk's Streamable HTTP transport, with Transport under the
// connection's HTTP requests and State for its status. Login runs a login
// through a connection the caller makes.
package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/creds"
)

// Config configures the OAuth 2.1 client of the HTTP transports.
type Config struct {
	// TokensPath is the creds.json that keeps grants (see
	// creds.LoadTokens). "" keeps them for the connection only.
	TokensPath string
	// Authorize drives the browser leg: it sends the person (or, in
	// tests, an HTTP client) to authURL and returns what the authorization
	// server's redirect to RedirectURL carried. Nil: a server that needs a
	// login fails with needs_login, without any request to its
	// authorization server.
	Authorize func(ctx context.Context, server, authURL string) (*auth.AuthorizationResult, error)
	// RedirectURL is the loopback URL Authorize listens on. Required with
	// Authorize.
	RedirectURL string
	// Callback, when set, receives the redirect of every login Login runs
	// (its URL is the redirect URL registered), through the HTTP server
	// that serves it, and Login binds no loopback listener. Nil: each
	// login binds its own.
	Callback *Callback
	// ClientMetadataURL is Switchboard's client ID metadata document, for
	// servers whose "oauth" block names none. "" means none.
	ClientMetadataURL string
	// Grants, when set, keeps the connection's grants in place of
	// TokensPath: one caller's own grants, kept in the store (see
	// Grants). TokensPath then keeps nothing of this connection.
	Grants Grants
	// Caller is whose login Login runs ("" for the operator's), for the
	// record a Callback's Relay keeps of it.
	Caller string
	// LoginHint, when set, says how to log in, in the needs_login
	// failure, in place of LoginCommand.
	LoginHint string
	// SubjectToken, when set, is the caller's own access token (a JWT
	// the gateway verified), read at each token request: a server with
	// "oauth.tokenExchange" is then given a token the authorization
	// server exchanged it for (exchange.go), and no login is asked.
	SubjectToken func() (string, error)
	// ActorTokens, when set, keeps the gateway's own tokens that token
	// exchanges with "oauth.actorToken" send, shared by every connection
	// given the same one. Nil: each connection fetches its own.
	ActorTokens *ActorTokens
}

// LoginCommand is what a person runs to log in to server.
func LoginCommand(server string) string { return "switchboard login " + server }

// needsLogin is the failure of a server that needs a login nobody can do
// here.
func (h *Handler) needsLogin() error {
	if h.o.LoginHint != "" {
		return fault.New(fault.CodeNeedsLogin, h.server, "", fmt.Errorf("needs login (%s)", h.o.LoginHint))
	}
	return fault.New(fault.CodeNeedsLogin, h.server, "", errors.New(NeedsLoginState(h.server)))
}

// Handler is the auth.OAuthHandler of one connection. The token source in
// use is a grantSource: loaded from creds.json at dial, or made by go-sdk's
// handler after a login (NewTokenSource). It is safe for concurrent use.
type Handler struct {
	server, resource string
	o                *Config
	code             *auth.AuthorizationCodeHandler // nil without Authorize; built again under flow (keptclient.go)
	machine          auth.OAuthHandler              // the client_credentials grant's handler; nil for a person's login
	clientID         string                         // the configured client, "" when any will do
	configured       bool                           // the server has an "oauth" block
	hc               *http.Client
	log              *slog.Logger

	flow sync.Mutex // serialises Authorize: one login or refresh at a time
	// Guarded by flow (keptclient.go): the client registered earlier
	// that go-sdk's handler was built to reuse, nil when none; the
	// handler's configuration, to build it again without that client;
	// the client ID metadata document's URL, "" when none; why every
	// login fails once the kept client was refused after the browser leg.
	kept    *creds.Client
	codeCfg auth.AuthorizationCodeHandlerConfig
	cimd    string
	keptErr error

	mu     sync.Mutex   // lock order: a grantSource's mu before it
	cur    *grantSource // guarded by mu; nil before a grant
	issuer string       // guarded by mu; the issuer of the last authorization-server metadata read
	dpop   *dpopKey     // guarded by mu; the DPoP key (dpop.go) when the authorization server takes DPoP, nil otherwise
	// refused is guarded by mu: the client ID the token endpoint last
	// answered invalid_client or unauthorized_client, "" when none.
	refused string
}

// New returns the handler of a connection to s, a Streamable HTTP server,
// with o's settings. base is the connection's own HTTP client without the
// handler: its Transport carries the requests to authorization servers
// (and, through Handler.Transport, the connection's), its CheckRedirect
// rules their redirects. log receives the handler's events.
func New(s *config.Server, o *Config, base *http.Client, log *slog.Logger) (*Handler, error) {
	h := &Handler{server: s.Name, resource: s.URL, o: o, log: log}
	h.hc = &http.Client{Transport: issuerWatch{next: dpopAS{next: base.Transport, h: h}, h: h}, CheckRedirect: base.CheckRedirect}
	if s.OAuth != nil && s.OAuth.TokenExchange && o.SubjectToken != nil {
		h.clientID, h.configured = s.OAuth.ClientID, true
		h.machine = exchangeHandler(s.OAuth, o.SubjectToken, o.ActorTokens, &http.Client{Transport: base.Transport, CheckRedirect: base.CheckRedirect})
		return h, nil
	}
	if s.OAuth != nil {
		h.clientID, h.configured = s.OAuth.ClientID, true
		if g := s.OAuth.Grant; g == config.GrantClientCredentials || g == config.GrantJWTBearer || g == config.GrantEnterprise {
			// No DPoP proofs on a machine grant's token requests: its
			// token is presented as a Bearer token, which a DPoP-bound
			// one would not be.
			mc := &http.Client{Transport: base.Transport, CheckRedirect: base.CheckRedirect}
			m, err := machineHandler(s.OAuth, mc)
			if err != nil {
				return nil, err
			}
			h.machine = m
			return h, nil
		}
	}
	if o.TokensPath != "" || o.Grants != nil {
		ts, err := h.loadGrants(context.Background())
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			if h.clientID == "" || t.ClientID == h.clientID {
				h.cur = h.sourceOf(t)
				if t.DPoPKey != "" {
					if h.dpop, err = parseDPoPKey(t.DPoPKey); err != nil {
						return nil, err
					}
				}
				break
			}
		}
	}
	if o.Authorize == nil {
		return h, nil
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: o.RedirectURL,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			return o.Authorize(ctx, s.Name, args.URL)
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{o.RedirectURL},
			ClientName:   "Switchboard",
			GrantTypes:   []string{"authorization_code", "refresh_token"},
		}},
		RequestRefreshToken: true,
		Client:              h.hc,
		NewTokenSource:      h.newTokenSource,
	}
	if u := o.ClientMetadataURL; u != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: u}
	}
	if a := s.OAuth; a != nil {
		if a.ClientMetadataURL != "" {
			cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: a.ClientMetadataURL}
		}
		if a.ClientID != "" {
			pre := &oauthex.ClientCredentials{ClientID: a.ClientID, Issuer: a.Issuer}
			if a.ClientSecret != "" {
				pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: a.ClientSecret}
			}
			cfg.PreregisteredClient = pre
		}
		if len(a.Scopes) > 0 {
			scopes := a.Scopes
			cfg.ScopeFilter = func([]string) []string { return scopes }
		}
	}
	if cfg.ClientIDMetadataDocumentConfig != nil {
		h.cimd = cfg.ClientIDMetadataDocumentConfig.URL
	}
	h.codeCfg = *cfg
	if h.clientID == "" {
		h.kept = h.keptClient()
	}
	if err := h.buildCode(); err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	return h, nil
}

// TokenSource returns the grant in use, nil before one: go-sdk then sends
// no Authorization header, and the server's 401 calls Authorize.
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	if h.machine != nil {
		return h.machine.TokenSource(ctx)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur == nil {
		return nil, nil
	}
	return h.cur, nil
}

// Authorize answers a 401 or 403. A request refused with a token older
// than the current one is retried as it is (another request already
// renewed it); a 401 with a refresh token in hand refreshes; anything else
// is a login: go-sdk's flow when there is a browser leg, needs_login when
// there is none.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	h.flow.Lock()
	defer h.flow.Unlock()
	if h.machine != nil {
		return scrubTokenError(h.machine.Authorize(ctx, req, resp))
	}
	h.mu.Lock()
	cur := h.cur
	h.mu.Unlock()
	if cur != nil {
		if sent := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer "); sent != "" && sent != cur.access() {
			resp.Body.Close()
			return nil
		}
		if resp.StatusCode == http.StatusUnauthorized && cur.refresh(ctx) == nil {
			resp.Body.Close()
			return nil
		}
	}
	if h.code == nil {
		resp.Body.Close()
		if !h.configured && !bearerChallenge(resp) {
			// A plain refusal, not an OAuth server asking for a login:
			// classified from its status like any other (auth_failure).
			return errors.New("the server refused the request")
		}
		if resp.StatusCode == http.StatusForbidden && cur != nil {
			// Step-up needs a login; any other 403 is the server's answer.
			if !insufficientScope(resp) {
				return nil
			}
		}
		if h.adoptKept(cur) {
			return nil // go-sdk sends the request again, with the kept grant
		}
		return h.needsLogin()
	}
	return scrubTokenError(h.login(ctx, req, resp))
}

// scrubTokenError is err without what an authorization server's refusal
// of a token request carried: oauth2.RetrieveError quotes the response
// body (and the error text wrapping it repeats it), which may echo a
// credential. What is left is the error code, or the HTTP status when the
// answer had none, as an oauth2.RetrieveError.
func scrubTokenError(err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return err
	}
	clean := &oauth2.RetrieveError{ErrorCode: truncate(re.ErrorCode, 64)}
	if clean.ErrorCode == "" {
		clean.Response = &http.Response{Status: "no answer"}
		if re.Response != nil {
			clean.Response.Status, clean.Response.StatusCode = truncate(re.Response.Status, 64), re.Response.StatusCode
		}
	}
	return fmt.Errorf("the authorization server refused the token request: %w", clean)
}

// adoptKept makes the grant kept in creds.json the current one when it is
// not cur: a login made since the connection loaded its grant (by
// `switchboard login` in another process, or by Login here) serves the
// connection without a new dial. It reports whether it did.
func (h *Handler) adoptKept(cur *grantSource) bool {
	if h.o.TokensPath == "" && h.o.Grants == nil {
		return false
	}
	ts, err := h.loadGrants(context.Background())
	if err != nil {
		return false
	}
	for _, t := range ts {
		if h.clientID != "" && t.ClientID != h.clientID {
			continue
		}
		if cur != nil && t.AccessToken == cur.access() {
			return false
		}
		var k *dpopKey
		if t.DPoPKey != "" {
			if k, err = parseDPoPKey(t.DPoPKey); err != nil {
				return false
			}
		}
		h.mu.Lock()
		h.cur = h.sourceOf(t)
		if k != nil {
			h.dpop = k
		}
		h.mu.Unlock()
		return true
	}
	return false
}

// bearerChallenge reports whether a refusal asks for an OAuth access
// token (RFC 6750 section 3, RFC 9449 section 7.1).
func bearerChallenge(resp *http.Response) bool {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if c.Scheme == "bearer" || c.Scheme == "dpop" {
			return true
		}
	}
	return false
}

// dpopKey is the DPoP key in use, nil without DPoP.
func (h *Handler) dpopKey() *dpopKey {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.dpop
}

// dpopBound reports whether tok is the current grant's access token and
// bound to the DPoP key.
func (h *Handler) dpopBound(tok string) bool {
	h.mu.Lock()
	g := h.cur
	h.mu.Unlock()
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.t.AccessToken == tok && strings.EqualFold(g.t.TokenType, "DPoP")
}

// insufficientScope reports whether a 403 asks for more scopes.
func insufficientScope(resp *http.Response) bool {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// newTokenSource is go-sdk's hook after a login: the new grant becomes
// the current one, and is kept.
func (h *Handler) newTokenSource(_ context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	h.mu.Lock()
	issuer := h.issuer
	h.mu.Unlock()
	if issuer == "" {
		// No metadata (the 2025-03-26 fallback): the authorization
		// endpoint's origin stands for the issuer.
		issuer = strings.TrimSuffix(cfg.Endpoint.AuthURL, "/authorize")
	}
	t := creds.Token{
		Issuer: issuer, Resource: h.resource, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		TokenURL: cfg.Endpoint.TokenURL, AuthStyle: int(cfg.Endpoint.AuthStyle), Scopes: cfg.Scopes,
	}
	setToken(&t, tok)
	t.Subject = subjectOf(tok)
	if k := h.dpopKey(); k != nil && strings.EqualFold(tok.Type(), "DPoP") {
		t.DPoPKey = k.pem()
	}
	g := h.sourceOf(t)
	g.save()
	h.keepClient(cfg, issuer)
	h.mu.Lock()
	h.cur = g
	h.mu.Unlock()
	return g, nil
}

func setToken(t *creds.Token, tok *oauth2.Token) {
	t.AccessToken, t.TokenType, t.Expiry = tok.AccessToken, tok.TokenType, tok.Expiry.Round(0)
	if tok.RefreshToken != "" {
		t.RefreshToken = tok.RefreshToken
	}
	t.Saved = time.Now().Round(0)
}

func (h *Handler) sourceOf(t creds.Token) *grantSource {
	return &grantSource{h: h, t: t, cfg: &oauth2.Config{
		ClientID: t.ClientID, ClientSecret: t.ClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: t.TokenURL, AuthStyle: oauth2.AuthStyle(t.AuthStyle)},
	}}
}

// refreshTimeout bounds a refresh made when a request finds its access
// token expired.
const refreshTimeout = 30 * time.Second

// grantSource is one grant as an oauth2.TokenSource: the access token
// while it is valid by the wall clock (oauth2.Token.Valid, with its
// margin), else a refresh, kept in creds.json.
type grantSource struct {
	h   *Handler
	cfg *oauth2.Config

	mu sync.Mutex
	t  creds.Token // guarded by mu
}

func (g *grantSource) access() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.t.AccessToken
}

func (g *grantSource) Token() (*oauth2.Token, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	tok := &oauth2.Token{AccessToken: g.t.AccessToken, TokenType: g.t.TokenType, RefreshToken: g.t.RefreshToken, Expiry: g.t.Expiry}
	if tok.Valid() {
		return tok, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	if err := g.refreshLocked(ctx); err != nil {
		return nil, err
	}
	return &oauth2.Token{AccessToken: g.t.AccessToken, TokenType: g.t.TokenType, Expiry: g.t.Expiry}, nil
}

// refresh renews the access token now (the server refused it).
func (g *grantSource) refresh(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refreshLocked(ctx)
}

// refreshLocked trades the refresh token for a new access token. Without
// one, or when the authorization server refuses it, the error is an
// invalid_grant: go-sdk then sends the request without a token, and the
// server's 401 asks for a login.
func (g *grantSource) refreshLocked(ctx context.Context) error {
	if g.t.RefreshToken == "" {
		return &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "the access token expired and there is no refresh token"}
	}
	if gs := g.h.o.Grants; gs != nil {
		// One refresh among every process sharing the grants: a provider
		// that rotates refresh tokens revokes a grant refreshed twice.
		t, err := gs.Renew(ctx, g.t, g.exchangeRefresh)
		if err != nil {
			return err
		}
		g.t = t
		return nil
	}
	t, err := g.exchangeRefresh(ctx, g.t)
	if err != nil {
		return err
	}
	g.t = t
	g.saveLocked()
	return nil
}

// exchangeRefresh trades t's refresh token for a new access token at the
// authorization server, and returns t renewed.
func (g *grantSource) exchangeRefresh(ctx context.Context, t creds.Token) (creds.Token, error) {
	if t.RefreshToken == "" {
		return t, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "the access token expired and there is no refresh token"}
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, g.h.hc)
	tok, err := g.cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: t.RefreshToken}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			if clientRefused(re) {
				g.h.clientRefused(t.ClientID)
			}
			// Never the response body: it may echo a token.
			return t, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "the authorization server refused the refresh token"}
		}
		return t, errors.New("refreshing the access token failed: the authorization server could not be reached")
	}
	setToken(&t, tok)
	return t, nil
}

func (g *grantSource) save() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.saveLocked()
}

func (g *grantSource) saveLocked() {
	if g.h.o.TokensPath != "" || g.h.o.Grants != nil {
		if err := g.h.saveGrant(g.t); err != nil {
			// The grant still serves this connection; the next process
			// asks for a login again. The error names the file only.
			g.h.log.Warn("could not keep the OAuth grant", "err", err)
		}
	}
}

// issuerWatch notes the issuer of the authorization-server metadata that
// go-sdk reads, so that a grant is kept under its issuer.
type issuerWatch struct {
	next http.RoundTripper
	h    *Handler
}

func (w issuerWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(req)
	p := req.URL.Path
	if err != nil || resp.StatusCode != http.StatusOK ||
		!(strings.Contains(p, "/.well-known/oauth-authorization-server") || strings.Contains(p, "/.well-known/openid-configuration")) {
		return resp, err
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if rerr != nil {
		return resp, nil
	}
	var m struct {
		Issuer   string   `json:"issuer"`
		DPoPAlgs []string `json:"dpop_signing_alg_values_supported"`
	}
	if json.Unmarshal(body, &m) == nil && m.Issuer != "" {
		var k *dpopKey
		if slices.Contains(m.DPoPAlgs, "ES256") {
			k, _ = newDPoPKey() // without one, plain bearer tokens
		}
		w.h.mu.Lock()
		w.h.issuer = m.Issuer
		if w.h.dpop == nil {
			w.h.dpop = k
		}
		w.h.mu.Unlock()
	}
	return resp, nil
}

// NeedsLoginState is the auth state of a server that needs a login.
func NeedsLoginState(server string) string {
	return fmt.Sprintf("needs login (run: %s)", LoginCommand(server))
}

// State describes the connection's OAuth grant for a person: "" when the
// server asked for none, "ok" while it is valid or can be refreshed,
// "expires in 3m" when it cannot be refreshed and expires within the hour,
// and NeedsLoginState once it has expired.
func (h *Handler) State() string {
	h.mu.Lock()
	g := h.cur
	h.mu.Unlock()
	if g == nil {
		return ""
	}
	g.mu.Lock()
	t := g.t
	g.mu.Unlock()
	return grantState(h.server, &t)
}

// StoredAuth is Handler.State for a server not connected: the state of
// the grant kept for it in o.TokensPath, "" when there is none.
func StoredAuth(o *Config, s *config.Server) string {
	if o == nil || o.TokensPath == "" || s.Transport != config.TransportHTTP {
		return ""
	}
	ts, err := creds.LoadTokens(o.TokensPath, s.URL)
	if err != nil {
		return ""
	}
	for i := range ts {
		if s.OAuth == nil || s.OAuth.ClientID == "" || ts[i].ClientID == s.OAuth.ClientID {
			return grantState(s.Name, &ts[i])
		}
	}
	return ""
}

func grantState(server string, t *creds.Token) string {
	left := time.Until(t.Expiry)
	switch {
	case t.RefreshToken != "" || t.Expiry.IsZero() || left >= time.Hour:
		return "ok"
	case left <= 0:
		return NeedsLoginState(server)
	}
	return "expires in " + left.Round(time.Minute).String()
}
