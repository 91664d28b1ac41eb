package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// maskServer is configured with a secret in each place SecretValues reads.
func maskServer() *Server {
	return &Server{
		Name:    "leaky",
		Command: "srv",
		Args:    []string{"--api-key", "argsecret-123", "--token=flagsecret-456", "ghp_abcdefghijklmnop", "--verbose", "plain-argument", "postgresql://app:connsecret-6@db/app"},
		Env:     map[string]string{"API_TOKEN": "envsecret-789", "LOG_LEVEL": "debugging", "SHORT_KEY": "abc", "DATABASE_URL": "mysql://root:envconn-7@h/x"},
		URL:     "https://alice:urlpassword@example.test/mcp?api_key=querysecret-1&page=2",
		Headers: map[string]string{"Authorization": "Bearer headertoken-2", "X-Api-Key": "headersecret-3", "Accept": "application/json"},
		OAuth:   &OAuth{ClientID: "client-id-public", ClientSecret: "oauthsecret-4", Assertion: "assertion-5"},
	}
}

func TestSecretValues(t *testing.T) {
	got := map[string]bool{}
	for _, v := range maskServer().SecretValues() {
		got[v] = true
	}
	for _, v := range []string{"argsecret-123", "flagsecret-456", "ghp_abcdefghijklmnop", "envsecret-789", "urlpassword", "querysecret-1", "Bearer headertoken-2", "headertoken-2", "headersecret-3", "oauthsecret-4", "assertion-5", "connsecret-6", "envconn-7"} {
		if !got[v] {
			t.Errorf("SecretValues lacks %q", v)
		}
	}
	for _, v := range []string{"debugging", "abc", "plain-argument", "application/json", "client-id-public", "alice", "--verbose"} {
		if got[v] {
			t.Errorf("SecretValues holds %q, which is no secret (or too short)", v)
		}
	}
}

func TestMask(t *testing.T) {
	secrets := maskServer().SecretValues()
	tests := []struct{ name, in, want string }{
		{"env value", "Error: API_TOKEN=envsecret-789 rejected", "Error: API_TOKEN=*** rejected"},
		{"arg value", "usage: srv --api-key argsecret-123 --token=flagsecret-456", "usage: srv --api-key *** --token=***"},
		{"token in text", "invalid token ghp_abcdefghijklmnop", "invalid token ***"},
		{"unconfigured token shape", "invalid token ghp_zzzzzzzzzzzzzzzz.", "invalid token ***."},
		{"header and oauth", "sent X-Api-Key headersecret-3 and client secret oauthsecret-4", "sent X-Api-Key *** and client secret ***"},
		{"configured url", "Error: connect ECONNREFUSED https://alice:urlpassword@example.test/mcp?api_key=querysecret-1&page=2",
			"Error: connect ECONNREFUSED https://alice:***@example.test/mcp?api_key=***&page=2"},
		{"other url", `GET "http://bob:pw@127.0.0.1:9/x?token=t0&q=go#f": refused`, `GET "http://bob:***@127.0.0.1:9/x?token=***&q=go#f": refused`},
		{"bearer", "sent Bearer abc.def-ghi to the server", "sent Bearer *** to the server"},
		{"authorization header", "> Authorization: Basic dXNlcjpwYXNz\n> Accept: */*", "> Authorization: ***\n> Accept: */*"},
		{"authorization json", `{"authorization":"Token xyz", "a": 1}`, `{"authorization":"***", "a": 1}`},
		{"short values kept", "level abc debugging page=2", "level abc debugging page=2"},
		{"nothing secret", "Error: ENOENT: no such file /tmp/x\n  at main.js:3", "Error: ENOENT: no such file /tmp/x\n  at main.js:3"},
		{"reference kept", "https://h/x?key=${KEY}", "https://h/x?key=${KEY}"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Mask(tt.in, secrets)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Mask(%q) (-want +got):\n%s", tt.in, diff)
			}
			if again := Mask(got, secrets); again != got {
				t.Errorf("Mask is not idempotent: %q, then %q", got, again)
			}
		})
	}
}

// FuzzMask: free text never makes Mask panic, its result holds no secret
// of MinSecretLen or more, and masking twice changes nothing more.
func FuzzMask(f *testing.F) {
	for _, s := range []string{
		"Error: connect ECONNREFUSED https://user:pass@host/x?api_key=k3y-value",
		"invalid token ghp_abcdefghijklmnop",
		"Authorization: Bearer abc\nnext",
		"env API_TOKEN=envsecret-789 ${KEY}",
		"a://***@b?token=***#",
		"",
	} {
		f.Add(s, "envsecret-789", "pass")
	}
	f.Add("xxabcabcabcyy", "abcabc", "cabcab")
	f.Fuzz(func(t *testing.T, text, s1, s2 string) {
		secrets := []string{s1, s2}
		got := Mask(text, secrets)
		for _, s := range secrets {
			if len(s) >= MinSecretLen && strings.Contains(got, s) {
				t.Fatalf("Mask(%q, %q) = %q holds %q", text, secrets, got, s)
			}
		}
		if again := Mask(got, secrets); again != got {
			t.Fatalf("Mask(%q, %q) = %q, then %q", text, secrets, got, again)
		}
	})
}
