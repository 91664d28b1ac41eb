package oauth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

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

// TestMachineGrantNoDPoP: a machine grant's token request carries no DPoP
// proof, even from an authorization server that takes DPoP: its token is
// presented as a Bearer token, which a DPoP-bound one could not be.
func TestMachineGrantNoDPoP(t *testing.T) {
	var tokenReqs, proofs atomic.Int32
	srv := machineServer(t, map[string]any{"dpop_signing_alg_values_supported": []string{"ES256"}}, func(w http.ResponseWriter, r *http.Request) {
		tokenReqs.Add(1)
		typ := "Bearer"
		if r.Header.Get("DPoP") != "" {
			proofs.Add(1)
			typ = "DPoP"
		}
		json.NewEncoder(w).Encode(map[string]any{"access_token": "at", "token_type": typ, "expires_in": 3600})
	})
	c, err := dialOAuth(t, machineConfig(srv), func(string) (string, bool) { return "s", true })
	if err == nil {
		c.Close() // the server refuses every token; the dial is not the point
	}
	if tokenReqs.Load() == 0 || proofs.Load() != 0 {
		t.Fatalf("token requests %d, with a DPoP proof %d; want some, none (dial: %v)", tokenReqs.Load(), proofs.Load(), err)
	}
}
