package upstream

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// TestDPoPProof: a proof is a dpop+jwt signed by the key in its jwk
// header (public part only), for the request's method and URL without
// query, with ath for an access token and a fresh jti; a server that asks
// for a nonce (use_dpop_nonce) gets the request again, once, with it.
func TestDPoPProof(t *testing.T) {
	k, err := newDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	jtis := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		claims := verifyProof(t, r.Header.Get("DPoP"))
		if claims["htm"] != "POST" || claims["htu"] != "http://"+r.Host+"/mcp" {
			t.Errorf("htm %v htu %v", claims["htm"], claims["htu"])
		}
		sum := sha256.Sum256([]byte("tok"))
		if claims["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) {
			t.Errorf("ath %v", claims["ath"])
		}
		jti, _ := claims["jti"].(string)
		if jti == "" || jtis[jti] {
			t.Errorf("jti %q not fresh", jti)
		}
		jtis[jti] = true
		if claims["nonce"] != "n1" {
			w.Header().Set("DPoP-Nonce", "n1")
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Header.Get("Authorization") != "DPoP tok" {
			t.Errorf("Authorization %q", r.Header.Get("Authorization"))
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp?x=1", strings.NewReader("{}"))
	req.Header.Set("Authorization", "DPoP tok")
	resp, err := k.sendWithProof(http.DefaultTransport, req, "tok")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || calls.Load() != 2 {
		t.Fatalf("status %d after %d requests, want 200 after 2", resp.StatusCode, calls.Load())
	}
}

// verifyProof checks a proof's header and signature with the key it names.
func verifyProof(t *testing.T, proof string) jwt.MapClaims {
	t.Helper()
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(proof, claims, func(tok *jwt.Token) (any, error) {
		if tok.Header["typ"] != "dpop+jwt" {
			t.Errorf("typ %v", tok.Header["typ"])
		}
		jwk, _ := tok.Header["jwk"].(map[string]any)
		if _, private := jwk["d"]; private || jwk["kty"] != "EC" || jwk["crv"] != "P-256" {
			t.Errorf("jwk %v", jwk)
		}
		coord := func(name string) *big.Int {
			s, _ := jwk[name].(string)
			b, _ := base64.RawURLEncoding.DecodeString(s)
			return new(big.Int).SetBytes(b)
		}
		return &ecdsa.PublicKey{Curve: elliptic.P256(), X: coord("x"), Y: coord("y")}, nil
	}, jwt.WithValidMethods([]string{"ES256"}))
	if err != nil {
		t.Fatalf("proof: %v", err)
	}
	return claims
}
