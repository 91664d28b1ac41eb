package resultguard

import (
	"encoding/base64"
	"encoding/json"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/secretscan"
)

const b62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// ghToken is a GitHub token whose checksum is valid.
func ghToken(body string) string {
	n := crc32.ChecksumIEEE([]byte(body))
	var c [6]byte
	for i := 5; i >= 0; i-- {
		c[i] = b62[n%62]
		n /= 62
	}
	return "ghp_" + body + string(c[:])
}

func TestSecretsRedactsInPlace(t *testing.T) {
	gh := ghToken("aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1")
	jwt := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"1"}`)) + ".c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"
	raw := `{ "content": [ {"type":"text", "text":"token ` + gh + `\u0021 dsn postgres://a:Vx9mQ2zz@h/db", "x": 1},
		{"type":"image","data":"AAAA","mimeType":"image/png"} ],
	"structuredContent": {"k": ["` + jwt + `", 3, {"deep": "` + gh + `"}]}, "isError": false, "_meta": {"t": "` + gh + `"} }`
	out, found, err := Secrets([]byte(raw), func(f secretscan.Finding) bool { return f.Verified })
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		`"token `+gh+`\u0021 dsn postgres://a:Vx9mQ2zz@h/db"`, `"token [redacted: github-token]! dsn postgres://a:Vx9mQ2zz@h/db"`,
		`"`+jwt+`"`, `"[redacted: jwt]"`,
		`"deep": "`+gh+`"`, `"deep": "[redacted: github-token]"`,
	).Replace(raw)
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	var rules []string
	for _, s := range found {
		rules = append(rules, s.Rule)
		if s.Redacted != s.Verified {
			t.Errorf("%+v: redacted should follow verified", s)
		}
	}
	if got := strings.Join(rules, ","); got != "github-token,url-password,jwt,github-token" {
		t.Errorf("found %s", got)
	}
}

func TestSecretsNothingFound(t *testing.T) {
	raw := []byte(`{"content":[{"type":"text","text":"commit 3f2a9c0d1e4b5a6978c0d1e2f3a4b5c6d7e8f901"}]}`)
	out, found, err := Secrets(raw, func(secretscan.Finding) bool { return true })
	if err != nil || len(found) != 0 || &out[0] != &raw[0] {
		t.Errorf("Secrets = %s, %v, %v; want the input itself", out, found, err)
	}
}

func TestValueSecrets(t *testing.T) {
	gh := ghToken("Zy8xW7vU6tS5rQ4pO3nM2lK1jI0hG9")
	found, err := ValueSecrets([]byte(`{"repo":"acme/api","auth":{"token":"` + gh + `"},"n":[1,"x"]}`))
	if err != nil || len(found) != 1 || found[0].Rule != "github-token" || !found[0].Verified || found[0].Redacted {
		t.Errorf("ValueSecrets = %+v, %v", found, err)
	}
	if _, err := ValueSecrets([]byte(`{"a":`)); err == nil {
		t.Error("malformed arguments: no error")
	}
}

// FuzzSecrets: whatever the result, a redacted one is still valid JSON,
// and one with nothing redacted is the input itself.
func FuzzSecrets(f *testing.F) {
	f.Add(`{"content":[{"type":"text","text":"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1000000"}],"structuredContent":{"a":"postgres://u:Vx9mQ2zz@h/d"}}`)
	f.Add(`{"content":[{"type":"resource","resource":{"uri":"x","text":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"}}]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		out, _, err := Secrets([]byte(raw), func(secretscan.Finding) bool { return true })
		if err != nil {
			return
		}
		if json.Valid([]byte(raw)) && !json.Valid(out) {
			t.Fatalf("invalid output %s from %s", out, raw)
		}
		same, _, _ := Secrets([]byte(raw), nil)
		if string(same) != raw {
			t.Fatalf("nothing redacted, yet the result changed: %s", same)
		}
	})
}
