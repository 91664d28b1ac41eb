package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
)

// TestParsePrivateKey: the key forms a client's "privateKeyEnv" may hold,
// each with its JWS algorithm, and errors that never quote the key.
func TestParsePrivateKey(t *testing.T) {
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	pkcs8 := func(k any) string {
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: b}))
	}
	ec, _ := x509.MarshalECPrivateKey(p256)
	tests := []struct {
		name, pem, alg, err string
	}{
		{"pkcs8 P-256", pkcs8(p256), "ES256", ""},
		{"pkcs8 P-384", pkcs8(p384), "ES384", ""},
		{"pkcs8 RSA", pkcs8(rk), "RS256", ""},
		{"SEC 1 EC", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ec})), "ES256", ""},
		{"PKCS#1 RSA", string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)})), "RS256", ""},
		{"not PEM", "s3cret-not-a-key", "", "not a PEM private key"},
		{"bad DER", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("s3cret")})), "", "does not parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, m, err := parsePrivateKey(tt.pem)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("err = %v, want %q without the key", err, tt.err)
				}
				return
			}
			if err != nil || string(m) != tt.alg {
				t.Fatalf("alg, err = %v, %v; want %s", m, err, tt.alg)
			}
		})
	}
}
