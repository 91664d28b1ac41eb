package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGatewayParse: "gateway.oauth" is decoded strictly: unknown keys,
// wrong types, an issuer without an audience, an issuer that is neither
// https nor on a loopback host are errors at their JSON path.
func TestGatewayParse(t *testing.T) {
	const servers = `"mcpServers": {"a": {"command": "x"}}`
	env := fakeEnv{"ISSUER": "https://auth.example", "PLAIN": "http://auth.example", "EMPTY": ""}
	tests := []struct {
		name, gateway string
		want          *GatewayOAuth
		wantErr       string // in the error; "" for none
	}{
		{"absent", ``, nil, ""},
		{"empty object", `"gateway": {}`, nil, ""},
		{"everything", `"gateway": {"oauth": {"issuer": "https://auth.example/t", "audience": "https://gw.example/mcp", "jwks": "https://auth.example/jwks.json", "scopes": ["mcp", "read"]}}`,
			&GatewayOAuth{Issuer: "https://auth.example/t", Audience: "https://gw.example/mcp", JWKS: "https://auth.example/jwks.json", Scopes: []string{"mcp", "read"}}, ""},
		{"issuer and audience", `"gateway": {"oauth": {"issuer": "https://auth.example", "audience": "gw"}}`,
			&GatewayOAuth{Issuer: "https://auth.example", Audience: "gw"}, ""},
		{"loopback http", `"gateway": {"oauth": {"issuer": "http://127.0.0.1:9000", "audience": "gw", "jwks": "http://localhost:9000/k"}}`,
			&GatewayOAuth{Issuer: "http://127.0.0.1:9000", Audience: "gw", JWKS: "http://localhost:9000/k"}, ""},
		{"key set file", `"gateway": {"oauth": {"issuer": "https://auth.example", "audience": "gw", "jwks": "/etc/switchboard/jwks.json"}}`,
			&GatewayOAuth{Issuer: "https://auth.example", Audience: "gw", JWKS: "/etc/switchboard/jwks.json"}, ""},
		{"from the environment", `"gateway": {"oauth": {"issuer": "${ISSUER}", "audience": "${AUD:-https://gw.example/mcp}"}}`,
			&GatewayOAuth{Issuer: "https://auth.example", Audience: "https://gw.example/mcp"}, ""},
		{"empty scopes", `"gateway": {"oauth": {"issuer": "https://auth.example", "audience": "gw", "scopes": []}}`,
			&GatewayOAuth{Issuer: "https://auth.example", Audience: "gw"}, ""},
		{"at+jwt required", `"gateway": {"oauth": {"issuer": "https://auth.example", "audience": "gw", "requireAtJwt": true}}`,
			&GatewayOAuth{Issuer: "https://auth.example", Audience: "gw", RequireAtJWT: true}, ""},
		{"requireAtJwt not a boolean", `"gateway": {"oauth": {"issuer": "https://auth.example", "audience": "gw", "requireAtJwt": "yes"}}`, nil,
			`$.gateway.oauth.requireAtJwt: want boolean, got string`},

		{"gateway not an object", `"gateway": []`, nil, `$.gateway: want object, got array`},
		{"unknown gateway field", `"gateway": {"oath": {}}`, nil, `$.gateway.oath: unknown field "oath" (did you mean "oauth"?)`},
		{"oauth not an object", `"gateway": {"oauth": "https://auth.example"}`, nil, `$.gateway.oauth: want object, got string`},
		{"unknown oauth field", `"gateway": {"oauth": {"issuer": "https://auth.example", "audience": "gw", "audiences": ["x"]}}`, nil,
			`$.gateway.oauth.audiences: unknown field "audiences" (did you mean "audience"?)`},
		{"issuer without audience", `"gateway": {"oauth": {"issuer": "https://auth.example"}}`, nil,
			`$.gateway.oauth: "issuer" and "audience" go together`},
		{"audience without issuer", `"gateway": {"oauth": {"audience": "gw", "scopes": ["mcp"]}}`, nil,
			`$.gateway.oauth: "issuer" and "audience" go together`},
		{"empty oauth", `"gateway": {"oauth": {}}`, nil, `$.gateway.oauth: "issuer" and "audience" go together`},
		{"http issuer", `"gateway": {"oauth": {"issuer": "http://auth.example", "audience": "gw"}}`, nil,
			`$.gateway.oauth.issuer: http is allowed only on a loopback host`},
		{"http issuer from the environment", `"gateway": {"oauth": {"issuer": "${PLAIN}", "audience": "gw"}}`, nil,
			`$.gateway.oauth.issuer: after expansion, http is allowed only on a loopback host`},
		{"issuer not a URL", `"gateway": {"oauth": {"issuer": "auth.example", "audience": "gw"}}`, nil,
			`$.gateway.oauth.issuer: want an absolute URL`},
		{"issuer not http", `"gateway": {"oauth": {"issuer": "ftp://auth.example", "audience": "gw"}}`, nil,
			`$.gateway.oauth.issuer: want an https URL`},
		{"issuer not set", `"gateway": {"oauth": {"issuer": "${UNSET}", "audience": "gw"}}`, nil,
			`$.gateway.oauth.issuer: environment variable "UNSET" is not set`},
		{"issuer not a string", `"gateway": {"oauth": {"issuer": 1, "audience": "gw"}}`, nil,
			`$.gateway.oauth.issuer: want string, got number`},
		{"empty audience", `"gateway": {"oauth": {"issuer": "https://auth.example", "audience": "${EMPTY}"}}`, nil,
			`$.gateway.oauth.audience: after expansion, must not be empty`},
		{"http key set", `"gateway": {"oauth": {"issuer": "https://auth.example", "audience": "gw", "jwks": "http://auth.example/k"}}`, nil,
			`$.gateway.oauth.jwks: http is allowed only on a loopback host`},
		{"relative key set file", `"gateway": {"oauth": {"issuer": "https://auth.example", "audience": "gw", "jwks": "jwks.json"}}`, nil,
			`$.gateway.oauth.jwks: want an https URL or an absolute file path`},
		{"scopes not an array", `"gateway": {"oauth": {"issuer": "https://auth.example", "audience": "gw", "scopes": "mcp"}}`, nil,
			`$.gateway.oauth.scopes: want array of strings, got string`},
		{"scope with a space", `"gateway": {"oauth": {"issuer": "https://auth.example", "audience": "gw", "scopes": ["mcp", "a b"]}}`, nil,
			`$.gateway.oauth.scopes[1]: want a scope`},
		{"empty scope", `"gateway": {"oauth": {"issuer": "https://auth.example", "audience": "gw", "scopes": [""]}}`, nil,
			`$.gateway.oauth.scopes[0]: want a scope`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "{" + servers + "}"
			if tt.gateway != "" {
				src = "{" + tt.gateway + ", " + servers + "}"
			}
			cfg, err := Parse([]byte(src), testFile, env.opts())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), testFile+": "+tt.wantErr) {
					t.Fatalf("Parse error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg.Gateway.OAuth); diff != "" {
				t.Errorf("Gateway.OAuth (-want +got):\n%s", diff)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// TestGatewayProjectFile: a project file holds servers only, not the
// gateway's settings.
func TestGatewayProjectFile(t *testing.T) {
	_, err := parseAs([]byte(`{"mcpServers": {}, "gateway": {"oauth": {"issuer": "https://a.example", "audience": "gw"}}}`), testFile, fakeEnv{}.lookup, true)
	if err == nil || !strings.Contains(err.Error(), `$.gateway: "gateway" is not read from a project file`) {
		t.Fatalf("parse as a project file = %v, want a $.gateway error", err)
	}
}

// TestGatewayValidate: a hand-built Config's gateway settings are checked
// too.
func TestGatewayValidate(t *testing.T) {
	tests := []struct {
		name string
		o    GatewayOAuth
		want string
	}{
		{"http issuer", GatewayOAuth{Issuer: "http://auth.example", Audience: "gw"}, "$.gateway.oauth.issuer: http is allowed only on a loopback host"},
		{"no audience", GatewayOAuth{Issuer: "https://auth.example"}, "$.gateway.oauth.audience: must not be empty"},
		{"relative key set", GatewayOAuth{Issuer: "https://auth.example", Audience: "gw", JWKS: "k.json"}, "$.gateway.oauth.jwks: want an https URL or an absolute file path"},
		{"bad scope", GatewayOAuth{Issuer: "https://auth.example", Audience: "gw", Scopes: []string{"a,b"}}, "$.gateway.oauth.scopes[0]: want a scope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &Config{Source: testFile, Gateway: Gateway{OAuth: &tt.o}}
			if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
	ok := &Config{Source: testFile, Gateway: Gateway{OAuth: &GatewayOAuth{Issuer: "https://auth.example", Audience: "gw", JWKS: "/k.json", Scopes: []string{"mcp"}}}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("Validate of good settings: %v", err)
	}
}

// TestGatewayPublicURL: "gateway.publicUrl" is an absolute https URL
// (http on a loopback host), with ${VAR} references expanded; anything
// else is an error at its JSON path, both when parsed and when a
// hand-built Config is validated.
func TestGatewayPublicURL(t *testing.T) {
	const servers = `"mcpServers": {"a": {"command": "x"}}`
	env := fakeEnv{"GW": "https://gw.example.com", "PLAIN": "http://gw.example.com"}
	tests := []struct {
		name, value string // value: the JSON of "publicUrl"
		want        string
		wantErr     string // after "$.gateway.publicUrl: "; "" for none
	}{
		{"https", `"https://gw.example.com"`, "https://gw.example.com", ""},
		{"under a path", `"https://gw.example.com/switchboard/"`, "https://gw.example.com/switchboard/", ""},
		{"loopback http", `"http://127.0.0.1:8939"`, "http://127.0.0.1:8939", ""},
		{"localhost http", `"http://localhost:8939"`, "http://localhost:8939", ""},
		{"IPv6 loopback http", `"http://[::1]:8939"`, "http://[::1]:8939", ""},
		{"from the environment", `"${GW}"`, "https://gw.example.com", ""},
		{"http elsewhere", `"http://gw.example.com"`, "", "http is allowed only on a loopback host"},
		{"http from the environment", `"${PLAIN}"`, "", "after expansion, http is allowed only on a loopback host"},
		{"no scheme", `"gw.example.com"`, "", "want an absolute https URL"},
		{"not http", `"ftp://gw.example.com"`, "", "want an absolute https URL"},
		{"no host", `"https://"`, "", "want an absolute https URL"},
		{"a query", `"https://gw.example.com/?x=1"`, "", "a user, query or fragment has no place in it"},
		{"a fragment", `"https://gw.example.com/#x"`, "", "a user, query or fragment"},
		{"a user", `"https://ann@gw.example.com"`, "", "a user, query or fragment"},
		{"empty", `""`, "", "want an absolute https URL"},
		{"unset variable", `"${UNSET}"`, "", `environment variable "UNSET" is not set`},
		{"not a string", `8939`, "", "want string, got number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := `{"gateway": {"publicUrl": ` + tt.value + `}, ` + servers + `}`
			cfg, err := Parse([]byte(src), testFile, env.opts())
			if tt.wantErr != "" {
				if want := testFile + ": $.gateway.publicUrl: " + tt.wantErr; err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("Parse error = %v, want one containing %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Gateway.PublicURL != tt.want {
				t.Errorf("PublicURL = %q, want %q", cfg.Gateway.PublicURL, tt.want)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
	for _, bad := range []string{"http://gw.example.com", "gw.example.com", "https://gw.example.com/?x"} {
		cfg := &Config{Source: testFile, Gateway: Gateway{PublicURL: bad}}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "$.gateway.publicUrl: ") {
			t.Errorf("Validate of %q = %v, want a $.gateway.publicUrl error", bad, err)
		}
	}
}

// TestGatewayOAuthEqual: Equal compares every field, and nil with nil.
func TestGatewayOAuthEqual(t *testing.T) {
	base := GatewayOAuth{Issuer: "https://a.example", Audience: "gw", JWKS: "/k", Scopes: []string{"mcp"}}
	mod := func(f func(*GatewayOAuth)) *GatewayOAuth {
		o := base
		o.Scopes = append([]string{}, base.Scopes...)
		f(&o)
		return &o
	}
	tests := []struct {
		name string
		a, b *GatewayOAuth
		want bool
	}{
		{"nil nil", nil, nil, true},
		{"nil set", nil, &base, false},
		{"set nil", &base, nil, false},
		{"same", &base, mod(func(*GatewayOAuth) {}), true},
		{"issuer", &base, mod(func(o *GatewayOAuth) { o.Issuer = "https://b.example" }), false},
		{"audience", &base, mod(func(o *GatewayOAuth) { o.Audience = "x" }), false},
		{"jwks", &base, mod(func(o *GatewayOAuth) { o.JWKS = "" }), false},
		{"scopes", &base, mod(func(o *GatewayOAuth) { o.Scopes = append(o.Scopes, "x") }), false},
	}
	for _, tt := range tests {
		if got := tt.a.Equal(tt.b); got != tt.want {
			t.Errorf("%s: Equal = %t, want %t", tt.name, got, tt.want)
		}
	}
}
