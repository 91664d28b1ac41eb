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

// TestClients: a registered client is kept per resource beside the
// grants, without being read as one; it is forgotten only when it is
// still the client named, with the grants by ForgetTokens, and copied
// between files (a copy from a file without one deletes it).
func TestClients(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	c := Client{Issuer: "https://as", Resource: "https://r/mcp", ClientID: "c1", ClientSecret: "s", RedirectURI: "http://127.0.0.1:5/callback", Registered: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := SaveClient(path, c); err != nil {
		t.Fatal(err)
	}
	if err := SaveClient(path, Client{Resource: "https://r/mcp", ClientID: "c"}); err == nil {
		t.Fatal("a client without issuer was kept")
	}
	if got, err := LoadClient(path, "https://r/mcp"); err != nil || got == nil || *got != c {
		t.Fatalf("LoadClient = %+v, %v; want %+v", got, err, c)
	}
	if got, _ := LoadClient(path, "https://other/mcp"); got != nil {
		t.Fatalf("another resource's client: %+v", got)
	}
	if ts, _ := LoadTokens(path, "https://r/mcp"); len(ts) != 0 {
		t.Fatalf("the client was read as a grant: %+v", ts)
	}

	aside := filepath.Join(dir, "aside", FileName)
	if err := CopyClient(path, aside, c.Resource); err != nil {
		t.Fatal(err)
	}
	if got, _ := LoadClient(aside, c.Resource); got == nil || *got != c {
		t.Fatalf("copied client = %+v", got)
	}
	if err := ForgetClient(path, c.Resource, "c2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := LoadClient(path, c.Resource); got == nil {
		t.Fatal("ForgetClient of another client ID forgot the kept one")
	}
	if err := ForgetClient(aside, c.Resource, "c1"); err != nil {
		t.Fatal(err)
	}
	if err := CopyClient(aside, path, c.Resource); err != nil {
		t.Fatal(err)
	}
	if got, _ := LoadClient(path, c.Resource); got != nil {
		t.Fatalf("a copy from a file without a client left %+v", got)
	}

	if err := SaveClient(path, c); err != nil {
		t.Fatal(err)
	}
	if err := SaveToken(path, Token{Issuer: "https://as", Resource: c.Resource, ClientID: "c1", AccessToken: "a"}); err != nil {
		t.Fatal(err)
	}
	if n, err := ForgetTokens(path, c.Resource); n != 1 || err != nil {
		t.Fatalf("ForgetTokens = %d, %v; want 1", n, err)
	}
	if got, _ := LoadClient(path, c.Resource); got != nil {
		t.Fatalf("ForgetTokens left the client %+v", got)
	}
}

// TestTokensFileBefore: a creds.json written before clients were kept
// (grants only, in the fields of then) loads as it did, with no client.
func TestTokensFileBefore(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	grant := `{"issuer":"https://as","resource":"https://r/mcp","clientId":"client-1","tokenUrl":"https://as/token","accessToken":"a","refreshToken":"r","expiry":"2026-01-02T03:04:05Z","saved":"2026-01-02T02:04:05Z"}`
	old := map[string]string{"oauth https://as https://r/mcp client-1": grant, "gh.TOKEN": "v"}
	if err := Update(path, old, nil); err != nil {
		t.Fatal(err)
	}
	ts, err := LoadTokens(path, "https://r/mcp")
	if err != nil || len(ts) != 1 || ts[0].ClientID != "client-1" || ts[0].RefreshToken != "r" {
		t.Fatalf("LoadTokens = %+v, %v", ts, err)
	}
	if c, err := LoadClient(path, "https://r/mcp"); c != nil || err != nil {
		t.Fatalf("LoadClient = %+v, %v; want none", c, err)
	}
	if n, err := ForgetTokens(path, "https://r/mcp"); n != 1 || err != nil {
		t.Fatalf("ForgetTokens = %d, %v; want 1", n, err)
	}
}
