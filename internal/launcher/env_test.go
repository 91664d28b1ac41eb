//go:build unix

package launcher

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChildEnv(t *testing.T) {
	host := map[string]string{
		"HOME":                  "/home/u",
		"PATH":                  "/usr/bin:/bin",
		"TMPDIR":                "/tmp/u",
		"LANG":                  "en_US.UTF-8",
		"AWS_SECRET_ACCESS_KEY": "secret",
		"GITHUB_TOKEN":          "ghp_secret",
		"LC_ALL":                "C",
		"SSH_AUTH_SOCK":         "/run/agent",
	}
	lookup := func(k string) (string, bool) { v, ok := host[k]; return v, ok }
	tests := []struct {
		name  string
		host  func(string) (string, bool)
		extra map[string]string
		want  []string
	}{
		{
			name: "allowlist only",
			host: lookup,
			want: []string{"HOME=/home/u", "LANG=en_US.UTF-8", "PATH=/usr/bin:/bin", "TMPDIR=/tmp/u"},
		},
		{
			name:  "extra added and overriding, sorted",
			host:  lookup,
			extra: map[string]string{"GITHUB_TOKEN": "scoped", "PATH": "/opt/bin", "A": "1"},
			want:  []string{"A=1", "GITHUB_TOKEN=scoped", "HOME=/home/u", "LANG=en_US.UTF-8", "PATH=/opt/bin", "TMPDIR=/tmp/u"},
		},
		{
			name: "unset host vars are absent, empty ones kept",
			host: func(k string) (string, bool) {
				if k == "HOME" {
					return "", true
				}
				return "", false
			},
			want: []string{"HOME="},
		},
		{
			name:  "empty host",
			host:  func(string) (string, bool) { return "", false },
			extra: map[string]string{"X": "y"},
			want:  []string{"X=y"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ChildEnv(tt.host, tt.extra)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ChildEnv mismatch (-want +got):\n%s", diff)
			}
			// Deterministic: same inputs, same slice.
			if again := ChildEnv(tt.host, tt.extra); !cmp.Equal(got, again) {
				t.Errorf("ChildEnv not deterministic: %q then %q", got, again)
			}
		})
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "srv")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()

	tests := []struct {
		prog, path, dir string
		want            string
		wantErr         error // nil: success; ErrProgramNotFound; errAny: some other error
	}{
		{"srv", other + ":" + dir, "", exe, nil},
		{"srv", other, "", "", ErrProgramNotFound},
		{"srv", "", "", "", ErrProgramNotFound},
		{"data", dir, "", "", ErrProgramNotFound},                 // not executable: skipped
		{"sub", dir, "", "", ErrProgramNotFound},                  // a directory: skipped
		{"srv", "relative:" + other, dir, "", ErrProgramNotFound}, // relative entries skipped
		{exe, "", "", exe, nil},
		{"./srv", "", dir, "./srv", nil},
		{"./srv", "", other, "", ErrProgramNotFound},
		{filepath.Join(dir, "data"), "", "", "", errAny},
	}
	for _, tt := range tests {
		got, err := lookPath(tt.prog, tt.path, tt.dir)
		switch {
		case tt.wantErr == nil && (err != nil || got != tt.want):
			t.Errorf("lookPath(%q, %q, %q) = %q, %v; want %q", tt.prog, tt.path, tt.dir, got, err, tt.want)
		case tt.wantErr == errAny && (err == nil || errors.Is(err, ErrProgramNotFound)):
			t.Errorf("lookPath(%q, %q, %q) error = %v; want a non-not-found error", tt.prog, tt.path, tt.dir, err)
		case tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
			t.Errorf("lookPath(%q, %q, %q) error = %v; want %v", tt.prog, tt.path, tt.dir, err, tt.wantErr)
		}
	}
}

var errAny = errors.New("any error")
