package oauth_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestExchangeActor: a token exchange sends the gateway's own token (the
// client_credentials grant as the configured client, reused while it
// lives) as the actor_token when "actorToken" says so, and the token
// issued names the gateway in its "act" claim; without it no actor_token
// is sent and the token has no "act". Connections given one ActorTokens
// share the gateway's token.
func TestExchangeActor(t *testing.T) {
	for _, tc := range []struct {
		name, actor string // actor: "actorToken"'s JSON, "" for none
		want        string // whom the exchanges' act names
		shared      bool   // the connections share one ActorTokens
		requests    int    // token requests for two callers
	}{
		{"without an actor", "", "", false, 2},
		{"with the gateway as the actor", `"client_credentials"`, "client:gw", false, 4},
		{"with the gateway's one token as the actor", `"client_credentials"`, "client:gw", true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := oauthtest.Start(t, &oauthtest.Options{ClientCredentials: true, TokenExchange: func(st string) (string, bool) {
				user, ok := strings.CutPrefix(st, "jwt-of-")
				return "x-" + user, ok
			}})
			as.AddClient("gw")
			actor := ""
			if tc.actor != "" {
				actor = `, "actorToken": ` + tc.actor
			}
			src := `{"mcpServers":{"gh":{"url":"` + as.MCP + `","trust":"trusted","oauth":{"perCaller":true,"tokenExchange":true,"clientId":"gw","clientSecretEnv":"S","issuer":"` + as.Issuer + `"` + actor + `}}}}`
			cfg, err := config.Parse([]byte(src), "t.json", &config.LoadOptions{LookupEnv: func(string) (string, bool) { return "gw-secret", true }})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var shared *oauth.ActorTokens
			if tc.shared {
				shared = &oauth.ActorTokens{}
			}
			for _, who := range []string{"ann", "bob"} {
				c, err := upstream.Dial(ctx, cfg.Servers[0], &upstream.Options{OAuth: &oauth.Config{
					SubjectToken: func() (string, error) { return "jwt-of-" + who, nil },
					ActorTokens:  shared,
				}})
				if err != nil {
					t.Fatalf("%s's dial: %v", who, err)
				}
				c.Close()
			}
			actors := as.Actors()
			if len(actors) != 2 || actors[0] != tc.want || actors[1] != tc.want {
				t.Fatalf("the exchanges' actors: %q; want %q twice", actors, tc.want)
			}
			if n := as.Count("token"); n != tc.requests {
				t.Errorf("%d token requests; want %d", n, tc.requests)
			}
			exchanged := 0
			for _, tok := range as.Issued() {
				c := claims(t, tok)
				if !strings.HasPrefix(c.Sub, "x-") {
					continue
				}
				exchanged++
				if c.Act.Sub != tc.want {
					t.Errorf("the token issued to %s names the actor %q; want %q", c.Sub, c.Act.Sub, tc.want)
				}
			}
			if exchanged != 2 {
				t.Fatalf("%d exchanged tokens issued; want 2", exchanged)
			}
		})
	}
}

// claims are a token's claims that the test reads, unverified.
type tokenClaims struct {
	Sub string `json:"sub"`
	Act struct {
		Sub string `json:"sub"`
	} `json:"act"`
}

func claims(t *testing.T, tok string) tokenClaims {
	t.Helper()
	var c tokenClaims
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return c // a refresh token
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(body, &c) != nil {
		t.Fatalf("token %q does not decode", tok)
	}
	return c
}
