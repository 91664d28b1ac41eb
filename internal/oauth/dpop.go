package oauth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// DPoP (RFC 9449) binds a grant to a key of the client's: each token
// request and each request to the server carries a fresh proof signed with
// it, and the access token goes in an "Authorization: DPoP" header. go-sdk
// sends "Bearer" and no proof, so this is done at the HTTP layer: the
// authorization server's client adds proofs to token requests (dpopAS),
// and the server's transport turns the bearer header of a DPoP-bound token
// into a DPoP one with its proof (dpopRS). A nonce asked for with
// use_dpop_nonce (section 8, 9) is remembered per origin and the request
// sent again once.

// dpopKey is the key a grant is bound to. Its nonces are guarded by mu.
type dpopKey struct {
	key    *ecdsa.PrivateKey
	signer jose.Signer // ES256, the public key in the jwk header, typ dpop+jwt

	mu     sync.Mutex
	nonces map[string]string // origin → the last nonce it gave
}

func newDPoPKey() (*dpopKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return dpopKeyOf(k)
}

func dpopKeyOf(k *ecdsa.PrivateKey) (*dpopKey, error) {
	// EmbedJWK puts the public part of the key in the jwk header (RFC
	// 9449 section 4.2), never the private one.
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k},
		(&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	if err != nil {
		return nil, err
	}
	return &dpopKey{key: k, signer: signer, nonces: map[string]string{}}, nil
}

// parseDPoPKey reads a key kept with a grant (PKCS#8 PEM).
func parseDPoPKey(pemText string) (*dpopKey, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("the grant's DPoP key is not PEM")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("the grant's DPoP key does not parse")
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, errors.New("the grant's DPoP key is not a P-256 key")
	}
	return dpopKeyOf(ek)
}

// pem is the key to keep with the grant.
func (k *dpopKey) pem() string {
	b, err := x509.MarshalPKCS8PrivateKey(k.key)
	if err != nil {
		return ""
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: b}))
}

func origin(r *http.Request) string { return r.URL.Scheme + "://" + r.URL.Host }

// proof signs a proof for r; accessToken, when set, is hashed into ath.
func (k *dpopKey) proof(r *http.Request, accessToken string) (string, error) {
	htu := *r.URL
	htu.RawQuery, htu.Fragment = "", ""
	claims := map[string]any{"jti": rand.Text(), "htm": r.Method, "htu": htu.String(), "iat": time.Now().Unix()}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	k.mu.Lock()
	if n := k.nonces[origin(r)]; n != "" {
		claims["nonce"] = n
	}
	k.mu.Unlock()
	return jwt.Signed(k.signer).Claims(claims).Serialize()
}

// noteNonce keeps the nonce a response gives, and reports whether the
// response asked for one (use_dpop_nonce): then the request is sent again.
func (k *dpopKey) noteNonce(r *http.Request, resp *http.Response) bool {
	n := resp.Header.Get("DPoP-Nonce")
	if n == "" {
		return false
	}
	k.mu.Lock()
	k.nonces[origin(r)] = n
	k.mu.Unlock()
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		if err != nil {
			return false
		}
		for _, c := range cs {
			if c.Params["error"] == "use_dpop_nonce" {
				return true
			}
		}
	case http.StatusBadRequest:
		// The token endpoint says it in the JSON body (section 8).
		body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return err == nil && bytes.Contains(body, []byte(`"use_dpop_nonce"`))
	}
	return false
}

// sendWithProof sends r with a proof from k, and once more with the
// server's nonce when it asks for one.
func (k *dpopKey) sendWithProof(next http.RoundTripper, r *http.Request, accessToken string) (*http.Response, error) {
	send := func(r *http.Request) (*http.Response, error) {
		p, err := k.proof(r, accessToken)
		if err != nil {
			return nil, err
		}
		r.Header.Set("DPoP", p)
		return next.RoundTrip(r)
	}
	resp, err := send(r.Clone(r.Context()))
	if err != nil || !k.noteNonce(r, resp) || r.GetBody == nil && r.Body != nil && r.Body != http.NoBody {
		return resp, err
	}
	again := r.Clone(r.Context())
	if r.GetBody != nil {
		if again.Body, err = r.GetBody(); err != nil {
			return resp, nil
		}
	}
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // draining the refused answer
	resp.Body.Close()
	return send(again)
}

// dpopAS adds proofs to the token requests (form POSTs) of a handler
// whose authorization server supports DPoP.
type dpopAS struct {
	next http.RoundTripper
	h    *Handler
}

func (t dpopAS) RoundTrip(r *http.Request) (*http.Response, error) {
	k := t.h.dpopKey()
	if k == nil || r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return t.next.RoundTrip(r)
	}
	return k.sendWithProof(t.next, r, "")
}

// Transport returns the round tripper of the connection's requests to the
// server over next: a DPoP-bound access token is presented as DPoP, with a
// proof; any other request passes as it is.
func (h *Handler) Transport(next http.RoundTripper) http.RoundTripper {
	return dpopRS{next: next, h: h}
}

// dpopRS presents a DPoP-bound access token to the server.
type dpopRS struct {
	next http.RoundTripper
	h    *Handler
}

func (t dpopRS) RoundTrip(r *http.Request) (*http.Response, error) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	k := t.h.dpopKey()
	if !ok || k == nil || !t.h.dpopBound(tok) {
		return t.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "DPoP "+tok)
	return k.sendWithProof(t.next, r, tok)
}
