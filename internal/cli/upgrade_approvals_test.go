package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/cli"
)

// TestUpgradeKeepsCallsFlowing: a home made by the release before held
// calls and the data-flow guard (9b73c53) opens, takes the new schema and
// keeps working with the guards at their defaults (nothing held, the
// data-flow guard reporting only); once its configuration names a tool
// in policy.approve, a call of it off a terminal is held
// (approval_required), approve-call lists and approves it, the same call
// then goes through once, and the audit log says who approved it.
func TestUpgradeKeepsCallsFlowing(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := olderHome(t, "home-9b73c53", exe)
	run := func(args ...string) result {
		t.Helper()
		return runWith(t, cli.Env{Args: args, LookupEnv: homeEnv(home), Version: "test"})
	}
	cmd := func(args ...string) result {
		t.Helper()
		r := run(args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r
	}
	// The release pinned both launches with the program it ran; this
	// test's program is another: a changed launch, held until a person
	// approves it.
	if r := run("call", "demo__echo", "text=x"); r.code == 0 || !strings.Contains(r.stderr, "launch_changed") {
		t.Fatalf("a call with the launch changed: exit %d\n%s", r.code, r.stderr)
	}
	for _, server := range []string{"demo", "keyed"} {
		cmd("approve", server)
	}
	var before []map[string]any
	if err := json.Unmarshal([]byte(cmd("log", "--json").stdout), &before); err != nil || len(before) < 2 {
		t.Fatalf("the older home's audit rows: %v, %v", before, err)
	}
	for _, server := range []string{"demo", "keyed"} {
		if got := strings.TrimSpace(cmd("call", server+"__echo", "text=after the upgrade").stdout); got != "after the upgrade" {
			t.Errorf("%s__echo after the upgrade = %q", server, got)
		}
	}
	if out := cmd("approve-call").stdout; !strings.Contains(out, "no calls are waiting") {
		t.Errorf("approve-call after the upgrade:\n%s", out)
	}

	// Now a tool needs a person's approval.
	path := filepath.Join(home, "config.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["policy"] = map[string]any{"approve": map[string]any{"tools": []string{"demo:echo"}}}
	b, _ = json.Marshal(doc)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r := run("call", "demo__echo", "text=held")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "approval_required") {
		t.Fatalf("a call off a terminal: exit %d\n%s%s\nwant approval_required", r.code, r.stdout, r.stderr)
	}
	var held []struct {
		ID, Tool string
	}
	if err := json.Unmarshal([]byte(cmd("approve-call", "--json").stdout), &held); err != nil || len(held) != 1 || held[0].Tool != "demo:echo" {
		t.Fatalf("approve-call --json: %v, %v", held, err)
	}
	if out := cmd("approve-call", held[0].ID).stdout; !strings.Contains(out, "approved "+held[0].ID) {
		t.Errorf("approve-call ID:\n%s", out)
	}
	if got := strings.TrimSpace(cmd("call", "demo__echo", "text=held").stdout); got != "held" {
		t.Errorf("the approved call = %q", got)
	}
	if r := run("call", "demo__echo", "text=held"); r.code == 0 {
		t.Error("one approval served two calls")
	}
	if r := run("deny-call", held[0].ID); r.code == 0 {
		t.Error("a used approval was denied")
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(cmd("log", "--json").stdout), &rows); err != nil {
		t.Fatal(err)
	}
	var who bool
	for _, row := range rows {
		if a, _ := row["approval"].(string); row["outcome"] == "ok" && strings.HasPrefix(a, "approved "+held[0].ID+" by cli:") {
			who = true
		}
	}
	if !who {
		t.Errorf("no audit row says who approved the call: %v", rows)
	}
}
