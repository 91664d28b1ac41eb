package cli_test

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/creds"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// TestLoginReusesClient: `switchboard login` reuses the client an earlier
// login registered (the login's grant is kept aside until it succeeds,
// the client with it); a client the authorization server no longer knows,
// found by a refresh, is forgotten and the next login registers once;
// `logout` forgets the client with the grant.
func TestLoginReusesClient(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	home := t.TempDir()
	path := filepath.Join(home, "creds.json")
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{"gh": map[string]any{"url": as.MCP, "trust": "trusted"}}})
	login := func(what string) string {
		t.Helper()
		if r, errs, _ := loginBrowsing(t, home, cfg, as); r.code != 0 {
			t.Fatalf("%s: exit %d, %s", what, r.code, errs)
		}
		ts, err := creds.LoadTokens(path, as.MCP)
		if err != nil || len(ts) != 1 {
			t.Fatalf("%s: grants %d, %v; want 1", what, len(ts), err)
		}
		if c, err := creds.LoadClient(path, as.MCP); err != nil || c == nil || c.ClientID != ts[0].ClientID {
			t.Fatalf("%s: kept client %+v, %v; want %q", what, c, err, ts[0].ClientID)
		}
		return ts[0].ClientID
	}
	registrations := func(want int) {
		t.Helper()
		if n := as.Count("register"); n != want {
			t.Fatalf("%d registrations, want %d", n, want)
		}
	}

	first := login("first login")
	if second := login("second login"); second != first {
		t.Fatalf("second login's grant issued to %q, want the kept %q", second, first)
	}
	registrations(1)

	// The person deletes the app at the authorization server: the next
	// refresh is answered invalid_client, and the client is forgotten.
	as.RevokeClient(first)
	var errb bytes.Buffer
	if code, out := runLoginHome(t, home, &errb, "call", "gh__whoami", "--config", cfg); code == 0 || !strings.Contains(out+errb.String(), "switchboard login gh") {
		t.Fatalf("call with a revoked client: exit %d, %s%s", code, out, errb.String())
	}
	if c, _ := creds.LoadClient(path, as.MCP); c != nil {
		t.Fatalf("the revoked client is still kept: %+v", c)
	}
	third := login("login after the revocation")
	registrations(2)
	if third == first || slices.Contains(as.Authorized()[2:], first) {
		t.Fatalf("the revoked client was offered again: %q", as.Authorized())
	}

	errb.Reset()
	if code, out := runLoginHome(t, home, &errb, "logout", "gh", "--config", cfg); code != 0 {
		t.Fatalf("logout: exit %d, %s%s", code, out, errb.String())
	}
	if c, _ := creds.LoadClient(path, as.MCP); c != nil {
		t.Fatalf("logout kept the client: %+v", c)
	}
	login("login after logout")
	registrations(3)
}

// TestLoginMarksRefusedClient: a `switchboard login` whose code exchange
// is refused for the kept client fails, and the mark it leaves on the
// client reaches creds.json, so that the next login registers a new
// client instead of failing the same way.
func TestLoginMarksRefusedClient(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	home := t.TempDir()
	path := filepath.Join(home, "creds.json")
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{"gh": map[string]any{"url": as.MCP, "trust": "trusted"}}})
	if r, errs, _ := loginBrowsing(t, home, cfg, as); r.code != 0 {
		t.Fatalf("first login: exit %d, %s", r.code, errs)
	}
	kept, err := creds.LoadClient(path, as.MCP)
	if err != nil || kept == nil {
		t.Fatalf("kept client %+v, %v", kept, err)
	}
	as.RevokeAll()
	as.RefuseTokens(kept.ClientID)
	r, errs, _ := loginBrowsing(t, home, cfg, as)
	if r.code == 0 || !strings.Contains(errs, "switchboard login gh") {
		t.Fatalf("refused login: exit %d, %s", r.code, errs)
	}
	if c, _ := creds.LoadClient(path, as.MCP); c == nil || c.ClientID != kept.ClientID || !c.NoReuse {
		t.Fatalf("kept client after the refused login: %+v, want it marked", c)
	}
	if r, errs, _ := loginBrowsing(t, home, cfg, as); r.code != 0 {
		t.Fatalf("login after the refusal: exit %d, %s", r.code, errs)
	}
	if n := as.Count("register"); n != 2 {
		t.Fatalf("%d registrations, want 2", n)
	}
}
