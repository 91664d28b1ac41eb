package jwtauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/jwtauth"
	"github.com/switchboard-mcp/switchboard/internal/testkit/issuer"
)

const aud = "http://127.0.0.1/mcp"

func newVerifier(t *testing.T, is *issuer.Issuer, opts jwtauth.Options) *jwtauth.Verifier {
	t.Helper()
	opts.Issuer, opts.Audience = is.URL, aud
	v, err := jwtauth.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerify(t *testing.T) {
	is := issuer.New(t)
	v := newVerifier(t, is, jwtauth.Options{})
	good := issuer.Token{Audience: []string{aud}, Scope: "mcp:tools read"}
	with := func(f func(*issuer.Token)) issuer.Token { tok := good; f(&tok); return tok }
	tests := []struct {
		name    string
		tok     issuer.Token
		raw     string // used instead of tok when set
		wantErr string // "" accepts
		scopes  []string
	}{
		{name: "good RS256", tok: good, scopes: []string{"mcp:tools", "read"}},
		{name: "good ES256", tok: with(func(t *issuer.Token) { t.KeyID = issuer.ECKeyID }), scopes: []string{"mcp:tools", "read"}},
		{name: "audience among several", tok: with(func(t *issuer.Token) { t.Audience = []string{"other", aud} }), scopes: []string{"mcp:tools", "read"}},
		{name: "scp array", tok: with(func(t *issuer.Token) { t.Scope = ""; t.Extra = map[string]any{"scp": []string{"a", "b"}} }), scopes: []string{"a", "b"}},
		{name: "wrong audience", tok: with(func(t *issuer.Token) { t.Audience = []string{"http://elsewhere/mcp"} }), wantErr: "wrong audience"},
		{name: "no audience", tok: with(func(t *issuer.Token) { t.Audience = nil }), wantErr: "wrong audience"},
		{name: "wrong issuer", tok: with(func(t *issuer.Token) { t.Issuer = "https://evil.example" }), wantErr: "wrong issuer"},
		{name: "expired", tok: with(func(t *issuer.Token) { t.TTL = -time.Hour }), wantErr: "expired"},
		{name: "expired within leeway", tok: with(func(t *issuer.Token) { t.TTL = -10 * time.Second }), scopes: []string{"mcp:tools", "read"}},
		{name: "no exp", tok: with(func(t *issuer.Token) { t.NotAfter = true }), wantErr: "no exp"},
		{name: "foreign key under a known kid", tok: with(func(t *issuer.Token) { t.Foreign = true }), wantErr: "bad signature"},
		{name: "unknown kid", tok: with(func(t *issuer.Token) { t.Foreign = true; t.KeyID = "nope" }), wantErr: "unknown signing key"},
		{name: "scope not a string", tok: with(func(t *issuer.Token) { t.Scope = ""; t.Extra = map[string]any{"scope": 3} }), wantErr: "scope is not a string"},
		{name: "typ JWT", tok: with(func(t *issuer.Token) { t.Type = "JWT" }), scopes: []string{"mcp:tools", "read"}},
		{name: "no typ", tok: with(func(t *issuer.Token) { t.NoType = true }), scopes: []string{"mcp:tools", "read"}},
		{name: "DPoP proof typ", tok: with(func(t *issuer.Token) { t.Type = "dpop+jwt" }), wantErr: "not an access token"},
		{name: "logout token typ", tok: with(func(t *issuer.Token) { t.Type = "logout+jwt" }), wantErr: "not an access token"},
		{name: "ID token at_hash", tok: with(func(t *issuer.Token) { t.Type = "JWT"; t.Extra = map[string]any{"at_hash": "x", "nonce": "n"} }), wantErr: "at_hash"},
		{name: "ID token c_hash", tok: with(func(t *issuer.Token) { t.NoType = true; t.Extra = map[string]any{"c_hash": "x"} }), wantErr: "c_hash"},
		{name: "scp string", tok: with(func(t *issuer.Token) { t.Scope = ""; t.Extra = map[string]any{"scp": "a b"} }), scopes: []string{"a", "b"}},
		{name: "roles", tok: with(func(t *issuer.Token) { t.Scope = ""; t.Extra = map[string]any{"roles": []string{"Tools.Call"}} }), scopes: []string{"Tools.Call"}},
		{name: "media type typ", tok: with(func(t *issuer.Token) { t.Type = "application/at+jwt" }), scopes: []string{"mcp:tools", "read"}},
		{name: "garbage", raw: "not.a.jwt", wantErr: "not a signed JWT"},
		{name: "alg none", raw: "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", wantErr: "not a signed JWT"},
		{name: "HS256", raw: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", wantErr: "not a signed JWT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := tt.raw
			if raw == "" {
				raw = is.Mint(t, tt.tok)
			}
			c, err := v.Verify(context.Background(), raw)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, jwtauth.ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Verify = %v, want an ErrInvalid saying %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), raw) {
					t.Fatalf("error quotes the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if c.Subject != "user-1" || !slices.Equal(c.Scopes, tt.scopes) {
				t.Fatalf("claims = %+v, want subject user-1 and scopes %v", c, tt.scopes)
			}
		})
	}
}

// The access tokens of real identity providers, by the shape each sends
// (header typ, claims), are accepted, and their ID tokens refused; with
// RequireAccessTokenType only at+jwt passes, and with RequireScopeClaim a
// token without any scope claim is refused.
func TestIdentityProviderShapes(t *testing.T) {
	is := issuer.New(t)
	shapes := []struct {
		name   string
		tok    issuer.Token
		scopes []string // nil: refused by default
		atJWT  bool     // accepted under RequireAccessTokenType
	}{
		{name: "Keycloak access token", tok: issuer.Token{Type: "JWT", Scope: "openid profile mcp:tools", Extra: map[string]any{
			"typ": "Bearer", "azp": "switchboard", "session_state": "s", "realm_access": map[string]any{"roles": []string{"offline_access"}}}},
			scopes: []string{"openid", "profile", "mcp:tools"}},
		{name: "Keycloak access token with nonce", tok: issuer.Token{Type: "JWT", Scope: "openid mcp:tools", Extra: map[string]any{
			"typ": "Bearer", "azp": "switchboard", "nonce": "abc"}}, scopes: []string{"openid", "mcp:tools"}},
		{name: "Keycloak ID token", tok: issuer.Token{Type: "JWT", Extra: map[string]any{"typ": "ID", "azp": "switchboard", "nonce": "abc"}}},
		{name: "Keycloak ID token with at_hash", tok: issuer.Token{Type: "JWT", Extra: map[string]any{"typ": "ID", "at_hash": "h"}}},
		{name: "Entra v2 delegated", tok: issuer.Token{Type: "JWT", Extra: map[string]any{
			"ver": "2.0", "scp": "mcp.tools User.Read", "tid": "t", "oid": "o", "azp": "c", "azpacr": "0"}},
			scopes: []string{"mcp.tools", "User.Read"}},
		{name: "Entra v2 application", tok: issuer.Token{Type: "JWT", Extra: map[string]any{
			"ver": "2.0", "roles": []string{"Tools.Call"}, "tid": "t", "oid": "o", "azp": "c"}},
			scopes: []string{"Tools.Call"}},
		{name: "Entra ID token", tok: issuer.Token{Type: "JWT", Extra: map[string]any{"ver": "2.0", "nonce": "n", "c_hash": "h", "tid": "t"}}},
		{name: "Auth0 access token", tok: issuer.Token{Type: "JWT", Scope: "read:tools", Extra: map[string]any{"azp": "c", "gty": "client-credentials"}},
			scopes: []string{"read:tools"}},
		{name: "Auth0 RFC 9068 profile", tok: issuer.Token{Type: "at+jwt", Scope: "read:tools", Extra: map[string]any{"client_id": "c"}},
			scopes: []string{"read:tools"}, atJWT: true},
		{name: "Okta access token", tok: issuer.Token{NoType: true, Extra: map[string]any{"ver": 1, "cid": "c", "uid": "u", "scp": []string{"openid", "mcp"}}},
			scopes: []string{"openid", "mcp"}},
		{name: "Okta ID token", tok: issuer.Token{NoType: true, Extra: map[string]any{"ver": 1, "amr": []string{"pwd"}, "nonce": "n", "at_hash": "h"}}},
	}
	plain := newVerifier(t, is, jwtauth.Options{})
	strict := newVerifier(t, is, jwtauth.Options{RequireAccessTokenType: true})
	scoped := newVerifier(t, is, jwtauth.Options{RequireScopeClaim: true})
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			sh.tok.Audience = []string{aud}
			raw := is.Mint(t, sh.tok)
			c, err := plain.Verify(context.Background(), raw)
			switch {
			case sh.scopes == nil && err == nil:
				t.Fatalf("accepted, want refused (claims %v)", c.Raw)
			case sh.scopes == nil:
				if !errors.Is(err, jwtauth.ErrInvalid) || !strings.Contains(err.Error(), "not an access token") {
					t.Fatalf("Verify = %v, want not an access token", err)
				}
				return
			case err != nil:
				t.Fatalf("Verify: %v", err)
			case !slices.Equal(c.Scopes, sh.scopes):
				t.Fatalf("scopes %v, want %v", c.Scopes, sh.scopes)
			}
			if _, err := strict.Verify(context.Background(), raw); (err == nil) != sh.atJWT {
				t.Errorf("RequireAccessTokenType: Verify = %v, want accepted %v", err, sh.atJWT)
			}
			if _, err := scoped.Verify(context.Background(), raw); err != nil {
				t.Errorf("RequireScopeClaim: %v", err)
			}
		})
	}
	noScope := is.Mint(t, issuer.Token{Audience: []string{aud}, Type: "JWT"})
	if _, err := plain.Verify(context.Background(), noScope); err != nil {
		t.Errorf("no scope claim, none required: %v", err)
	}
	if _, err := scoped.Verify(context.Background(), noScope); err == nil || !strings.Contains(err.Error(), "no scope") {
		t.Errorf("no scope claim under RequireScopeClaim: Verify = %v, want refused", err)
	}
}

// TestRefetchOnUnknownKey: a token under a key the cache does not hold
// makes the set be fetched again, at most once per MinRefresh.
func TestRefetchOnUnknownKey(t *testing.T) {
	is := issuer.New(t)
	now := time.Now()
	clock := func() time.Time { return now }
	v := newVerifier(t, is, jwtauth.Options{MinRefresh: time.Minute, Now: clock})
	if got := is.KeyFetches.Load(); got != 1 {
		t.Fatalf("fetches after New = %d, want 1", got)
	}
	is.Rotate(t)
	tok := is.Mint(t, issuer.Token{Audience: []string{aud}, KeyID: issuer.RotatedKeyID, TTL: 24 * time.Hour})
	// Within MinRefresh of the first load: refused without a fetch.
	if _, err := v.Verify(context.Background(), tok); err == nil {
		t.Fatal("rotated key accepted before the set was fetched again")
	}
	if got := is.KeyFetches.Load(); got != 1 {
		t.Fatalf("fetches = %d, want 1 (rate limited)", got)
	}
	now = now.Add(2 * time.Minute)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("rotated key after refresh: %v", err)
	}
	for range 5 {
		bad := is.Mint(t, issuer.Token{Audience: []string{aud}, KeyID: "forged", Foreign: true, TTL: 24 * time.Hour})
		if _, err := v.Verify(context.Background(), bad); err == nil {
			t.Fatal("forged key accepted")
		}
	}
	if got := is.KeyFetches.Load(); got != 2 {
		t.Fatalf("fetches = %d, want 2: forged key IDs must not each fetch", got)
	}
}

// TestCancelledFetchNotCounted: a key-set fetch ended by the caller's own
// cancelled context does not count against MinRefresh: the next caller
// fetches the set.
func TestCancelledFetchNotCounted(t *testing.T) {
	is := issuer.New(t)
	now := time.Now()
	clock := func() time.Time { return now }
	v := newVerifier(t, is, jwtauth.Options{MinRefresh: time.Minute, Now: clock})
	now = now.Add(2 * time.Minute)
	is.Rotate(t)
	tok := is.Mint(t, issuer.Token{Audience: []string{aud}, KeyID: issuer.RotatedKeyID, TTL: 24 * time.Hour})
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.Verify(gone, tok); err == nil {
		t.Fatal("verified with a cancelled context and an unknown key")
	}
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("after a cancelled fetch: %v", err)
	}
}

func TestKeySetFromFileAndURL(t *testing.T) {
	is := issuer.New(t)
	b, err := json.Marshal(is.KeySet())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	tok := is.Mint(t, issuer.Token{Audience: []string{aud}})
	for _, src := range []string{path, is.URL + "/jwks.json"} {
		v := newVerifier(t, is, jwtauth.Options{JWKS: src})
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Errorf("key set %s: %v", src, err)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	is := issuer.New(t)
	tests := []struct {
		name string
		opts jwtauth.Options
		want string
	}{
		{"no issuer", jwtauth.Options{Audience: aud}, "issuer"},
		{"http issuer off loopback", jwtauth.Options{Issuer: "http://example.com", Audience: aud}, "loopback"},
		{"no audience", jwtauth.Options{Issuer: is.URL}, "audience"},
		{"missing file", jwtauth.Options{Issuer: is.URL, Audience: aud, JWKS: filepath.Join(t.TempDir(), "none.json")}, "key set"},
		{"no metadata", jwtauth.Options{Issuer: is.URL + "/tenant", Audience: aud}, "metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jwtauth.New(context.Background(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, want an error about %q", err, tt.want)
			}
		})
	}
}

// FuzzVerify: no input makes Verify panic, and none is accepted without
// the issuer's signature.
func FuzzVerify(f *testing.F) {
	is := issuer.New(f)
	v, err := jwtauth.New(context.Background(), jwtauth.Options{Issuer: is.URL, Audience: aud, MinRefresh: time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(is.Mint(f, issuer.Token{Audience: []string{aud}, Foreign: true}))
	f.Add(is.Mint(f, issuer.Token{Audience: []string{aud}, KeyID: "x", Foreign: true}))
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")
	f.Add("a.b.c")
	f.Add("")
	f.Fuzz(func(t *testing.T, tok string) {
		if _, err := v.Verify(context.Background(), tok); err == nil {
			t.Fatalf("accepted %q", tok)
		}
	})
}
