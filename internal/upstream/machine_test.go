package upstream

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
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

// TestMachineGrantIssuer: a machine grant's credential goes only to the
// configured issuer (compared as go-sdk does: a trailing slash aside);
// an authorization server the server's metadata names otherwise gets no
// token request at all.
func TestMachineGrantIssuer(t *testing.T) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	env := map[string]string{"SECRET": "s3cret", "KEY": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "JWT": "a.b.c"}
	lookup := func(n string) (string, bool) { v, ok := env[n]; return v, ok }
	grants := map[string]string{
		"secret":   `"grant": "client_credentials", "clientId": "m", "clientSecretEnv": "SECRET"`,
		"key":      `"grant": "client_credentials", "clientId": "m", "privateKeyEnv": "KEY"`,
		"workload": `"grant": "jwt_bearer", "clientId": "m", "assertionEnv": "JWT"`,
	}
	for name, block := range grants {
		for _, own := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s own=%v", name, own), func(t *testing.T) {
				as := oauthtest.Start(t, nil)
				issuer := "http://127.0.0.1:1/"
				if own {
					issuer = as.Issuer + "/"
				}
				src := `{"mcpServers":{"gh":{"url":"` + as.MCP + `","trust":"trusted","oauth":{` + block + `, "issuer": "` + issuer + `"}}}}`
				c, err := dialOAuth(t, src, lookup)
				if err == nil {
					c.Close()
					t.Fatal("dial succeeded; the test server grants no machine tokens")
				}
				if got := as.Count("token"); own != (got > 0) {
					t.Fatalf("token requests = %d with own issuer %v (err %v)", got, own, err)
				}
				if !own && !strings.Contains(err.Error(), "issuer") {
					t.Fatalf("err = %v, want the issuer named", err)
				}
			})
		}
	}
}
