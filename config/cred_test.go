package config

import (
	"strings"
	"testing"
)

// TestCredRefs checks ${cred:NAME}: resolved through LookupCred, a
// missing credential makes only its server unusable, a malformed name is
// an error, and no message or redacted view shows a value.
func TestCredRefs(t *testing.T) {
	creds := map[string]string{"gh.GITHUB_TOKEN": "s3cret-value", "api.auth": "Bearer tok-xyz"}
	lookupCred := func(n string) (string, bool) { v, ok := creds[n]; return v, ok }
	tests := []struct {
		name       string
		src        string
		lookupCred func(string) (string, bool)
		want       map[string]string // gh's env or headers after expansion
		unusable   string
		err        string
	}{
		{name: "env", src: `{"mcpServers": {"gh": {"command": "x", "env": {"GITHUB_TOKEN": "${cred:gh.GITHUB_TOKEN}"}}}}`,
			lookupCred: lookupCred, want: map[string]string{"GITHUB_TOKEN": "s3cret-value"}},
		{name: "header", src: `{"mcpServers": {"gh": {"url": "https://h/", "headers": {"Authorization": "${cred:api.auth}"}}}}`,
			lookupCred: lookupCred, want: map[string]string{"Authorization": "Bearer tok-xyz"}},
		{name: "missing", src: `{"mcpServers": {"gh": {"command": "x", "env": {"T": "${cred:gh.T}"}}, "ok": {"command": "y"}}}`,
			lookupCred: lookupCred, unusable: `server "gh": credential "gh.T" is not stored (env.T)`},
		{name: "no store", src: `{"mcpServers": {"gh": {"command": "x", "env": {"T": "${cred:gh.GITHUB_TOKEN}"}}}}`,
			unusable: `server "gh": credential "gh.GITHUB_TOKEN" is not stored (env.T)`},
		{name: "not an env var", src: `{"mcpServers": {"gh": {"command": "x", "env": {"T": "${cred:gh.GITHUB_TOKEN}"}}}}`,
			lookupCred: func(string) (string, bool) { return "", false },
			unusable:   `server "gh": credential "gh.GITHUB_TOKEN" is not stored (env.T)`},
		{name: "bad name", src: `{"mcpServers": {"gh": {"command": "x", "env": {"T": "${cred:a b}"}}}}`,
			err: `invalid credential reference "${cred:a b}"`},
		{name: "empty name", src: `{"mcpServers": {"gh": {"command": "x", "env": {"T": "${cred:}"}}}}`,
			err: `invalid credential reference "${cred:}"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The environment has a variable named like the credential: it
			// must not be used.
			env := func(n string) (string, bool) { return "from-env", true }
			cfg, err := Parse([]byte(tt.src), testFile, &LoadOptions{LookupEnv: env, LookupCred: tt.lookupCred})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gh := cfg.Server("gh")
			if tt.unusable != "" {
				if gh.Unusable == nil || gh.Unusable.Error() != tt.unusable {
					t.Fatalf("unusable = %v, want %s", gh.Unusable, tt.unusable)
				}
				return
			}
			if gh.Unusable != nil {
				t.Fatal(gh.Unusable)
			}
			got := gh.Env
			if gh.Transport != TransportStdio {
				got = gh.Headers
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			shown := gh.String() + gh.GoString()
			for k, v := range gh.Redacted().Env {
				shown += k + v
			}
			for k, v := range gh.Redacted().Headers {
				shown += k + v
			}
			for _, secret := range creds {
				if strings.Contains(shown, secret) {
					t.Errorf("a credential's value is shown: %s", shown)
				}
			}
			if !strings.Contains(shown, "${cred:") {
				t.Errorf("the redacted view does not show the reference: %s", shown)
			}
		})
	}
}

// TestCredFingerprint: a credential's value is part of the server's
// fingerprint, as an environment variable's is.
func TestCredFingerprint(t *testing.T) {
	const src = `{"mcpServers": {"gh": {"command": "x", "env": {"T": "${cred:gh.T}"}}}}`
	fp := func(v string) string {
		cfg, err := Parse([]byte(src), testFile, &LoadOptions{LookupCred: func(string) (string, bool) { return v, true }})
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Server("gh").Fingerprint()
	}
	if fp("one") == fp("two") {
		t.Error("the fingerprint does not change with the credential's value")
	}
}
