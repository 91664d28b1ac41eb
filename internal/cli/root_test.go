package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGlobalFlagsBeforeCommand: flags may come before the command's name,
// with their values: those every command takes, and the command's own
// (--scope project add); another command's flag is a usage error.
func TestGlobalFlagsBeforeCommand(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	exe, _ := os.Executable()
	r := runIn(t, dir, home, "--scope", "project", "add", "proj", "--no-verify", "--", exe, "demo-server")
	if r.code != 0 {
		t.Fatalf("--scope project add: exit %d\n%s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".mcp.json")); err != nil || !strings.Contains(string(b), `"proj"`) {
		t.Errorf(".mcp.json: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(home, "config.json")); err == nil {
		t.Error("the home's config.json was written")
	}
	other := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"home before", []string{"--home", other, "-v", "servers", "--json"}, 0, `"name": "demo"`, ""},
		{"config before", []string{"--config=" + filepath.Join(other, "none.json"), "tools"}, 2, "", "none.json"},
		{"single dash long", []string{"-json", "version"}, 0, `"version"`, ""},
		{"single dash after", []string{"tools", "-format", "openai"}, 0, `"type": "function"`, ""},
		{"scope to servers", []string{"--scope", "project", "servers"}, 2, "", "servers takes no --scope"},
		{"command flags before", []string{"--stdio", "--http", "127.0.0.1:0", "serve"}, 2, "", "not both"},
		{"another command's flag", []string{"--raw", "-n", "3", "servers"}, 2, "", "servers takes no --n, --raw"},
		{"unknown flag", []string{"tools", "--bogus"}, 2, "", "unknown flag: --bogus"},
		{"unknown flag json", []string{"tools", "--bogus", "--json"}, 2, `"code": "usage"`, ""},
		{"bad value", []string{"log", "-n", "many"}, 2, "", "Usage: switchboard log"},
		{"-version", []string{"-version"}, 0, "switchboard 1.2.3", ""},
		{"-h", []string{"tools", "-h"}, 0, "Usage: switchboard tools", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runIn(t, dir, home, tt.args...)
			if r.code != tt.wantCode || !strings.Contains(r.stdout, tt.wantOut) || !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("switchboard %q: exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, r.code, tt.wantCode, r.stdout, r.stderr)
			}
		})
	}
}
