// Package issuer is an OAuth authorization server's signing half for
// tests: real RSA and ECDSA keys, a JSON Web Key Set and RFC 8414
// metadata served on 127.0.0.1, and JWT access tokens minted with those
// keys. It issues no tokens over HTTP; a test mints them directly.
package issuer

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is a running test issuer.
type Issuer struct {
	URL string // the issuer identifier, http://127.0.0.1:PORT

	rsaKey *rsa.PrivateKey
	ecKey  *ecdsa.PrivateKey
	srv    *httptest.Server
	// KeyFetches counts requests for the key set.
	KeyFetches atomic.Int64
	// rotated, when set, serves a second RSA key as well (see Rotate).
	rotated atomic.Pointer[rsa.PrivateKey]
}

// Key IDs of the issuer's keys.
const (
	RSAKeyID     = "rsa-1"
	ECKeyID      = "ec-1"
	RotatedKeyID = "rsa-2"
)

// New starts an issuer on 127.0.0.1:0, closed at the test's end.
func New(t testing.TB) *Issuer {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is := &Issuer{rsaKey: rk, ecKey: ek}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                           is.URL,
			"authorization_endpoint":           is.URL + "/authorize",
			"token_endpoint":                   is.URL + "/token",
			"jwks_uri":                         is.URL + "/jwks.json",
			"response_types_supported":         []string{"code"},
			"code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("/jwks.json", func(w http.ResponseWriter, r *http.Request) {
		is.KeyFetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(is.KeySet())
	})
	is.srv = httptest.NewServer(mux)
	is.URL = is.srv.URL
	t.Cleanup(is.srv.Close)
	return is
}

// KeySet is the public key set the issuer serves.
func (is *Issuer) KeySet() jose.JSONWebKeySet {
	ks := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &is.rsaKey.PublicKey, KeyID: RSAKeyID, Algorithm: string(jose.RS256), Use: "sig"},
		{Key: &is.ecKey.PublicKey, KeyID: ECKeyID, Algorithm: string(jose.ES256), Use: "sig"},
	}}
	if k := is.rotated.Load(); k != nil {
		ks.Keys = append(ks.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: RotatedKeyID, Algorithm: string(jose.RS256), Use: "sig"})
	}
	return ks
}

// Rotate adds a key under RotatedKeyID to the served set, as an issuer
// rotating its keys does.
func (is *Issuer) Rotate(t testing.TB) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is.rotated.Store(k)
}

// Token describes a token to mint. Zero fields get the defaults given.
type Token struct {
	Subject  string        // default "user-1"
	Issuer   string        // default the issuer's URL
	Audience []string      // default none
	Scope    string        // space-separated; omitted when ""
	TTL      time.Duration // exp = now+TTL; default one hour; negative: expired
	NotAfter bool          // omit exp
	Extra    map[string]any
	KeyID    string // RSAKeyID (default), ECKeyID or RotatedKeyID
	// Foreign signs with a fresh key that the issuer does not publish,
	// under KeyID.
	Foreign bool
	// Type is the typ header: default "at+jwt" (an access token); "JWT"
	// is what an ID token carries, and many issuers' access tokens too.
	Type string
	// NoType leaves the typ header out, as Okta does.
	NoType bool
}

// Mint signs tok.
func (is *Issuer) Mint(t testing.TB, tok Token) string {
	t.Helper()
	if tok.Subject == "" {
		tok.Subject = "user-1"
	}
	if tok.Issuer == "" {
		tok.Issuer = is.URL
	}
	if tok.TTL == 0 {
		tok.TTL = time.Hour
	}
	if tok.KeyID == "" {
		tok.KeyID = RSAKeyID
	}
	if tok.Type == "" {
		tok.Type = "at+jwt"
	}
	var sk jose.SigningKey
	switch tok.KeyID {
	case ECKeyID:
		sk = jose.SigningKey{Algorithm: jose.ES256, Key: is.ecKey}
	case RotatedKeyID:
		sk = jose.SigningKey{Algorithm: jose.RS256, Key: is.rotated.Load()}
	default:
		sk = jose.SigningKey{Algorithm: jose.RS256, Key: is.rsaKey}
	}
	if tok.Foreign {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		sk = jose.SigningKey{Algorithm: jose.RS256, Key: k}
	}
	so := (&jose.SignerOptions{}).WithHeader("kid", tok.KeyID)
	if !tok.NoType {
		so = so.WithType(jose.ContentType(tok.Type))
	}
	signer, err := jose.NewSigner(sk, so)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claims := jwt.Claims{Subject: tok.Subject, Issuer: tok.Issuer, Audience: tok.Audience,
		IssuedAt: jwt.NewNumericDate(now.Add(-time.Minute)), NotBefore: jwt.NewNumericDate(now.Add(-time.Minute))}
	if tok.TTL < 0 {
		claims.IssuedAt = jwt.NewNumericDate(now.Add(2 * tok.TTL))
		claims.NotBefore = claims.IssuedAt
	}
	if !tok.NotAfter {
		claims.Expiry = jwt.NewNumericDate(now.Add(tok.TTL))
	}
	extra := map[string]any{}
	for k, v := range tok.Extra {
		extra[k] = v
	}
	if tok.Scope != "" {
		extra["scope"] = tok.Scope
	}
	s, err := jwt.Signed(signer).Claims(claims).Claims(extra).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
