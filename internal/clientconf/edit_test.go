package clientconf

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConnectEdits checks the layout of small edits byte for byte.
func TestConnectEdits(t *testing.T) {
	gw := Entry{Transport: Stdio, Command: "sb"}
	tests := []struct {
		name, client, file, in string
		opts                   Options
		want                   string
	}{
		{
			name: "empty object", client: "cursor", file: "mcp.json", in: "{}\n",
			want: "{\n  \"mcpServers\": {\n    \"switchboard\": {\n      \"command\": \"sb\"\n    }\n  }\n}\n",
		},
		{
			name: "compact file stays compact", client: "cursor", file: "mcp.json",
			in:   `{"mcpServers":{"a":{"command":"x"}}}`,
			want: `{"mcpServers":{"a":{"command":"x"}, "switchboard":{"command":"sb"}}}`,
		},
		{
			name: "tabs", client: "claude-desktop", file: "claude_desktop_config.json",
			in:   "{\n\t\"mcpServers\": {\n\t\t\"a\": {\"command\": \"x\"}\n\t}\n}",
			want: "{\n\t\"mcpServers\": {\n\t\t\"a\": {\"command\": \"x\"},\n\t\t\"switchboard\": {\n\t\t\t\"command\": \"sb\"\n\t\t}\n\t}\n}",
		},
		{
			name: "null servers", client: "cursor", file: "mcp.json",
			in:   "{\n  \"mcpServers\": null\n}\n",
			want: "{\n  \"mcpServers\": {\n    \"switchboard\": {\n      \"command\": \"sb\"\n    }\n  }\n}\n",
		},
		{
			name: "replace keeps place and comments", client: "vscode", file: "mcp.json",
			in:   "{\n  \"servers\": {\n    // ours\n    \"switchboard\": {\"command\": \"old\"}, // trailing\n    \"b\": {\"command\": \"y\"},\n  },\n}\n",
			want: "{\n  \"servers\": {\n    // ours\n    \"switchboard\": {\n      \"type\": \"stdio\",\n      \"command\": \"sb\"\n    }, // trailing\n    \"b\": {\"command\": \"y\"},\n  },\n}\n",
		},
		{
			name: "move from a strict file leaves no trailing comma", client: "claude-desktop", file: "claude_desktop_config.json",
			in:   "{\n  \"mcpServers\": {\n    \"switchboard\": {\"command\": \"old\"},\n    \"b\": {\"command\": \"y\"}\n  }\n}\n",
			opts: Options{Move: true},
			want: "{\n  \"mcpServers\": {\n    \"switchboard\": {\n      \"command\": \"sb\"\n    }\n  }\n}\n",
		},
		{
			name: "settings.json nesting created", client: "vscode", file: "settings.json",
			in:   "{\n    \"editor.fontSize\": 14, // big\n}\n",
			want: "{\n    \"editor.fontSize\": 14, // big\n    \"mcp\": {\n        \"servers\": {\n            \"switchboard\": {\n                \"type\": \"stdio\",\n                \"command\": \"sb\"\n            }\n        }\n    },\n}\n",
		},
		{
			name: "codex replaced in place", client: "codex", file: "config.toml",
			in:   "a = 1\n\n[mcp_servers.switchboard]\ncommand = \"old\"\n\n[mcp_servers.switchboard.env]\nX = \"1\"\n\n# next\n[b]\nc = 2\n",
			want: "a = 1\n\n[mcp_servers.switchboard]\ncommand = \"sb\"\n\n# next\n[b]\nc = 2\n",
		},
		{
			name: "codex comments only", client: "codex", file: "config.toml", in: "# settings\n",
			want: "# settings\n\n[mcp_servers.switchboard]\ncommand = \"sb\"\n",
		},
		{
			name: "codex quoted names", client: "codex", file: "config.toml",
			in:   "[mcp_servers.'my tools']\ncommand = \"x\"\n",
			opts: Options{Move: true, Name: "sb.gw"},
			want: "[mcp_servers.\"sb.gw\"]\ncommand = \"sb\"\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			write(t, path, tc.in)
			c := mustClient(t, tc.client)
			if _, err := Connect(c, path, gw, tc.opts); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(readBytes(t, path))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if _, err := Disconnect(c, path, tc.opts); err != nil {
				t.Fatal(err)
			}
			if got := string(readBytes(t, path)); got != tc.in {
				t.Errorf("disconnect: got %q, want the original %q", got, tc.in)
			}
		})
	}
}

func TestConnectRefuses(t *testing.T) {
	tests := []struct {
		name, client, file, in string
		gw                     Entry
		opts                   Options
		want                   string
	}{
		{"claude desktop has no remote servers", "claude-desktop", "claude_desktop_config.json", `{}`, gwHTTP, Options{}, "stdio servers only"},
		{"claude desktop expands nothing", "claude-desktop", "claude_desktop_config.json", `{}`,
			Entry{Command: "sb", Env: map[string]string{"T": "${T}"}}, Options{}, "does not expand variables"},
		{"codex expands nothing in args", "codex", "config.toml", ``, Entry{Command: "sb", Args: []string{"${X}"}}, Options{}, "does not expand variables"},
		{"codex has no sse", "codex", "config.toml", ``, Entry{Transport: SSE, URL: "http://127.0.0.1/sse"}, Options{}, "not sse"},
		{"codex inline servers", "codex", "config.toml", "mcp_servers = { a = { command = \"x\" } }\n", gwStdio, Options{Move: true}, "not written as a [mcp_servers.a] table"},
		{"a server given twice", "cursor", "mcp.json", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, gwStdio, Options{}, `"a" appears twice`},
		{"servers given twice", "cursor", "mcp.json", `{"mcpServers": {}, "mcpServers": {}}`, gwStdio, Options{}, `"mcpServers" appears twice`},
		{"no command", "cursor", "mcp.json", `{}`, Entry{}, Options{}, "needs a command"},
		{"servers not an object", "cursor", "mcp.json", `{"mcpServers": 1}`, gwStdio, Options{}, "not an object"},
		{"cursor no default values", "cursor", "mcp.json", `{}`, Entry{Transport: HTTP, URL: "${U:-http://127.0.0.1}"}, Options{}, "no default values"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			write(t, path, tc.in)
			_, err := Connect(mustClient(t, tc.client), path, tc.gw, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if got := string(readBytes(t, path)); got != tc.in {
				t.Errorf("the file changed: %q", got)
			}
			if _, err := os.Stat(path + BackupSuffix); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a backup was written: %v", err)
			}
		})
	}
}

func TestConnectNewFile(t *testing.T) {
	home := t.TempDir()
	c := mustClient(t, "windsurf")
	path, ok := c.Find(Place{Home: home})
	if ok {
		t.Fatal("found a file in an empty home")
	}
	ch, err := Connect(c, path, gwHTTP, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Before != nil {
		t.Errorf("Before = %q, want nil", ch.Before)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	if b := readBytes(t, ch.Backup); len(b) != 0 {
		t.Errorf("backup of a missing file = %q, want empty", b)
	}
	if _, err := Disconnect(c, path, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the file Connect created is still there: %v", err)
	}
}

func TestConnectKeepsModeAndLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, target, `{"mcpServers": {}}`)
	if err := os.Chmod(target, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "mcp.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	c := mustClient(t, "cursor")
	ch, err := Connect(c, link, gwHTTP, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Path != target {
		t.Errorf("Path = %q, want the link's target", ch.Path)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640 kept", fi.Mode().Perm())
	}
	if !strings.Contains(string(readBytes(t, link)), DefaultName) {
		t.Error("the entry is not in the file")
	}
}

func TestPlanWritesNothing(t *testing.T) {
	path := place(t, "cursor_mcp.json", "mcp.json")
	orig := readBytes(t, path)
	ch, err := Plan(mustClient(t, "cursor"), path, gwHTTP, Options{Move: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readBytes(t, path), orig) {
		t.Error("Plan changed the file")
	}
	if _, err := os.Stat(ch.Backup); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Plan wrote a backup: %v", err)
	}
	if diff := cmp.Diff([]string{"notes", "remote", "workspace"}, ch.Removed); diff != "" {
		t.Errorf("Removed (-want +got):\n%s", diff)
	}
	if !bytes.Contains(ch.After, []byte(`"switchboard"`)) {
		t.Errorf("After lacks the entry:\n%s", ch.After)
	}
}

// TestReconnectKeepsBackup: a second Connect (a changed gateway entry)
// keeps the backup of the file as it was before Switchboard.
func TestReconnectKeepsBackup(t *testing.T) {
	path := place(t, "claude_desktop_config.json", "claude_desktop_config.json")
	orig := readBytes(t, path)
	c := mustClient(t, "claude-desktop")
	if _, err := Connect(c, path, gwStdio, Options{}); err != nil {
		t.Fatal(err)
	}
	gw2 := gwStdio
	gw2.Args = append([]string{}, "serve", "--home", "/srv/sb")
	if _, err := Connect(c, path, gw2, Options{Move: true}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readBytes(t, path+BackupSuffix), orig) {
		t.Fatal("the backup was overwritten")
	}
	if _, err := Disconnect(c, path, Options{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readBytes(t, path), orig) {
		t.Error("not restored")
	}
}

// TestConnectStaleBackup: a backup left from a gateway entry the user has
// since removed by hand is replaced, not restored over later edits.
func TestConnectStaleBackup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	write(t, path, `{"mcpServers": {"old": {"command": "x"}}}`)
	write(t, path+BackupSuffix, `{"mcpServers": {"ancient": {"command": "y"}}}`)
	c := mustClient(t, "cursor")
	if _, err := Connect(c, path, gwStdio, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := string(readBytes(t, path+BackupSuffix)); got != `{"mcpServers": {"old": {"command": "x"}}}` {
		t.Errorf("backup = %s", got)
	}
}

// TestDisconnectKeepsEdits: edits made after Connect survive Disconnect;
// only the gateway's entry goes and the moved servers come back.
func TestDisconnectKeepsEdits(t *testing.T) {
	path := place(t, "claude_desktop_config.json", "claude_desktop_config.json")
	c := mustClient(t, "claude-desktop")
	if _, err := Connect(c, path, gwStdio, Options{Move: true}); err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(readBytes(t, path)), `"Ctrl+Space"`, `"Alt+Space"`, 1)
	edited = strings.Replace(edited, `"mcpServers": {`, `"mcpServers": {
    "added": {"command": "new"},`, 1)
	write(t, path, edited)
	ch, err := Disconnect(c, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"filesystem", "github", "cline-style"}, ch.Restored); diff != "" {
		t.Errorf("Restored (-want +got):\n%s", diff)
	}
	got := string(readBytes(t, path))
	if !strings.Contains(got, `"Alt+Space"`) {
		t.Errorf("the edited setting was lost:\n%s", got)
	}
	res, err := Read(c, path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range res.Servers {
		names = append(names, e.Name)
	}
	if diff := cmp.Diff([]string{"added", "filesystem", "github", "cline-style"}, names); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if gh := res.Servers[2]; gh.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "${GITHUB_PERSONAL_ACCESS_TOKEN}" || len(res.Secrets) != 1 ||
		res.Secrets[0].Value != "ghp_abcdefghijklmnopqrstuvwxyz0123456789" {
		t.Errorf("github restored as %+v, secrets %+v", gh, res.Secrets)
	}
}

func TestDisconnectConflict(t *testing.T) {
	path := place(t, "cursor_mcp.json", "mcp.json")
	c := mustClient(t, "cursor")
	if _, err := Connect(c, path, gwHTTP, Options{Move: true}); err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(readBytes(t, path)), `"mcpServers": {`, `"mcpServers": {
    "notes": {"command": "my-own-notes"},`, 1)
	write(t, path, edited)
	_, err := Disconnect(c, path, Options{})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), `"notes"`) {
		t.Fatalf("err = %v, want ErrConflict naming notes", err)
	}
	if string(readBytes(t, path)) != edited {
		t.Fatal("a refused disconnect changed the file")
	}
	if _, err := Disconnect(c, path, Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	res, err := Read(c, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Servers) != 3 || res.Servers[0].Command != "my-own-notes" {
		t.Errorf("servers after a forced disconnect: %+v", res.Servers)
	}
}

func TestDisconnectRefuses(t *testing.T) {
	dir := t.TempDir()
	c := mustClient(t, "cursor")
	path := filepath.Join(dir, "mcp.json")
	if _, err := Disconnect(c, path, Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
	write(t, path, `{"mcpServers": {"switchboard": {"command": "x"}}}`)
	if _, err := Disconnect(c, path, Options{}); err == nil || !strings.Contains(err.Error(), "no backup") {
		t.Errorf("no backup: err = %v", err)
	}
	write(t, path, `{"mcpServers": {}}`)
	write(t, path+BackupSuffix, `{}`)
	if _, err := Disconnect(c, path, Options{}); err == nil || !strings.Contains(err.Error(), "nothing to disconnect") {
		t.Errorf("no entry: err = %v", err)
	}
}

func TestRender(t *testing.T) {
	for _, c := range Clients() {
		for _, gw := range []struct {
			kind string
			e    Entry
		}{
			{"stdio", Entry{Name: "switchboard", Command: "switchboard", Args: []string{"serve", "--home", "/srv/sb"}, Env: map[string]string{"B": "2", "A": "1"}}},
			{"http", Entry{Name: "switchboard", Transport: HTTP, URL: "http://127.0.0.1:8765/mcp", BearerTokenEnvVar: "SWITCHBOARD_TOKEN"}},
		} {
			b, err := Render(c, gw.e)
			if c.ID == "claude-desktop" && gw.kind == "http" {
				if err == nil {
					t.Errorf("claude-desktop rendered an http entry")
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s %s: %v", c.ID, gw.kind, err)
			}
			golden(t, "render/"+c.ID+"-"+gw.kind, b)
		}
	}
}

// TestReplaceRefusesChangedFile: a file the client rewrote between reading
// and writing is not overwritten.
func TestReplaceRefusesChangedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	write(t, path, `{"mcpServers": {"theirs": {"command": "new"}}}`)
	err := replace(path, []byte(`{"mcpServers": {}}`), []byte(`{"mcpServers": {"switchboard": {"command": "sb"}}}`), 0o600)
	if err == nil || !strings.Contains(err.Error(), "changed while it was being edited") {
		t.Fatalf("err = %v", err)
	}
	if got := string(readBytes(t, path)); got != `{"mcpServers": {"theirs": {"command": "new"}}}` {
		t.Errorf("overwritten: %s", got)
	}
	if err := replace(filepath.Join(filepath.Dir(path), "absent.json"), []byte("{}"), []byte("{}"), 0o600); err == nil {
		t.Error("a file that disappeared was written")
	}
}

// TestConnectLeavesNoTemporaryFiles: the directory holds the file and its
// backup, nothing else.
func TestConnectLeavesNoTemporaryFiles(t *testing.T) {
	path := place(t, "gemini_settings.json", "settings.json")
	if _, err := Connect(mustClient(t, "gemini"), path, gwHTTP, Options{}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"settings.json", "settings.json" + BackupSuffix}, names); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
