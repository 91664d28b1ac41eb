package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoredScriptHeldAndApproved: a stored script runs from the shell as
// a tool; edited in the configuration, it is held, its diff shown by
// diff, until approve.
func TestStoredScriptHeldAndApproved(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	write := func(script string) {
		doc := map[string]any{
			"context": map[string]any{"codeMode": map[string]any{"enabled": true, "cpuMs": 60000,
				"scripts": map[string]any{"sum": map[string]any{"description": "Adds a and b.", "script": script}}}},
			"mcpServers": map[string]any{"demo": map[string]any{"command": exe, "args": []string{"demo-server"}, "sandbox": "report"}},
		}
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "config.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`return (await demo.add({a: args.a, b: args.b})).sum`)
	if r := runHome(t, home, "call", "script__sum", `{"a": 2, "b": 3}`); r.code != 0 || strings.TrimSpace(r.stdout) != "5" {
		t.Fatalf("call script__sum: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Its row and its call's share a run: log --run shows them.
	if r := runHome(t, home, "call", "demo__add", `{"a": 1, "b": 1}`); r.code != 0 {
		t.Fatalf("a direct call: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var rows []map[string]any
	if r := runHome(t, home, "log", "--json"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &rows) != nil || len(rows) != 3 {
		t.Fatalf("log: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	run := ""
	for _, row := range rows {
		if row["tool"] == "script__sum" {
			run, _ = row["run"].(string)
		}
	}
	if run == "" {
		t.Fatalf("the script's row has no run: %v", rows)
	}
	if r := runHome(t, home, "log", "--run", run, "--json"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &rows) != nil ||
		len(rows) != 2 || rows[0]["tool"] != "demo:add" && rows[1]["tool"] != "demo:add" {
		t.Fatalf("log --run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	write(`return (await demo.add({a: args.a, b: args.b})).sum * 10`)
	if r := runHome(t, home, "call", "script__sum", `{"a": 2, "b": 3}`); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "definition_changed") {
		t.Fatalf("call of the changed script: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runHome(t, home, "diff", "code mode:sum"); r.code != 0 || !strings.Contains(r.stdout, "* 10") {
		t.Fatalf("diff: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runHome(t, home, "approve", "code mode:sum"); r.code != 0 {
		t.Fatalf("approve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runHome(t, home, "call", "script__sum", `{"a": 2, "b": 3}`); r.code != 0 || strings.TrimSpace(r.stdout) != "50" {
		t.Fatalf("call once approved: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
