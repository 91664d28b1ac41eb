package creds

import (
	"path/filepath"
	"testing"
	"time"
)

// TestTokens: grants are kept beside other credentials under issuer,
// resource and client, newest first, replaced by the same key, forgotten
// per resource, and other credentials are left alone.
func TestTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := Update(path, map[string]string{"gh.TOKEN": "v"}, nil); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Round(0)
	a := Token{Issuer: "https://as", Resource: "https://r/mcp", ClientID: "c1", AccessToken: "a1", Saved: now.Add(-time.Minute)}
	b := Token{Issuer: "https://as", Resource: "https://r/mcp", ClientID: "c2", AccessToken: "b1", Saved: now}
	other := Token{Issuer: "https://as", Resource: "https://other/mcp", ClientID: "c1", AccessToken: "o1", Saved: now}
	for _, tok := range []Token{a, b, other} {
		if err := SaveToken(path, tok); err != nil {
			t.Fatal(err)
		}
	}
	a.AccessToken = "a2"
	a.Saved = now.Add(time.Minute)
	if err := SaveToken(path, a); err != nil {
		t.Fatal(err)
	}
	got, err := LoadTokens(path, "https://r/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].AccessToken != "a2" || got[1].AccessToken != "b1" {
		t.Fatalf("grants = %+v, want a2 then b1", got)
	}
	if err := SaveToken(path, Token{Resource: "x", ClientID: "c"}); err == nil {
		t.Fatal("a grant without issuer was kept")
	}
	n, err := ForgetTokens(path, "https://r/mcp")
	if err != nil || n != 2 {
		t.Fatalf("ForgetTokens = %d, %v; want 2", n, err)
	}
	if got, _ := LoadTokens(path, "https://r/mcp"); len(got) != 0 {
		t.Fatalf("grants left: %d", len(got))
	}
	if got, _ := LoadTokens(path, "https://other/mcp"); len(got) != 1 {
		t.Fatalf("another resource's grant was forgotten")
	}
	m, err := Load(path)
	if err != nil || m["gh.TOKEN"] != "v" {
		t.Fatalf("other credentials: %v, %v", m, err)
	}
}
