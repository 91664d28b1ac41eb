package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
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
func verifyProof(t *testing.T, proof string) map[string]any {
	t.Helper()
	head, _, _ := strings.Cut(proof, ".")
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		t.Fatalf("proof header: %v", err)
	}
	var header struct {
		Typ, Alg string
		JWK      map[string]any
	}
	if err := json.Unmarshal(raw, &header); err != nil {
		t.Fatalf("proof header: %v", err)
	}
	if header.Typ != "dpop+jwt" || header.Alg != "ES256" {
		t.Errorf("typ %q alg %q", header.Typ, header.Alg)
	}
	jwk := header.JWK
	if _, private := jwk["d"]; private || jwk["kty"] != "EC" || jwk["crv"] != "P-256" {
		t.Errorf("jwk %v", jwk)
	}
	coord := func(name string) *big.Int {
		s, _ := jwk[name].(string)
		b, _ := base64.RawURLEncoding.DecodeString(s)
		return new(big.Int).SetBytes(b)
	}
	jws, err := jose.ParseSigned(proof, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatalf("proof: %v", err)
	}
	payload, err := jws.Verify(&ecdsa.PublicKey{Curve: elliptic.P256(), X: coord("x"), Y: coord("y")})
	if err != nil {
		t.Fatalf("proof: %v", err)
	}
	claims := map[string]any{}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatalf("proof claims: %v", err)
	}
	return claims
}
