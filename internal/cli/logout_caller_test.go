package cli_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
)

// TestLogoutCaller: `logout NAME --caller ID` forgets that gateway
// caller's own grants for the server in the home's state store; other
// callers' grants stay.
func TestLogoutCaller(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	const url = "https://mcp.example.com/mcp"
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{"gh": map[string]any{"url": url, "oauth": map[string]any{"perCaller": true}}}})
	db, err := sqlite.Open(filepath.Join(home, "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, who := range []string{"sub:ann", "bob"} {
		if err := db.SaveGrant(ctx, store.Grant{GrantKey: store.GrantKey{Caller: who, Issuer: "https://as", Resource: url, ClientID: "c"}, Sealed: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	var errb bytes.Buffer
	code, out := runLoginHome(t, home, &errb, "logout", "gh", "--caller", "sub:ann", "--config", cfg)
	if code != 0 || !strings.Contains(out, `logged "sub:ann" out of "gh": 1 grant(s) forgotten`) {
		t.Fatalf("logout --caller: exit %d, %s%s", code, out, errb.String())
	}
	db, err = sqlite.Open(filepath.Join(home, "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	holders, err := db.GrantHolders(ctx, url)
	if err != nil || len(holders) != 1 || holders[0].Caller != "bob" {
		t.Fatalf("grants left: %+v, %v; want bob's", holders, err)
	}
}
