package clientconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPaths(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	h := "/home/u"
	tests := []struct {
		client string
		place  Place
		want   []string
	}{
		{"claude-desktop", Place{Home: h}, []string{h + "/.config/Claude/claude_desktop_config.json"}},
		{"claude-desktop", Place{Home: h, Getenv: env("XDG_CONFIG_HOME", "/xdg")}, []string{"/xdg/Claude/claude_desktop_config.json"}},
		{"claude-desktop", Place{Home: h, Getenv: env("XDG_CONFIG_HOME", "relative")}, []string{h + "/.config/Claude/claude_desktop_config.json"}},
		{"claude-desktop", Place{Home: "/Users/u", OS: "darwin"}, []string{"/Users/u/Library/Application Support/Claude/claude_desktop_config.json"}},
		{"claude-desktop", Place{Home: "/c/u", OS: "windows", Getenv: env("APPDATA", "/c/u/AppData/Roaming")}, []string{filepath.Join("/c/u/AppData/Roaming", "Claude", "claude_desktop_config.json")}},
		{"claude-desktop", Place{Home: "/c/u", OS: "windows"}, []string{filepath.Join("/c/u", "AppData", "Roaming", "Claude", "claude_desktop_config.json")}},
		{"claude-code", Place{Home: h}, []string{h + "/.claude.json"}},
		{"claude-code", Place{Home: h, Getenv: env("CLAUDE_CONFIG_DIR", "/cc")}, []string{"/cc/.claude.json", h + "/.claude.json"}},
		{"cursor", Place{Home: h, OS: "darwin"}, []string{h + "/.cursor/mcp.json"}},
		{"vscode", Place{Home: h}, []string{h + "/.config/Code/User/mcp.json", h + "/.config/Code/User/settings.json"}},
		{"vscode", Place{Home: "/Users/u", OS: "darwin"}, []string{"/Users/u/Library/Application Support/Code/User/mcp.json", "/Users/u/Library/Application Support/Code/User/settings.json"}},
		{"windsurf", Place{Home: h}, []string{h + "/.codeium/windsurf/mcp_config.json"}},
		{"codex", Place{Home: h}, []string{h + "/.codex/config.toml"}},
		{"codex", Place{Home: h, Getenv: env("CODEX_HOME", "/cx")}, []string{"/cx/config.toml"}},
		{"gemini", Place{Home: h}, []string{h + "/.gemini/settings.json"}},
	}
	for _, tc := range tests {
		got := mustClient(t, tc.client).Paths(tc.place)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %+v (-want +got):\n%s", tc.client, tc.place, diff)
		}
	}
}

func TestProjectPath(t *testing.T) {
	want := map[string]string{
		"claude-desktop": "", "claude-code": "/p/.mcp.json", "cursor": "/p/.cursor/mcp.json",
		"vscode": "/p/.vscode/mcp.json", "windsurf": "", "codex": "/p/.codex/config.toml",
		"gemini": "/p/.gemini/settings.json",
	}
	got := map[string]string{}
	for _, c := range Clients() {
		got[c.ID] = c.ProjectPath("/p")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFind(t *testing.T) {
	home := t.TempDir()
	c := mustClient(t, "vscode")
	p := Place{Home: home}
	if got, ok := c.Find(p); ok || got != filepath.Join(home, ".config/Code/User/mcp.json") {
		t.Fatalf("Find in an empty home = %q, %v", got, ok)
	}
	settings := filepath.Join(home, ".config/Code/User/settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Find(p); !ok || got != settings {
		t.Fatalf("Find = %q, %v; want the settings file", got, ok)
	}
}

func TestLookup(t *testing.T) {
	for _, c := range Clients() {
		got, err := Lookup(c.ID)
		if err != nil || got != c {
			t.Errorf("Lookup(%q) = %v, %v", c.ID, got, err)
		}
	}
	tests := []struct{ id, want string }{
		{"cusror", `did you mean "cursor"?`},
		{"claude", "known: claude-desktop, claude-code"},
		{"vs-code", `did you mean "vscode"?`},
		{"emacs-with-mcp", "known: claude-desktop, claude-code, cursor, vscode, windsurf, codex, gemini"},
	}
	for _, tc := range tests {
		_, err := Lookup(tc.id)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Lookup(%q) = %v, want %q", tc.id, err, tc.want)
		}
	}
}

func TestDiscover(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	for _, f := range []string{
		filepath.Join(home, ".cursor/mcp.json"),
		filepath.Join(home, ".codex/config.toml"),
		filepath.Join(home, ".config/Code/User/mcp.json"),
		filepath.Join(home, ".config/Code/User/settings.json"),
		filepath.Join(proj, ".mcp.json"),
		filepath.Join(proj, ".vscode/mcp.json"),
	} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A directory where a file is expected is not a file.
	if err := os.MkdirAll(filepath.Join(home, ".gemini/settings.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID, Path string
		Project  bool
	}
	var got []row
	for _, f := range Discover(Place{Home: home}, proj) {
		got = append(got, row{f.Client.ID, f.Path, f.Project})
	}
	want := []row{
		{"cursor", filepath.Join(home, ".cursor/mcp.json"), false},
		{"vscode", filepath.Join(home, ".config/Code/User/mcp.json"), false},
		{"vscode", filepath.Join(home, ".config/Code/User/settings.json"), false},
		{"codex", filepath.Join(home, ".codex/config.toml"), false},
		{"claude-code", filepath.Join(proj, ".mcp.json"), true},
		{"vscode", filepath.Join(proj, ".vscode/mcp.json"), true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if n := len(Discover(Place{Home: home}, "")); n != 4 {
		t.Errorf("without a project: %d files, want 4", n)
	}
	// Run from the home directory, ~/.cursor/mcp.json is both Cursor's
	// user file and the project's: it is listed once, as the user file.
	got = nil
	for _, f := range Discover(Place{Home: home}, home) {
		got = append(got, row{f.Client.ID, f.Path, f.Project})
	}
	if diff := cmp.Diff(want[:4], got); diff != "" {
		t.Errorf("from the home directory (-want +got):\n%s", diff)
	}
}
