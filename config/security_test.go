package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSecurityParseErrors: the security and policy blocks and the per-server
// trust fields are as strict as the rest of the file.
func TestSecurityParseErrors(t *testing.T) {
	const F = testFile + ": "
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"loader variable", srv(`"command": "x", "env": {"LD_PRELOAD": "/tmp/evil.so", "OK": "1"}`), []string{
			F + `$.mcpServers.a.env.LD_PRELOAD: "LD_PRELOAD" changes which code the server's program loads or runs (it matches "LD_*"); remove it, or name it in "allowEnv" to allow it for this server`,
		}},
		{"node options", srv(`"command": "x", "env": {"NODE_OPTIONS": "--require /tmp/x.js"}`), []string{
			F + `$.mcpServers.a.env.NODE_OPTIONS: "NODE_OPTIONS" changes which code the server's program loads or runs; remove it, or name it in "allowEnv" to allow it for this server`,
		}},
		{"dyld", srv(`"command": "x", "env": {"DYLD_INSERT_LIBRARIES": "x"}`), []string{
			F + `$.mcpServers.a.env.DYLD_INSERT_LIBRARIES: "DYLD_INSERT_LIBRARIES" changes which code the server's program loads or runs (it matches "DYLD_*"); remove it, or name it in "allowEnv" to allow it for this server`,
		}},
		{"allowEnv of an ordinary variable", srv(`"command": "x", "allowEnv": ["HOME"]`), []string{
			F + `$.mcpServers.a.allowEnv[0]: "HOME" is not a loader variable; only those need allowing`,
		}},
		{"unknown trust", srv(`"command": "x", "trust": "full"`), []string{
			F + `$.mcpServers.a.trust: unknown trust level "full": want "trusted", "untrusted" or "sandboxed"`,
		}},
		{"sandboxed without enabledTools", srv(`"command": "x", "trust": "sandboxed"`), []string{
			F + `$.mcpServers.a: a sandboxed server exposes only the tools its "enabledTools" lists: add it`,
		}},
		{"sandboxed with sampling", srv(`"command": "x", "trust": "sandboxed", "enabledTools": ["a"], "sampling": true`), []string{
			F + `$.mcpServers.a.sampling: a sandboxed server cannot have "sampling"; use "trust": "untrusted"`,
		}},
		{"expectedTools glob", srv(`"command": "x", "expectedTools": ["[a"]`), []string{
			F + `$.mcpServers.a.expectedTools[0]: invalid glob "[a": syntax error in pattern`,
		}},
		{"unknown security field", `{"mcpServers": {}, "security": {"maxToolPerServer": 3}}`, []string{
			F + `$.security.maxToolPerServer: unknown field "maxToolPerServer" (did you mean "maxToolsPerServer"?)`,
		}},
		{"security limit out of range", `{"mcpServers": {}, "security": {"schemaMaxDepth": 0}}`, []string{
			F + `$.security.schemaMaxDepth: must be between 1 and 1000`,
		}},
		{"security strict type", `{"mcpServers": {}, "security": {"strict": "yes"}}`, []string{
			F + `$.security.strict: want boolean, got string`,
		}},
		{"rule with two actions", `{"mcpServers": {}, "policy": {"rules": [{"allow": "a:*", "deny": "b:*"}]}}`, []string{
			F + `$.policy.rules[0]: want an object with exactly one member, "allow" or "deny", whose value is a pattern`,
		}},
		{"rule with unknown action", `{"mcpServers": {}, "policy": {"rules": [{"deni": "a:*"}]}}`, []string{
			F + `$.policy.rules[0].deni: unknown field "deni" (did you mean "deny"?)`,
		}},
		{"malformed rule pattern", `{"mcpServers": {}, "policy": {"rules": [{"deny": "a:[x"}]}}`, []string{
			F + `$.policy.rules[0].deny: malformed pattern "a:[x": unterminated character class at offset 3`,
		}},
		{"unknown confirm", `{"mcpServers": {}, "policy": {"confirm": "sometimes"}}`, []string{
			F + `$.policy.confirm: unknown value "sometimes": want "never", "destructive" or "always"`,
		}},
		{"unknown onInjection", `{"mcpServers": {}, "security": {"onInjection": "warn"}}`, []string{
			F + `$.security.onInjection: unknown value "warn": want "hold" or "flag"`,
		}},
		{"unknown secrets action", `{"mcpServers": {}, "security": {"secrets": {"results": "block", "argument": "flag"}}}`, []string{
			F + `$.security.secrets.results: unknown value "block": want "redact", "redactAll", "flag" or "off"`,
			F + `$.security.secrets.argument: unknown field "argument" (did you mean "arguments"?)`,
		}},
		{"unknown onLaunchChange", `{"mcpServers": {}, "security": {"onLaunchChange": "accept"}}`, []string{
			F + `$.security.onLaunchChange: unknown value "accept": want "hold", "warn" or "off"`,
		}},
		{"quota without window", `{"mcpServers": {}, "policy": {"quota": {"calls": 10}}}`, []string{
			F + `$.policy.quota: "calls" needs "perMs", the window the calls are counted in`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseErr(t, tt.src, fakeEnv{})
			if diff := cmp.Diff(strings.Join(tt.want, "\n"), got); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSecurityParse checks resolved values: trust defaults, overrides, the
// strict default from the security block, and the policy.
func TestSecurityParse(t *testing.T) {
	src := `{
	  "security": {"strict": true, "maxToolsPerServer": 20, "resultTextMaxBytes": 1000, "wrapUntrustedResults": true},
	  "policy": {"rules": [{"deny": "gh:delete_*"}, {"allow": "*"}], "default": "deny", "confirm": "destructive", "onConfirm": "deny", "quota": {"calls": 5, "perMs": 60000}},
	  "mcpServers": {
	    "t": {"command": "x", "trust": "trusted", "strict": false},
	    "u": {"command": "x", "sampling": true, "expectedTools": ["read_*"], "env": {"LD_PRELOAD": "/x.so"}, "allowEnv": ["LD_PRELOAD"]},
	    "s": {"command": "x", "trust": "sandboxed", "enabledTools": ["only"]}
	  }
	}`
	cfg, err := Parse([]byte(src), testFile, fakeEnv{}.opts())
	if err != nil {
		t.Fatal(err)
	}
	wantSec := Security{Strict: true, WrapUntrustedResults: true, MaxToolsPerServer: 20, ResultTextMaxBytes: 1000}.WithDefaults()
	if diff := cmp.Diff(wantSec, cfg.Security); diff != "" {
		t.Errorf("Security (-want +got):\n%s", diff)
	}
	wantPol := Policy{
		Rules:   []Rule{{Action: ActionDeny, Pattern: "gh:delete_*"}, {Action: ActionAllow, Pattern: "*"}},
		Default: ActionDeny, Confirm: ConfirmDestructive, OnConfirm: OnConfirmDeny,
		Quota: Quota{Calls: 5, Per: time.Minute},
	}
	if diff := cmp.Diff(wantPol, cfg.Policy); diff != "" {
		t.Errorf("Policy (-want +got):\n%s", diff)
	}
	type ab struct {
		Trust                                        Trust
		Sampling, Elicitation, Roots, Images, Strict bool
	}
	got := map[string]ab{}
	for _, s := range cfg.Servers {
		got[s.Name] = ab{s.Trust, s.Sampling, s.Elicitation, s.Roots, s.Images, s.Strict}
	}
	want := map[string]ab{
		"t": {TrustTrusted, true, true, true, true, false},
		"u": {TrustUntrusted, true, true, true, true, true},
		"s": {TrustSandboxed, false, false, false, false, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("abilities (-want +got):\n%s", diff)
	}
	if u := cfg.Server("u"); u.Env["LD_PRELOAD"] != "/x.so" || !cmp.Equal(u.ExpectedTools, []string{"read_*"}) {
		t.Errorf("u = %#v", u)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	// onInjection: "flag" is kept; absent, it is "hold"; a hand-made
	// unknown value is caught by Validate.
	for src, want := range map[string]string{
		`{"mcpServers": {}}`: InjectionHold,
		`{"mcpServers": {}, "security": {"onInjection": "flag"}}`: InjectionFlag,
		`{"mcpServers": {}, "security": {"onInjection": "hold"}}`: InjectionHold,
	} {
		c, err := Parse([]byte(src), testFile, fakeEnv{}.opts())
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Security.OnInjection; got != want {
			t.Errorf("%s: onInjection = %q, want %q", src, got, want)
		}
	}
	// secrets: redact in results, flag in arguments and block in
	// elicitation unless told.
	for src, want := range map[string]SecretsPolicy{
		`{"mcpServers": {}}`: {Results: SecretsRedact, Arguments: SecretsFlag, Elicitation: SecretsBlock},
		`{"mcpServers": {}, "security": {"secrets": {"arguments": "block", "report": true}}}`:    {Results: SecretsRedact, Arguments: SecretsBlock, Elicitation: SecretsBlock, Report: true},
		`{"mcpServers": {}, "security": {"secrets": {"results": "off", "elicitation": "flag"}}}`: {Results: SecretsOff, Arguments: SecretsFlag, Elicitation: SecretsFlag},
	} {
		c, err := Parse([]byte(src), testFile, fakeEnv{}.opts())
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Security.Secrets; got != want {
			t.Errorf("%s: secrets = %+v, want %+v", src, got, want)
		}
	}
	bad := *cfg
	bad.Security.Secrets.Arguments = "refuse"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), `$.security.secrets.arguments: unknown value "refuse"`) {
		t.Errorf("Validate with secrets.arguments refuse = %v", err)
	}
	bad = *cfg
	bad.Security.Secrets.Elicitation = "ask"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), `$.security.secrets.elicitation: unknown value "ask"`) {
		t.Errorf("Validate with secrets.elicitation ask = %v", err)
	}
	bad = *cfg
	bad.Security.OnInjection = "ignore"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), `$.security.onInjection: unknown value "ignore"`) {
		t.Errorf("Validate with onInjection ignore = %v", err)
	}
	// A hand-made loader variable is caught by Validate too.
	cfg.Server("t").Env = map[string]string{"BASH_ENV": "/x"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `"BASH_ENV" changes which code`) {
		t.Errorf("Validate with BASH_ENV = %v", err)
	}
}

func TestLoaderVar(t *testing.T) {
	for name, want := range map[string]bool{
		"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "DYLD_INSERT_LIBRARIES": true,
		"NODE_OPTIONS": true, "PYTHONPATH": true, "PYTHONSTARTUP": true, "BASH_ENV": true, "ENV": true,
		"BASH_FUNC_x%%": true, "PERL5OPT": true, "RUBYOPT": true, "JAVA_TOOL_OPTIONS": true, "GIT_SSH_COMMAND": true,
		"PATH": false, "HOME": false, "GITHUB_TOKEN": false, "NODE_ENV": false, "ENVIRONMENT": false, "LDAP_URL": false,
	} {
		if _, got := LoaderVar(name); got != want {
			t.Errorf("LoaderVar(%q) = %v, want %v", name, got, want)
		}
	}
}
