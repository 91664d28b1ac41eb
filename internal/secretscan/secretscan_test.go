package secretscan

import (
	"encoding/base64"
	"hash/crc32"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// ghToken makes a GitHub token with a valid checksum over body (30
// characters).
func ghToken(prefix, body string) string {
	return prefix + body + checksum62(crc32.ChecksumIEEE([]byte(body)))
}

func TestScan(t *testing.T) {
	gh := ghToken("ghp_", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1")
	bad := "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1000000"
	jwt := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"42"}`)) + ".c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"
	notJWT := "eyJub3Rqc29u" + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"42"}`)) + ".c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n", 3) + "-----END RSA PRIVATE KEY-----"
	for _, tc := range []struct {
		name, text string
		want       []Finding // Start and End relative to the marker "@" position in text, see below
		rule       string
		verified   bool
		secret     string
	}{
		{name: "github verified", text: "token " + gh + " here", rule: "github-token", verified: true, secret: gh},
		{name: "github bad checksum", text: "t=" + bad, rule: "github-token", secret: bad},
		{name: "jwt", text: `{"authorization":"Bearer ` + jwt + `"}`, rule: "jwt", verified: true, secret: jwt},
		{name: "pem", text: "key:\n" + key + "\nend", rule: "private-key", verified: true, secret: key},
		{name: "pem in JSON", text: `{"private_key":"` + strings.ReplaceAll(key, "\n", `\n`) + `\n"}`, rule: "private-key", verified: true, secret: strings.ReplaceAll(key, "\n", `\n`)},
		{name: "url password", text: "DATABASE_URL=postgres://app:Vx9mQ2zz@db:5432/app", rule: "url-password", secret: "Vx9mQ2zz"},
		{name: "placeholder url", text: "postgres://user:password@localhost/db"},
		{name: "reference url", text: "postgres://user:${DB_PASSWORD}@localhost/db"},
		{name: "placeholder github", text: "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
		{name: "not a jwt", text: notJWT},
		{name: "aws example", text: "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		{name: "redacted", text: "token: " + Marker("github-token")},
		{name: "pem placeholder before code", text: `PrivateKey: []byte("-----BEGIN RSA PRIVATE KEY-----..."),` + "\n\t\tScopes: []string{\n\t\t\t\"https://www.googleapis.com/auth/bigquery\",\n\t\t\t\"https://www.googleapis.com/auth/blogger\",\n\t\t},"},
		{name: "pem cut short", text: "key: " + key[:200], rule: "private-key", secret: key[:200]},
		{name: "commit", text: "commit 3f2a9c0d1e4b5a6978c0d1e2f3a4b5c6d7e8f901"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := Scan(tc.text)
			if tc.rule == "" {
				if len(fs) != 0 {
					t.Fatalf("Scan(%q) = %+v, want nothing", tc.text, fs)
				}
				return
			}
			if len(fs) != 1 {
				t.Fatalf("Scan(%q) = %+v, want one finding", tc.text, fs)
			}
			f := fs[0]
			if f.Rule != tc.rule || f.Verified != tc.verified || tc.text[f.Start:f.End] != tc.secret {
				t.Errorf("got %s verified=%v %q, want %s verified=%v %q", f.Rule, f.Verified, tc.text[f.Start:f.End], tc.rule, tc.verified, tc.secret)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	gh := ghToken("gho_", "Zy8xW7vU6tS5rQ4pO3nM2lK1jI0hG9")
	text := "a " + gh + " b postgres://u:Vx9mQ2zz@h/db c"
	fs := Scan(text)
	got := Redact(text, fs, func(f Finding) bool { return f.Verified })
	if want := "a [redacted: github-token] b postgres://u:Vx9mQ2zz@h/db c"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	if got := Redact(text, fs, func(Finding) bool { return false }); got != text {
		t.Errorf("Redact with nothing to redact changed the text: %q", got)
	}
}

func TestToken(t *testing.T) {
	for v, want := range map[string]bool{
		"sk-abcdefgh12": true, "ghp_12345678": true, "eyJhbGciOiJIUzI1NiJ9": true, "hello": false, "sk-": false,
	} {
		if got := HasTokenPrefix(v); got != want {
			t.Errorf("HasTokenPrefix(%q) = %v, want %v", v, got, want)
		}
	}
}

func FuzzScan(f *testing.F) {
	f.Add("token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1000000 and postgres://a:b@c/d")
	f.Add("-----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----")
	f.Add("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg")
	f.Add("AKIA2345678ABCDEFGHI aws_secret_access_key=" + strings.Repeat("aB3", 13) + "x")
	f.Fuzz(func(t *testing.T, s string) {
		fs := Scan(s)
		last := 0
		for _, f := range fs {
			if f.Start < last || f.End <= f.Start || f.End > len(s) || f.Rule == "" {
				t.Fatalf("bad finding %+v in %q (after %d)", f, s, last)
			}
			last = f.End
		}
		out := Redact(s, fs, func(Finding) bool { return true })
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("Redact made invalid UTF-8 of %q: %q", s, out)
		}
		for _, f := range fs {
			if sec := s[f.Start:f.End]; len(sec) >= 8 && strings.Contains(out, sec) && strings.Count(s, sec) == 1 {
				t.Fatalf("Redact left %q in %q", sec, out)
			}
		}
	})
}

// TestRulesDocumented: docs/SECURITY.md's table names every rule.
func TestRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules() {
		if !strings.Contains(string(doc), "| `"+r.Name+"` |") {
			t.Errorf("docs/SECURITY.md has no row for rule %s", r.Name)
		}
	}
}
