package config

import (
	"strings"
	"testing"
)

// TestOAuthBlock: the "oauth" block is strict (unknown fields named with a
// suggestion), its secret comes from the environment and never shows in
// the redacted view, and it is only for Streamable HTTP servers.
func TestOAuthBlock(t *testing.T) {
	env := map[string]string{"GH_SECRET": "s3cret-value"}
	lookup := func(n string) (string, bool) { v, ok := env[n]; return v, ok }
	tests := []struct {
		name     string
		oauth    string
		stdio    bool
		sse      bool
		want     OAuth
		unusable string
		err      string
	}{
		{name: "pre-registered", oauth: `{"clientId": "abc", "clientSecretEnv": "GH_SECRET", "scopes": ["repo", "read:org"], "issuer": "https://auth.example.com"}`,
			want: OAuth{ClientID: "abc", ClientSecretEnv: "GH_SECRET", ClientSecret: "s3cret-value", Scopes: []string{"repo", "read:org"}, Grant: GrantAuthorizationCode, Issuer: "https://auth.example.com"}},
		{name: "public client", oauth: `{"clientId": "abc"}`, want: OAuth{ClientID: "abc", Grant: GrantAuthorizationCode}},
		{name: "metadata document", oauth: `{"clientMetadataUrl": "https://example.com/client.json", "issuer": "https://auth.example.com"}`,
			want: OAuth{ClientMetadataURL: "https://example.com/client.json", Issuer: "https://auth.example.com", Grant: GrantAuthorizationCode}},
		{name: "typo", oauth: `{"clientID": "abc"}`, err: `unknown field "clientID" (did you mean "clientId"?)`},
		{name: "inline secret", oauth: `{"clientId": "abc", "clientSecret": "x"}`, err: `a secret is never written in the configuration`},
		{name: "secret without client", oauth: `{"clientSecretEnv": "GH_SECRET"}`, err: `a secret needs the client it belongs to`},
		{name: "bad env name", oauth: `{"clientId": "a", "clientSecretEnv": "1X"}`, err: `invalid environment variable name "1X"`},
		{name: "missing env", oauth: `{"clientId": "a", "clientSecretEnv": "NOPE", "issuer": "https://auth.example.com"}`, unusable: `${NOPE} is not set (oauth.clientSecretEnv)`},
		{name: "bad scope", oauth: `{"scopes": ["a b"]}`, err: `invalid scope "a b"`},
		{name: "http metadata URL", oauth: `{"clientMetadataUrl": "http://example.com/c.json"}`, err: `want an https URL with a path`},
		{name: "root metadata URL", oauth: `{"clientMetadataUrl": "https://example.com/"}`, err: `want an https URL with a path`},
		{name: "not an object", oauth: `"abc"`, err: `want object`},
		{name: "client credentials", oauth: `{"grant": "client_credentials", "clientId": "m", "privateKeyEnv": "GH_SECRET", "issuer": "https://auth.example.com"}`,
			want: OAuth{ClientID: "m", Grant: GrantClientCredentials, PrivateKeyEnv: "GH_SECRET", PrivateKey: "s3cret-value", Issuer: "https://auth.example.com"}},
		{name: "client credentials without client", oauth: `{"grant": "client_credentials", "clientSecretEnv": "GH_SECRET"}`, err: `a secret needs the client`},
		{name: "client credentials without secret", oauth: `{"grant": "client_credentials", "clientId": "m"}`, err: `needs one of "clientSecretEnv" and "privateKeyEnv"`},
		{name: "key without grant", oauth: `{"clientId": "m", "privateKeyEnv": "GH_SECRET"}`, err: `set "grant": "client_credentials"`},
		{name: "workload identity", oauth: `{"grant": "jwt_bearer", "clientId": "w", "assertionEnv": "GH_SECRET", "issuer": "https://auth.example.com"}`,
			want: OAuth{ClientID: "w", Grant: GrantJWTBearer, AssertionEnv: "GH_SECRET", Assertion: "s3cret-value", Issuer: "https://auth.example.com"}},
		{name: "workload identity file", oauth: `{"grant": "jwt_bearer", "assertionFile": "/var/run/token", "issuer": "https://auth.example.com"}`,
			want: OAuth{Grant: GrantJWTBearer, AssertionFile: "/var/run/token", Issuer: "https://auth.example.com"}},
		{name: "workload identity without token", oauth: `{"grant": "jwt_bearer"}`, err: `needs one of "assertionFile" and "assertionEnv"`},
		{name: "token without grant", oauth: `{"assertionFile": "/t"}`, err: `an identity token is for the jwt_bearer or enterprise grant`},
		{name: "enterprise", oauth: `{"grant": "enterprise", "clientId": "c", "clientSecretEnv": "GH_SECRET", "idpTokenUrl": "https://idp.example/token", "idpClientId": "i", "assertionFile": "/t", "issuer": "https://auth.example.com"}`,
			want: OAuth{ClientID: "c", ClientSecretEnv: "GH_SECRET", ClientSecret: "s3cret-value", Grant: GrantEnterprise, AssertionFile: "/t", IdPTokenURL: "https://idp.example/token", IdPClientID: "i", Issuer: "https://auth.example.com"}},
		{name: "enterprise without IdP", oauth: `{"grant": "enterprise", "clientId": "c", "assertionFile": "/t"}`, err: `needs "idpTokenUrl" and "idpClientId"`},
		{name: "IdP without enterprise", oauth: `{"clientId": "c", "idpClientId": "i"}`, err: `the enterprise grant, and only it`},
		{name: "secret without issuer", oauth: `{"clientId": "a", "clientSecretEnv": "GH_SECRET"}`, err: `oauth.clientSecretEnv: a credential goes only to the authorization server it belongs to: set "issuer"`},
		{name: "key without issuer", oauth: `{"grant": "client_credentials", "clientId": "m", "privateKeyEnv": "GH_SECRET"}`, err: `oauth.privateKeyEnv: a credential goes only`},
		{name: "token file without issuer", oauth: `{"grant": "jwt_bearer", "assertionFile": "/t"}`, err: `oauth.assertionFile: a credential goes only`},
		{name: "token env without issuer", oauth: `{"grant": "jwt_bearer", "assertionEnv": "GH_SECRET"}`, err: `oauth.assertionEnv: a credential goes only`},
		{name: "unknown grant", oauth: `{"grant": "password"}`, err: `unknown grant "password"`},
		{name: "per caller", oauth: `{"perCaller": true}`, want: OAuth{PerCaller: true, Grant: GrantAuthorizationCode}},
		{name: "per caller report", oauth: `{"perCaller": "report"}`, want: OAuth{PerCallerReport: true, Grant: GrantAuthorizationCode}},
		{name: "per caller word", oauth: `{"perCaller": "yes"}`, err: `oauth.perCaller: want true, false or "report", not "yes"`},
		{name: "token exchange", oauth: `{"perCaller": true, "tokenExchange": true, "clientId": "gw", "clientSecretEnv": "GH_SECRET", "issuer": "https://auth.example.com"}`,
			want: OAuth{PerCaller: true, TokenExchange: true, ClientID: "gw", ClientSecretEnv: "GH_SECRET", ClientSecret: "s3cret-value", Grant: GrantAuthorizationCode, Issuer: "https://auth.example.com"}},
		{name: "per caller machine", oauth: `{"perCaller": true, "grant": "client_credentials", "clientId": "m", "clientSecretEnv": "GH_SECRET", "issuer": "https://auth.example.com"}`, err: `oauth.perCaller: each caller's own grant is a person's login`},
		{name: "exchange alone", oauth: `{"tokenExchange": true, "clientId": "gw", "issuer": "https://auth.example.com"}`, err: `oauth.tokenExchange: token exchange makes a grant per caller`},
		{name: "exchange without client", oauth: `{"perCaller": true, "tokenExchange": true, "issuer": "https://auth.example.com"}`, err: `set "clientId"`},
		{name: "exchange without issuer", oauth: `{"perCaller": true, "tokenExchange": true, "clientId": "gw"}`, err: `oauth.tokenExchange: a credential goes only`},
		{name: "exchange with an actor", oauth: `{"perCaller": true, "tokenExchange": true, "actorToken": "client_credentials", "clientId": "gw", "clientSecretEnv": "GH_SECRET", "issuer": "https://auth.example.com"}`,
			want: OAuth{PerCaller: true, TokenExchange: true, ActorToken: ActorClientCredentials, ClientID: "gw", ClientSecretEnv: "GH_SECRET", ClientSecret: "s3cret-value", Grant: GrantAuthorizationCode, Issuer: "https://auth.example.com"}},
		{name: "actor without exchange", oauth: `{"perCaller": true, "actorToken": "client_credentials", "clientId": "gw", "clientSecretEnv": "GH_SECRET", "issuer": "https://auth.example.com"}`,
			err: `oauth.actorToken: an actor token is sent with a token exchange: set "tokenExchange": true`},
		{name: "actor without secret", oauth: `{"perCaller": true, "tokenExchange": true, "actorToken": "client_credentials", "clientId": "gw", "issuer": "https://auth.example.com"}`,
			err: `oauth.actorToken: the actor token is the client's own, from the client_credentials grant: set "clientSecretEnv"`},
		{name: "unknown actor", oauth: `{"perCaller": true, "tokenExchange": true, "actorToken": "self", "clientId": "gw", "clientSecretEnv": "GH_SECRET", "issuer": "https://auth.example.com"}`,
			err: `oauth.actorToken: unknown actor token "self": want "client_credentials"`},
		{name: "actor not a string", oauth: `{"perCaller": true, "tokenExchange": true, "actorToken": true, "clientId": "gw", "clientSecretEnv": "GH_SECRET", "issuer": "https://auth.example.com"}`,
			err: `oauth.actorToken: want string`},
		{name: "stdio", oauth: `{"clientId": "a"}`, stdio: true, err: `"oauth" is only for Streamable HTTP servers`},
		{name: "sse", oauth: `{"clientId": "a"}`, sse: true, err: `"oauth" is only for Streamable HTTP servers`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			where := `"url": "https://h.example/mcp"`
			if tt.stdio {
				where = `"command": "x"`
			}
			if tt.sse {
				where = `"type": "sse", "url": "https://h.example/sse"`
			}
			src := `{"mcpServers": {"gh": {` + where + `, "oauth": ` + tt.oauth + `}}}`
			cfg, err := Parse([]byte(src), "t.json", &LoadOptions{LookupEnv: lookup})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := cfg.Server("gh")
			if tt.unusable != "" {
				if s.Unusable == nil || !strings.Contains(s.Unusable.Error(), tt.unusable) {
					t.Fatalf("Unusable = %v, want %q", s.Unusable, tt.unusable)
				}
				return
			}
			if s.OAuth == nil {
				t.Fatal("no OAuth")
			}
			got := *s.OAuth
			if got.ClientID != tt.want.ClientID || got.ClientSecret != tt.want.ClientSecret || got.ClientSecretEnv != tt.want.ClientSecretEnv ||
				strings.Join(got.Scopes, " ") != strings.Join(tt.want.Scopes, " ") || got.ClientMetadataURL != tt.want.ClientMetadataURL || got.Issuer != tt.want.Issuer ||
				got.Grant != tt.want.Grant || got.PrivateKey != tt.want.PrivateKey || got.PrivateKeyEnv != tt.want.PrivateKeyEnv ||
				got.Assertion != tt.want.Assertion || got.AssertionFile != tt.want.AssertionFile || got.AssertionEnv != tt.want.AssertionEnv ||
				got.IdPTokenURL != tt.want.IdPTokenURL || got.IdPClientID != tt.want.IdPClientID {
				t.Fatalf("OAuth = %+v, want %+v", got, tt.want)
			}
			if r := s.Redacted(); r.OAuth.ClientSecret != "" || r.OAuth.PrivateKey != "" || r.OAuth.Assertion != "" {
				t.Fatal("the redacted view shows the secret")
			}
			if s.OAuth.ClientSecret != tt.want.ClientSecret {
				t.Fatal("Redacted changed the server")
			}
		})
	}
}
