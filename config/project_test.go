package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeProject(t *testing.T, dir, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, ProjectFileName), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadProjectNone(t *testing.T) {
	p, err := LoadProject(t.TempDir(), nil)
	if p != nil || err != nil {
		t.Fatalf("LoadProject of a directory without %s = %v, %v; want nil, nil", ProjectFileName, p, err)
	}
}

func TestLoadProjectStrict(t *testing.T) {
	dir := t.TempDir()
	abs, _ := filepath.Abs(filepath.Join(dir, ProjectFileName))
	for _, tt := range []struct{ name, src, want string }{
		{"unknown field", `{"mcpServers": {"a": {"comand": "x"}}}`,
			abs + `: $.mcpServers.a.comand: unknown field "comand" (did you mean "command"?)`},
		{"security", `{"mcpServers": {}, "security": {}}`,
			abs + `: $.security: "security" is not read from a project file, which holds servers only: set it in the user configuration`},
		{"store", `{"mcpServers": {}, "store": {"postgres": "postgres://x"}}`,
			abs + `: $.store: "store" is not read from a project file, which holds servers only: set it in the user configuration`},
		{"syntax", `{"mcpServers": {},}`,
			abs + `: invalid JSON at line 1, column 19: invalid character '}' looking for beginning of object key string (trailing commas are not allowed in JSON)`},
	} {
		writeProject(t, dir, tt.src)
		_, err := LoadProject(dir, fakeEnv{}.opts())
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.name, err, tt.want)
		}
	}
}

func TestWithProject(t *testing.T) {
	dir := t.TempDir()
	home := t.TempDir()
	writeProject(t, dir, `{"mcpServers": {"proj": {"command": "run-it", "args": ["--x"]}, "Mine": {"command": "other", "prefix": "m2"}, "p2": {"command": "y", "prefix": "MINE"}}}`)
	user := mustParse(t, `{"mcpServers": {"mine": {"command": "mine"}}}`, nil)
	load := func() *Project {
		t.Helper()
		p, err := LoadProject(dir, fakeEnv{}.opts())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	p := load()
	ok, err := TrustedProject(home, p)
	if ok || err != nil {
		t.Fatalf("TrustedProject before trust = %t, %v", ok, err)
	}
	cfg, warnings := user.WithProject(p, false)
	if got := strings.Join(cfg.Names(), ","); got != "mine,proj" {
		t.Errorf("names = %s, want mine,proj", got)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], `server "Mine" in `+p.Path+` is ignored: the user configuration has a server of that name`) ||
		!strings.Contains(warnings[1], `its prefix "MINE" is a user server's`) {
		t.Errorf("warnings = %q", warnings)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	s := cfg.Server("proj")
	if s.Project != p.Path || s.Unusable == nil || s.Unusable.Code != CodeProjectUntrusted || !errors.Is(s.Unusable, ErrProjectUntrusted) || s.Command != "" || s.Args != nil {
		t.Fatalf("untrusted project server = %+v, Unusable %v", s, s.Unusable)
	}
	want := `server "proj": it comes from ` + p.Path + `, which is not trusted yet: run 'switchboard trust-project' in its directory to review and trust it`
	if s.Unusable.Error() != want {
		t.Errorf("reason:\n got %s\nwant %s", s.Unusable.Error(), want)
	}
	if r := s.Redacted(); r.Command != "run-it" {
		t.Errorf("Redacted command = %q, want it as written", r.Command)
	}
	if cfg.Server("mine").Command != "mine" || user.Server("proj") != nil {
		t.Errorf("the user's server changed, or the user config was modified")
	}

	if err := TrustProject(home, p); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(home, TrustFileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("trust file: %v, mode %v", err, fi.Mode())
	}
	p = load()
	if ok, err := TrustedProject(home, p); !ok || err != nil {
		t.Fatalf("TrustedProject after trust = %t, %v", ok, err)
	}
	cfg, _ = user.WithProject(p, true)
	if s := cfg.Server("proj"); s.Unusable != nil || s.Command != "run-it" || s.Args[0] != "--x" {
		t.Errorf("trusted project server = %+v", s)
	}

	// One byte more: untrusted again.
	writeProject(t, dir, `{"mcpServers": {"proj": {"command": "run-it", "args": ["--x"]}, "Mine": {"command": "other", "prefix": "m2"}, "p2": {"command": "y", "prefix": "MINE"}}} `)
	p = load()
	if ok, _ := TrustedProject(home, p); ok {
		t.Error("a changed file is still trusted")
	}
	if st, _ := ProjectStatus(home, p); st != "changed" {
		t.Errorf("ProjectStatus = %q, want changed", st)
	}

	// A trust file others can write is refused.
	if err := os.Chmod(filepath.Join(home, TrustFileName), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := TrustedProject(home, p); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("TrustedProject with a world-writable trust file: %v", err)
	}
	// So is one group or others may read, or another user's: the same
	// check as every file that must be private.
	if err := os.Chmod(filepath.Join(home, TrustFileName), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := TrustedProject(home, p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("TrustedProject with a group-readable trust file: %v", err)
	}
	os.Chmod(filepath.Join(home, TrustFileName), 0o600)
	if err := os.Chown(filepath.Join(home, TrustFileName), 65534, 65534); err != nil {
		t.Fatalf("this case needs root to give the file away: %v", err)
	}
	if _, err := TrustedProject(home, p); err == nil || !strings.Contains(err.Error(), "belongs to user 65534") {
		t.Errorf("TrustedProject with another user's trust file: %v", err)
	}
}
