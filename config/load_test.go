package config

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefault(t *testing.T) {
	const self = "/usr/local/bin/switchboard"
	cfg := Default(self)
	want := &Config{Source: DefaultSource, Servers: []*Server{trusted(stdio("demo", self, "demo-server"))}, Security: Security{}.WithDefaults(), Policy: Policy{}.WithDefaults()}
	if diff := cmp.Diff(want, cfg, serverOpts); diff != "" {
		t.Errorf("Default mismatch (-want +got):\n%s", diff)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	// Each call returns a fresh configuration.
	cfg.Servers[0].Args[0] = "changed"
	if got := Default(self).Servers[0].Args[0]; got != "demo-server" {
		t.Errorf("Default shares memory between calls: args[0] = %q", got)
	}

	// Without a known executable, "switchboard" is looked up on $PATH.
	if got := Default("").Servers[0].Command; got != "switchboard" {
		t.Errorf(`Default("").Command = %q, want "switchboard"`, got)
	}

	// The redacted view shows the executable, escaped, and round-trips.
	odd := Default("/opt/${weird}/switchboard")
	if got := odd.Servers[0].Redacted().Command; got != "/opt/$${weird}/switchboard" {
		t.Errorf("Redacted().Command = %q", got)
	}
	b, err := json.Marshal(odd)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustParse(t, string(b), nil).Servers[0].Command; got != "/opt/${weird}/switchboard" {
		t.Errorf("round trip Command = %q", got)
	}
}

// TestEmbeddedDefault parses default.json through the strict path, as any
// file, to make sure it stays a valid configuration on its own.
func TestEmbeddedDefault(t *testing.T) {
	cfg := mustParse(t, string(defaultJSON), nil)
	if diff := cmp.Diff([]*Server{trusted(stdio("demo", defaultCommand, "demo-server"))}, cfg.Servers, serverOpts); diff != "" {
		t.Errorf("default.json mismatch (-want +got):\n%s", diff)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	good := write("good.json", `{"mcpServers": {"s": {"command": "${BIN}"}}}`)
	cfg, err := Load(good, fakeEnv{"BIN": "/bin/srv"}.opts())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.Source != good || cfg.Servers[0].Command != "/bin/srv" {
		t.Errorf("Load = %v, Command %q", cfg, cfg.Servers[0].Command)
	}

	bad := write("bad.json", `{"mcpServers": {"github": {"comand": "npx"}}}`)
	_, err = Load(bad, nil)
	if want := bad + `: $.mcpServers.github.comand: unknown field "comand" (did you mean "command"?)`; err == nil || err.Error() != want {
		t.Errorf("Load(bad) = %v, want %s", err, want)
	}

	missing := filepath.Join(dir, "missing.json")
	_, err = Load(missing, nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want fs.ErrNotExist", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.File != missing || !strings.HasPrefix(e.Msg, "cannot read: ") || strings.Contains(e.Msg, missing) {
		t.Errorf("Load(missing) = %#v", e)
	}

	big := write("big.json", `{"mcpServers": {}}`+strings.Repeat(" ", MaxFileSize))
	_, err = Load(big, nil)
	if want := big + ": file is larger than 4 MiB"; err == nil || err.Error() != want {
		t.Errorf("Load(big) = %v, want %s", err, want)
	}

	if _, err := Load(dir, nil); err == nil || !strings.HasPrefix(err.Error(), dir+": cannot read: ") {
		t.Errorf("Load(dir) = %v", err)
	}
}

func TestHome(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("uses $HOME")
	}
	tests := []struct {
		name    string
		env     fakeEnv
		want    string
		wantErr bool
	}{
		{"SWITCHBOARD_HOME", fakeEnv{"SWITCHBOARD_HOME": "/srv/sb/", "HOME": "/home/u"}, "/srv/sb", false},
		{"relative SWITCHBOARD_HOME", fakeEnv{"SWITCHBOARD_HOME": "./sb"}, "sb", false},
		{"empty SWITCHBOARD_HOME", fakeEnv{"SWITCHBOARD_HOME": "", "HOME": "/home/u"}, "/home/u/.switchboard", false},
		{"HOME", fakeEnv{"HOME": "/home/u"}, "/home/u/.switchboard", false},
		{"nothing", fakeEnv{}, "", true},
		{"empty HOME", fakeEnv{"HOME": ""}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Home(tt.env.lookup)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("Home = %q, %v; want %q, error %t", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestLocate(t *testing.T) {
	home := t.TempDir()
	implicit := filepath.Join(home, FileName)

	// No file: the caller uses the default.
	path, exists, err := Locate(home, "")
	if path != implicit || exists || err != nil {
		t.Errorf("Locate(no file) = %q, %t, %v", path, exists, err)
	}

	if err := os.WriteFile(implicit, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	path, exists, err = Locate(home, "")
	if path != implicit || !exists || err != nil {
		t.Errorf("Locate(file) = %q, %t, %v", path, exists, err)
	}

	// An explicit file is used as is...
	explicit := filepath.Join(t.TempDir(), "other.json")
	if err := os.WriteFile(explicit, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	path, exists, err = Locate(home, explicit)
	if path != explicit || !exists || err != nil {
		t.Errorf("Locate(explicit) = %q, %t, %v", path, exists, err)
	}
	// ... and must exist: no silent fallback to the default.
	missing := filepath.Join(home, "nope.json")
	path, exists, err = Locate(home, missing)
	if path != missing || exists || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Locate(missing explicit) = %q, %t, %v", path, exists, err)
	}
	if _, _, err := Locate(home, home); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Locate(explicit dir) error = %v", err)
	}

	// config.json that is a directory is an error, not "no file".
	dirHome := t.TempDir()
	if err := os.Mkdir(filepath.Join(dirHome, FileName), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Locate(dirHome, ""); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Locate(config.json dir) error = %v", err)
	}
	if _, _, err := Locate("", ""); err == nil {
		t.Error(`Locate("", "") should fail`)
	}
}
