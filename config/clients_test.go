package config

import (
	"strings"
	"testing"
)

const identBase = `"mcpServers": {"demo": {"command": "demo"}, "gh": {"url": "https://gh.example/mcp"}}`

func TestClientsAndProfiles(t *testing.T) {
	src := `{` + identBase + `,
		"profiles": {
			"readonly": {"servers": ["demo"], "tools": ["demo:get_*", "demo:echo"], "exclude": ["demo:get_secret"]},
			"all": {}
		},
		"clients": {
			"ci": {"tokenEnv": "CI_TOKEN", "profiles": ["readonly"]},
			"alice": {"token": "${cred:alice}"},
			"bot": {"subject": "svc-1", "claims": {"azp": "bot-app"}},
			"late": {"tokenEnv": "UNSET_TOKEN"}
		},
		"policy": {"rules": [{"deny": "gh:*", "clients": ["ci"], "profiles": ["readonly"]}]}
	}`
	env := fakeEnv{"CI_TOKEN": "ci-token-0123456789"}
	opts := env.opts()
	opts.LookupCred = fakeEnv{"alice": "alice-token-0123456789"}.lookup
	cfg, err := Parse([]byte(src), testFile, opts)
	if err != nil {
		t.Fatal(err)
	}
	ci, alice, bot, late := cfg.Client("ci"), cfg.Client("alice"), cfg.Client("bot"), cfg.Client("late")
	if ci == nil || ci.Token != "ci-token-0123456789" || !ci.MayUse("readonly") || ci.MayUse("all") || ci.MayUse("") {
		t.Fatalf("ci = %+v", ci)
	}
	if alice == nil || alice.Token != "alice-token-0123456789" || !alice.MayUse("") || !alice.MayUse("all") {
		t.Fatalf("alice = %+v", alice)
	}
	if late == nil || late.Token != "" || !strings.Contains(late.Unusable, "UNSET_TOKEN") {
		t.Fatalf("late = %+v, want unusable naming the variable", late)
	}
	claims := []struct {
		sub    string
		claims map[string]any
		want   bool
	}{
		{"svc-1", map[string]any{"azp": "bot-app"}, true},
		{"svc-1", map[string]any{"azp": []any{"x", "bot-app"}}, true},
		{"svc-2", map[string]any{"azp": "bot-app"}, false},
		{"svc-1", map[string]any{"azp": "other"}, false},
		{"svc-1", map[string]any{}, false},
	}
	for _, c := range claims {
		if got := bot.MatchesClaims(c.sub, c.claims); got != c.want {
			t.Errorf("bot.MatchesClaims(%q, %v) = %v, want %v", c.sub, c.claims, got, c.want)
		}
	}
	if ci.MatchesClaims("svc-1", map[string]any{"azp": "bot-app"}) {
		t.Error("a token-only client matched a JWT")
	}
	ro := cfg.Profile("readonly")
	tools := []struct {
		server, id string
		want       bool
	}{
		{"demo", "demo:echo", true},
		{"demo", "demo:get_time", true},
		{"demo", "demo:get_secret", false},
		{"demo", "demo:add", false},
		{"gh", "gh:get_issue", false},
		{"", "tool_search", false},
	}
	for _, tt := range tools {
		if got := ro.HasTool(tt.server, tt.id); got != tt.want {
			t.Errorf("readonly.HasTool(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
	if all := cfg.Profile("all"); !all.HasTool("gh", "gh:x") || !all.HasTool("", "tool_search") || !all.HasServer("gh") {
		t.Error("an empty profile must hold everything")
	}
	if r := cfg.Policy.Rules[0]; len(r.Clients) != 1 || r.Clients[0] != "ci" || r.Profiles[0] != "readonly" {
		t.Fatalf("rule = %+v", r)
	}
	if s := ci.String() + ci.GoString(); strings.Contains(s, "ci-token") {
		t.Fatalf("client printed its token: %s", s)
	}
}

func TestClientsAndProfilesRefused(t *testing.T) {
	tests := []struct {
		name, extra, want string
	}{
		{"literal token", `"clients": {"a": {"token": "literal-secret-123456"}}`, `$.clients.a.token: must reference the token`},
		{"both token forms", `"clients": {"a": {"token": "${X}", "tokenEnv": "X"}}`, `"token" and "tokenEnv" are alternatives`},
		{"no way to authenticate", `"clients": {"a": {"profiles": []}}`, "a client needs a token"},
		{"unknown client field", `"clients": {"a": {"tokenEnv": "X", "scopes": []}}`, `$.clients.a.scopes`},
		{"bad client name", `"clients": {"a b": {"tokenEnv": "X"}}`, "letters, digits"},
		{"unknown profile of a client", `"clients": {"a": {"tokenEnv": "X", "profiles": ["nope"]}}`, `$.clients.a.profiles[0]: no profile is named "nope"`},
		{"unknown server of a profile", `"profiles": {"p": {"servers": ["nope"]}}`, `$.profiles.p.servers[0]: no server is named "nope"`},
		{"malformed tool glob", `"profiles": {"p": {"tools": ["demo:[z"]}}`, `$.profiles.p.tools[0]: malformed pattern`},
		{"bad profile name", `"profiles": {"a/b": {}}`, "letters, digits"},
		{"unknown profile field", `"profiles": {"p": {"server": []}}`, `did you mean "servers"`},
		{"rule names an unknown client", `"policy": {"rules": [{"deny": "*", "clients": ["ghost"]}]}`, `$.policy.rules[0].clients[0]: no client is named "ghost"`},
		{"rule with an unknown member", `"policy": {"rules": [{"deny": "*", "client": ["x"]}]}`, `$.policy.rules[0].client`},
		{"rule with two actions", `"policy": {"rules": [{"deny": "*", "allow": "*"}]}`, "exactly one member"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseErr(t, `{`+identBase+`, `+tt.extra+`}`, fakeEnv{"X": "x-token-0123456789"})
			if !strings.Contains(got, tt.want) {
				t.Fatalf("error = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}
