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
// servers start with their credentials (their launches pinned at this
// first start, not held), and a call is recorded beside the old ones.
// After that, a launch changed by hand holds its server until approved.
func TestUpgradeOpensAnOlderHome(t *testing.T) {
	t.Parallel()
	for _, release := range []string{"7b5c3d4", "b2d7198"} {
		t.Run(release, func(t *testing.T) {
			t.Parallel()
			testUpgrade(t, "home-"+release)
		})
	}
}

func testUpgrade(t *testing.T, dir string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := olderHome(t, dir, exe)
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
	for _, row := range before {
		if _, ok := row["run"]; ok {
			t.Errorf("an older row belongs to a script run: %v", row)
		}
		// Made before callers had grants of their own: no upstream
		// identity and no decision about one.
		if row["upstreamAs"] != nil || row["callerGrant"] != nil {
			t.Errorf("an older audit row after the upgrade: %v", row)
		}
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
	var servers []map[string]any
	if err := json.Unmarshal([]byte(cmd("servers", "--json").stdout), &servers); err != nil || len(servers) != 2 {
		t.Fatalf("servers --json: %v, %v", servers, err)
	}
	for _, s := range servers {
		if s["state"] == "held" {
			t.Errorf("server %v held after the upgrade; want its launch pinned at its first start", s["name"])
		}
	}

	// A launch changed by hand, now, is held until a person approves it.
	path := filepath.Join(home, "config.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `"demo-server"`, `"demo-server", "-v"`, 1)
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runWith(t, cli.Env{Args: []string{"call", "demo__echo", "text=held"}, LookupEnv: homeEnv(home), Version: "test"})
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "launch_changed") {
		t.Fatalf("call after a hand edit of the launch: exit %d\n%s%s\nwant launch_changed", r.code, r.stdout, r.stderr)
	}
	if out := cmd("approve", "demo").stdout; !strings.Contains(out, "server launch: changed since it was approved") || !strings.Contains(out, `"-v"`) {
		t.Errorf("approve demo shows:\n%s\nwant the launch's diff", out)
	}
	cmd("call", "demo__echo", "text=approved")

	cmd("remove", "keyed")
	b, err = os.ReadFile(filepath.Join(home, "creds.json"))
	if err != nil || strings.Contains(string(b), "sekret") {
		t.Errorf("creds.json after remove: %q, %v; want the credential gone", b, err)
	}
	if _, err := os.Stat(filepath.Join(home, "creds.json.bak")); err == nil {
		t.Error("remove left a creds.json.bak, which keeps the removed credential")
	}
}

// olderHome copies the home testdata/dir, made by an earlier release, into
// a temporary directory, its servers launching exe, and returns it.
func olderHome(t *testing.T, dir, exe string) string {
	t.Helper()
	home := t.TempDir()
	src := filepath.Join("testdata", dir)
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
	return home
}
