package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/cli"
)

// TestUpgradeOpensAnOlderHome: a home made by an earlier release (its
// configuration, credentials and state store, in testdata) keeps working:
// the store takes the new schema, its audit rows are still there, the
// servers start with their credentials, and a call is recorded beside the
// old ones.
func TestUpgradeOpensAnOlderHome(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	src := filepath.Join("testdata", "home-7b5c3d4")
	for _, name := range []string{"config.json", "creds.json", "state.db"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "config.json" {
			quoted, _ := json.Marshal(exe)
			b = []byte(strings.ReplaceAll(string(b), `"SWITCHBOARD_EXE"`, string(quoted)))
		}
		if err := os.WriteFile(filepath.Join(home, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := func(args ...string) result {
		t.Helper()
		r := runWith(t, cli.Env{Args: args, LookupEnv: homeEnv(home), Version: "test"})
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r
	}
	var before []map[string]any
	if err := json.Unmarshal([]byte(cmd("log", "--json").stdout), &before); err != nil || len(before) != 2 {
		t.Fatalf("the older home's audit rows: %v, %v; want 2", before, err)
	}
	for _, server := range []string{"demo", "keyed"} {
		if got := strings.TrimSpace(cmd("call", server+"__echo", "text=after the upgrade").stdout); got != "after the upgrade" {
			t.Errorf("%s__echo after the upgrade = %q", server, got)
		}
	}
	if out := cmd("get", "keyed").stdout; strings.Contains(out, "sekret") {
		t.Errorf("get shows the kept credential:\n%s", out)
	}
	var after []map[string]any
	if err := json.Unmarshal([]byte(cmd("log", "--json").stdout), &after); err != nil || len(after) != 4 {
		t.Fatalf("audit rows after two more calls: %d, %v; want 4", len(after), err)
	}
	cmd("remove", "keyed")
	b, err := os.ReadFile(filepath.Join(home, "creds.json"))
	if err != nil || strings.Contains(string(b), "sekret") {
		t.Errorf("creds.json after remove: %q, %v; want the credential gone", b, err)
	}
	if _, err := os.Stat(filepath.Join(home, "creds.json.bak")); err == nil {
		t.Error("remove left a creds.json.bak, which keeps the removed credential")
	}
}
