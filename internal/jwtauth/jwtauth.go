// Package jwtauth checks JWT access tokens for the gateway acting as an
// OAuth 2.1 resource server: the signature (RS256 or ES256, the key chosen
// by its "kid" from the issuer's JSON Web Key Set), the issuer, the
// audience, and the expiry and not-before times with a small leeway.
// Scopes are read, not required: go-sdk's auth.RequireBearerToken compares
// them with the required ones.
//
// The key set comes from a URL or a file, or from the jwks_uri of the
// issuer's authorization-server metadata (RFC 8414, or OpenID Connect
// discovery), found through go-sdk's oauthex. It is cached; a token signed
// with a key the cache does not hold makes the set be fetched again, at
// most once per [Options.MinRefresh], so that a stream of forged key IDs
// cannot turn the gateway into a flood of requests to the issuer.
//
// Signatures are checked by github.com/go-jose/go-jose/v4, never here.
package jwtauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboard-mcp/switchboard/internal/bytesize"
)

// Defaults for [Options].
const (
	DefaultLeeway     = 30 * time.Second
	DefaultMinRefresh = time.Minute
	// maxKeySet caps a fetched or read key set.
	maxKeySet = 1 << 20
	// maxToken caps a token before it is parsed.
	maxToken = 16 << 10
	// fetchTimeout bounds one fetch of metadata or keys.
	fetchTimeout = 10 * time.Second
)

// Algorithms are the signature algorithms accepted.
var Algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256}

// ErrInvalid is what every refusal of a token wraps. Its message never
// contains the token.
var ErrInvalid = errors.New("invalid token")

// Options configure [New].
type Options struct {
	// Issuer is the expected "iss" claim, an https URL (http only on a
	// loopback host). Required.
	Issuer string
	// Audience is a value the "aud" claim must contain: the gateway's
	// resource identifier, normally its URL. Required.
	Audience string
	// JWKS is where the signing keys are: an http(s) URL or a file path.
	// Default: "", the jwks_uri of the issuer's authorization-server
	// metadata.
	JWKS string
	// Leeway is the clock skew allowed on exp, nbf and iat.
	// Default: DefaultLeeway (30 s).
	Leeway time.Duration
	// MinRefresh is the shortest time between two fetches of the key set
	// caused by tokens naming an unknown key. Default: DefaultMinRefresh.
	MinRefresh time.Duration
	// HTTPClient fetches metadata and keys. Default: a client with a
	// ten-second timeout.
	HTTPClient *http.Client
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// RequireAccessTokenType accepts only tokens whose typ header is
	// "at+jwt" (RFC 9068). Default false: a typ of "JWT", or none, is
	// accepted too, as Keycloak, Microsoft Entra, Auth0 and Okta issue
	// access tokens; ID tokens are still told apart by their claims (see
	// [Verifier.Verify]).
	RequireAccessTokenType bool
	// RequireScopeClaim refuses a token that carries no "scope", "scp" or
	// "roles" claim: set it when scopes are required, so that a token
	// minted for another purpose is not taken for one that lacks them.
	RequireScopeClaim bool
}

// Claims are what a valid token says about its bearer.
type Claims struct {
	Subject string
	Scopes  []string // from "scope" (space-separated) or "scp" (an array)
	Expiry  time.Time
	// Raw holds every claim, decoded by encoding/json, for matching
	// clients on claims other than "sub".
	Raw map[string]any
}

// Verifier checks tokens against one issuer. It is safe for concurrent
// use.
type Verifier struct {
	opts    Options // defaults applied; fixed at creation
	jwksURL string  // "" when the keys are read from opts.JWKS as a file

	// fetchMu serialises fetches; lock order: fetchMu, then mu.
	fetchMu sync.Mutex

	mu      sync.Mutex
	keys    *jose.JSONWebKeySet // guarded by mu
	fetched time.Time           // guarded by mu: when keys were last loaded
}

// New checks opts, finds the key set (through the issuer's metadata when
// opts.JWKS is empty) and loads it once, so that a misconfiguration shows
// at start.
func New(ctx context.Context, opts Options) (*Verifier, error) {
	if err := checkURL(opts.Issuer); err != nil {
		return nil, fmt.Errorf("jwtauth: issuer: %w", err)
	}
	if opts.Audience == "" {
		return nil, errors.New("jwtauth: an audience is required")
	}
	if opts.Leeway == 0 {
		opts.Leeway = DefaultLeeway
	}
	if opts.Leeway < 0 || opts.MinRefresh < 0 {
		return nil, errors.New("jwtauth: negative leeway or refresh interval")
	}
	if opts.MinRefresh == 0 {
		opts.MinRefresh = DefaultMinRefresh
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: fetchTimeout}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	v := &Verifier{opts: opts}
	switch {
	case opts.JWKS == "":
		u, err := discover(ctx, opts.Issuer, opts.HTTPClient)
		if err != nil {
			return nil, err
		}
		v.jwksURL = u
	case strings.HasPrefix(opts.JWKS, "http://") || strings.HasPrefix(opts.JWKS, "https://"):
		if err := checkURL(opts.JWKS); err != nil {
			return nil, fmt.Errorf("jwtauth: key set: %w", err)
		}
		v.jwksURL = opts.JWKS
	}
	ks, err := v.load(ctx)
	if err != nil {
		return nil, err
	}
	v.keys, v.fetched = ks, opts.Now()
	return v, nil
}

// Verify checks token and returns its claims. Every refusal wraps
// ErrInvalid and says why in a few words, never quoting the token.
func (v *Verifier) Verify(ctx context.Context, token string) (*Claims, error) {
	if len(token) > maxToken {
		return nil, fmt.Errorf("%w: too long", ErrInvalid)
	}
	tok, err := jwt.ParseSigned(token, Algorithms)
	if err != nil {
		return nil, fmt.Errorf("%w: not a signed JWT with an accepted algorithm", ErrInvalid)
	}
	if len(tok.Headers) != 1 {
		return nil, fmt.Errorf("%w: want exactly one signature", ErrInvalid)
	}
	hdr := tok.Headers[0]
	if !v.acceptedType(hdr.ExtraHeaders[jose.HeaderType]) {
		// An ID token, say, may name the gateway as its audience too.
		if v.opts.RequireAccessTokenType {
			return nil, fmt.Errorf("%w: not an access token (typ at+jwt required)", ErrInvalid)
		}
		return nil, fmt.Errorf("%w: not an access token (typ)", ErrInvalid)
	}
	key, err := v.key(ctx, hdr.KeyID, hdr.Algorithm)
	if err != nil {
		return nil, err
	}
	var std jwt.Claims
	raw := map[string]any{}
	if err := tok.Claims(key.Key, &std, &raw); err != nil {
		return nil, fmt.Errorf("%w: bad signature or claims", ErrInvalid)
	}
	if std.Expiry == nil {
		return nil, fmt.Errorf("%w: no exp claim", ErrInvalid)
	}
	exp := jwt.Expected{Issuer: v.opts.Issuer, AnyAudience: jwt.Audience{v.opts.Audience}, Time: v.opts.Now()}
	if err := std.ValidateWithLeeway(exp, v.opts.Leeway); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, reason(err))
	}
	if why := idTokenClaims(raw); why != "" {
		return nil, fmt.Errorf("%w: not an access token (%s)", ErrInvalid, why)
	}
	c := &Claims{Subject: std.Subject, Expiry: std.Expiry.Time(), Raw: raw}
	var has bool
	c.Scopes, has, err = scopes(raw)
	if err != nil {
		return nil, err
	}
	if v.opts.RequireScopeClaim && !has {
		return nil, fmt.Errorf("%w: no scope, scp or roles claim", ErrInvalid)
	}
	return c, nil
}

// acceptedType reports whether a typ header may be an access token's:
// "at+jwt" or its media type "application/at+jwt" (RFC 9068 section 4),
// in any case; unless RequireAccessTokenType, also "JWT" (or
// "application/jwt") and none at all, as most identity providers send.
func (v *Verifier) acceptedType(typ any) bool {
	t, ok := typ.(string)
	t = strings.ToLower(t)
	switch t {
	case "at+jwt", "application/at+jwt":
		return true
	case "jwt", "application/jwt":
		return !v.opts.RequireAccessTokenType
	}
	return !ok && typ == nil && !v.opts.RequireAccessTokenType
}

// idTokenClaims says why claims are an ID token's (or another token's that
// is not an access token), "" when nothing says so: an at_hash or c_hash
// (OpenID Connect Core 3.1.3.6, 3.3.2.11: only ID tokens carry them), or
// Keycloak's "typ" claim naming another kind of token. A nonce alone
// proves nothing: Keycloak puts it in access tokens too.
func idTokenClaims(raw map[string]any) string {
	for _, k := range []string{"at_hash", "c_hash"} {
		if _, ok := raw[k]; ok {
			return k + " claim"
		}
	}
	if t, ok := raw["typ"].(string); ok {
		switch strings.ToLower(t) {
		case "id", "refresh", "offline", "logout":
			return "typ claim " + strconv.Quote(t)
		}
	}
	return ""
}

// reason names a go-jose validation failure.
func reason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return "expired"
	case errors.Is(err, jwt.ErrNotValidYet):
		return "not valid yet"
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return "issued in the future"
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return "wrong issuer"
	case errors.Is(err, jwt.ErrInvalidAudience):
		return "wrong audience"
	}
	return "claims not valid"
}

// scopes reads "scope" (RFC 8693 §4.2, RFC 9068 §2.2.3: space-separated)
// or, failing that, "scp" (space-separated as Microsoft Entra writes it, or
// an array as Okta does), or, failing both, "roles" (an array: Entra's
// application permissions). has says whether one of them was there.
func scopes(raw map[string]any) (out []string, has bool, err error) {
	if s, ok := raw["scope"]; ok {
		str, ok := s.(string)
		if !ok {
			return nil, true, fmt.Errorf("%w: scope is not a string", ErrInvalid)
		}
		return strings.Fields(str), true, nil
	}
	for _, key := range []string{"scp", "roles"} {
		s, ok := raw[key]
		if !ok {
			continue
		}
		if str, ok := s.(string); ok && key == "scp" {
			return strings.Fields(str), true, nil
		}
		arr, ok := s.([]any)
		if !ok {
			return nil, true, fmt.Errorf("%w: %s is not an array", ErrInvalid, key)
		}
		out := make([]string, 0, len(arr))
		for _, e := range arr {
			str, ok := e.(string)
			if !ok {
				return nil, true, fmt.Errorf("%w: %s holds a non-string", ErrInvalid, key)
			}
			out = append(out, str)
		}
		return out, true, nil
	}
	return nil, false, nil
}

// key returns the verification key named kid for alg, loading the key set
// again when it does not hold one and the last load is old enough.
func (v *Verifier) key(ctx context.Context, kid string, alg string) (*jose.JSONWebKey, error) {
	v.mu.Lock()
	k, ok := pick(v.keys, kid, alg)
	last := v.fetched
	v.mu.Unlock()
	if ok {
		return k, nil
	}
	if v.opts.Now().Sub(last) < v.opts.MinRefresh {
		return nil, fmt.Errorf("%w: unknown signing key", ErrInvalid)
	}
	v.fetchMu.Lock()
	defer v.fetchMu.Unlock()
	v.mu.Lock()
	if v.fetched.After(last) {
		// Another caller loaded the set while this one waited.
		k, ok = pick(v.keys, kid, alg)
		v.mu.Unlock()
		if ok {
			return k, nil
		}
		return nil, fmt.Errorf("%w: unknown signing key", ErrInvalid)
	}
	v.mu.Unlock()
	ks, err := v.load(ctx)
	v.mu.Lock()
	defer v.mu.Unlock()
	if err != nil && ctx.Err() != nil {
		// The caller gave up: no failure of the key set's, and no
		// fetch to count against the rate limit.
		return nil, fmt.Errorf("%w: unknown signing key (the key set was not loaded: %v)", ErrInvalid, ctx.Err())
	}
	// A failed load counts against the rate limit too, and keeps the old keys.
	v.fetched = v.opts.Now()
	if err != nil {
		return nil, fmt.Errorf("%w: unknown signing key (loading the key set failed)", ErrInvalid)
	}
	v.keys = ks
	if k, ok = pick(ks, kid, alg); ok {
		return k, nil
	}
	return nil, fmt.Errorf("%w: unknown signing key", ErrInvalid)
}

// pick finds a public signing key for alg named kid; with no kid, the one
// key of that algorithm if there is exactly one.
func pick(ks *jose.JSONWebKeySet, kid, alg string) (*jose.JSONWebKey, bool) {
	if ks == nil {
		return nil, false
	}
	var found *jose.JSONWebKey
	n := 0
	for i := range ks.Keys {
		k := &ks.Keys[i]
		if kid != "" && k.KeyID != kid {
			continue
		}
		if !k.IsPublic() || !k.Valid() || (k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && k.Algorithm != alg) {
			continue
		}
		found = k
		n++
	}
	if n != 1 {
		return nil, false
	}
	return found, true
}

// load reads the key set from its URL or file.
func (v *Verifier) load(ctx context.Context) (*jose.JSONWebKeySet, error) {
	var data []byte
	if v.jwksURL != "" {
		b, err := get(ctx, v.opts.HTTPClient, v.jwksURL)
		if err != nil {
			return nil, fmt.Errorf("jwtauth: fetching the key set: %w", err)
		}
		data = b
	} else {
		var err error
		data, err = bytesize.ReadFile(v.opts.JWKS, maxKeySet)
		if err != nil {
			return nil, fmt.Errorf("jwtauth: key set: %w", err)
		}
	}
	return parseKeySet(data)
}

// parseKeySet decodes a JSON Web Key Set, keeping the public keys only.
func parseKeySet(data []byte) (*jose.JSONWebKeySet, error) {
	var ks jose.JSONWebKeySet
	if err := json.Unmarshal(data, &ks); err != nil {
		return nil, fmt.Errorf("jwtauth: key set is not a JSON Web Key Set: %w", err)
	}
	ks.Keys = slices.DeleteFunc(ks.Keys, func(k jose.JSONWebKey) bool { return !k.IsPublic() })
	if len(ks.Keys) == 0 {
		return nil, errors.New("jwtauth: key set holds no public key")
	}
	return &ks, nil
}

// get fetches a JSON document of at most maxKeySet bytes.
func get(ctx context.Context, c *http.Client, u string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s", u, resp.Status)
	}
	return bytesize.ReadAll(resp.Body, maxKeySet)
}

// discover returns the jwks_uri of the issuer's authorization-server
// metadata, trying the RFC 8414 well-known URL, then OpenID Connect
// discovery's two forms.
func discover(ctx context.Context, issuer string, c *http.Client) (string, error) {
	var errs []error
	for _, u := range metadataURLs(issuer) {
		asm, err := oauthex.GetAuthServerMeta(ctx, u, issuer, c)
		switch {
		case err != nil:
			errs = append(errs, err)
		case asm == nil:
			// 4xx: try the next form.
		case asm.JWKSURI == "":
			return "", fmt.Errorf("jwtauth: the metadata at %s has no jwks_uri", u)
		default:
			if err := checkURL(asm.JWKSURI); err != nil {
				return "", fmt.Errorf("jwtauth: jwks_uri: %w", err)
			}
			return asm.JWKSURI, nil
		}
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("jwtauth: no usable authorization-server metadata for %s: %w", issuer, errors.Join(errs...))
	}
	return "", fmt.Errorf("jwtauth: no authorization-server metadata found for %s", issuer)
}

// metadataURLs lists where an issuer's metadata may be (RFC 8414 §3.1;
// OpenID Connect Discovery 1.0 §4, and its form with the suffix inserted).
func metadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	p := strings.TrimSuffix(u.Path, "/")
	base := u.Scheme + "://" + u.Host
	out := []string{base + "/.well-known/oauth-authorization-server" + p}
	if p == "" {
		return append(out, base+"/.well-known/openid-configuration")
	}
	return append(out, base+"/.well-known/openid-configuration"+p, base+p+"/.well-known/openid-configuration")
}

// checkURL accepts an https URL, or an http one on a loopback host.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", s)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		h := u.Hostname()
		if h == "localhost" || h == "127.0.0.1" || h == "::1" {
			return nil
		}
		return fmt.Errorf("%q: http is allowed only on a loopback host", s)
	}
	return fmt.Errorf("%q: want an https URL", s)
}
