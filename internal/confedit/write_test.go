package confedit_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/confedit"
)

// TestWriteAtomic: the file gets the mode asked for, whatever the old
// one's was, and no temporary file is left beside it.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "f.json")
	for _, tt := range []struct {
		data string
		perm fs.FileMode
	}{{"one", 0o644}, {"two", 0o600}} {
		if err := confedit.WriteAtomic(path, []byte(tt.data), tt.perm); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != tt.perm {
			t.Errorf("after writing %q: %v, mode %04o, want %04o", tt.data, err, fi.Mode().Perm(), tt.perm)
		}
		if b, _ := os.ReadFile(path); string(b) != tt.data {
			t.Errorf("content %q, want %q", b, tt.data)
		}
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("files left beside it: %v", ents)
	}
}

// TestWriteNew: a file already there is never replaced (fs.ErrExist).
func TestWriteNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	if err := confedit.WriteNew(path, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := confedit.WriteNew(path, []byte("second"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second WriteNew: %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Errorf("content %q, want first", b)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("files left beside it: %v", ents)
	}
}

// TestCheckPrivate: a regular file of the user's with mode 0600 passes;
// one group or others may read or change, one that is not a regular file,
// or another user's is refused with what to do.
func TestCheckPrivate(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  string // "" passes
	}{
		{"0600", func(t *testing.T, path string) {}, ""},
		{"group readable", func(t *testing.T, path string) { os.Chmod(path, 0o640) }, "group or others may read or change it (mode 0640); run 'chmod 600 "},
		{"world writable", func(t *testing.T, path string) { os.Chmod(path, 0o602) }, "(mode 0602, writable by others)"},
		{"a directory", func(t *testing.T, path string) { os.Remove(path); os.Mkdir(path, 0o700) }, "not a regular file"},
		{"another user's", func(t *testing.T, path string) {
			if os.Geteuid() != 0 {
				t.Skip("giving a file to another user needs root (CI runs as root)")
			}
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatalf("this case needs root to give the file away: %v", err)
			}
		}, "belongs to user 65534"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "secret")
			if err := os.WriteFile(path, []byte("s"), 0o600); err != nil {
				t.Fatal(err)
			}
			tt.setup(t, path)
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			err = confedit.CheckPrivate(path, fi, "a secret")
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("CheckPrivate: %v, want %q", err, tt.want)
			}
		})
	}
}

// TestEditSweepsTemps: the temporary files a writer killed mid-write left
// beside the file (its own and its backup's) are removed by the next edit;
// other files that look alike are not.
func TestEditSweepsTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "creds.json")
	left := []string{".creds.json-123456", ".creds.json.bak-987"}
	kept := []string{".creds.json-notours", "creds.json-123", ".other.json-123", ".creds.json-"}
	for _, name := range append(append([]string{}, left...), kept...) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(`{"TOKEN":"secret"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := confedit.Edit(path, nil, func(o *confedit.Object) error { o.Set("a", json.RawMessage(`1`)); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, name := range left {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is still there (%v)", name, err)
		}
	}
	for _, name := range kept {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
}

// TestEditNoBackup: with NoBackup no copy of the old content is kept, and
// a backup an earlier write left is removed, even by an edit that changes
// nothing.
func TestEditNoBackup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "creds.json")
	set := func(v string, opts *confedit.Options) {
		t.Helper()
		if err := confedit.Edit(path, opts, func(o *confedit.Object) error { o.Set("TOKEN", json.RawMessage(`"`+v+`"`)); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	set("old-secret", nil)
	set("rotated", nil)
	if b, err := os.ReadFile(path + confedit.BackupSuffix); err != nil || !strings.Contains(string(b), "old-secret") {
		t.Fatalf("without NoBackup: backup %q, %v", b, err)
	}
	set("rotated", &confedit.Options{NoBackup: true})
	if _, err := os.Stat(path + confedit.BackupSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old backup is still there after an edit with NoBackup (%v)", err)
	}
	set("rotated again", &confedit.Options{NoBackup: true})
	if _, err := os.Stat(path + confedit.BackupSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a backup was written with NoBackup (%v)", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
	}
}
