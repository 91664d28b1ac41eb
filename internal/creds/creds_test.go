package creds_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/creds"
)

// TestUpdateAndLoad: credentials land in a 0600 file (backup too), are
// replaced and removed by name, and a missing file holds none.
func TestUpdateAndLoad(t *testing.T) {
	path := creds.Path(filepath.Join(t.TempDir(), "home"))
	if m, err := creds.Load(path); err != nil || len(m) != 0 {
		t.Fatalf("missing file: %v %v", m, err)
	}
	if err := creds.Update(path, map[string]string{"a.T": "one", "b.K": "two"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := creds.Update(path, map[string]string{"a.T": "three"}, []string{"b.K"}); err != nil {
		t.Fatal(err)
	}
	m, err := creds.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"a.T": "three"}, m); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, want mode 0600", path, err)
	}
	// No copy keeps a secret after it was rotated or removed.
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(path), e.Name()))
		if err == nil && (strings.Contains(string(b), `"one"`) || strings.Contains(string(b), `"two"`)) {
			t.Errorf("%s keeps a rotated or removed secret: %s", e.Name(), b)
		}
	}
}

// TestRefused: a file others may read, or that is not a regular file, is
// refused by Load and Update, with advice and without its content.
func TestRefused(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  string
	}{
		{"group readable", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(`{"a": "secret-value"}`), 0o600)
			os.Chmod(path, 0o640)
		}, "chmod 600"},
		{"world writable", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(`{"a": "secret-value"}`), 0o600)
			os.Chmod(path, 0o602)
		}, "mode 0602"},
		{"symlink", func(t *testing.T, path string) {
			other := filepath.Join(filepath.Dir(path), "other")
			os.WriteFile(other, []byte(`{"a": "secret-value"}`), 0o600)
			os.Symlink(other, path)
		}, "not a regular file"},
		{"another user's", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(`{"a": "secret-value"}`), 0o600)
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatalf("this case needs root to give the file away: %v", err)
			}
		}, "belongs to user 65534"},
		{"not strings", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(`{"a": 1}`), 0o600)
		}, `value of "a" is not a string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), creds.FileName)
			tt.setup(t, path)
			_, err := creds.Load(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "secret-value") {
				t.Errorf("Load: %v, want %q", err, tt.want)
			}
			before, _ := os.ReadFile(path)
			err = creds.Update(path, map[string]string{"b": "x"}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Update: %v, want %q", err, tt.want)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Errorf("refused file changed: %s", after)
			}
		})
	}
}

// TestConcurrentUpdates: two writers both land.
func TestConcurrentUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), creds.FileName)
	var wg sync.WaitGroup
	for _, k := range []string{"a", "b", "c", "d"} {
		wg.Go(func() {
			if err := creds.Update(path, map[string]string{k: k + "-v"}, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	m, err := creds.Load(path)
	if err != nil || len(m) != 4 {
		t.Errorf("%v %v, want 4 credentials", m, err)
	}
}

// TestSetUndo: Set's undo gives a name that had a value that value back
// and deletes a name that had none, leaving the others alone.
func TestSetUndo(t *testing.T) {
	path := creds.Path(t.TempDir())
	if err := creds.Update(path, map[string]string{"a": "old", "keep": "k"}, nil); err != nil {
		t.Fatal(err)
	}
	undo, err := creds.Set(path, map[string]string{"a": "new", "b": "added"})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := creds.Load(path); m["a"] != "new" || m["b"] != "added" {
		t.Fatalf("after Set: %v", m)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	m, err := creds.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"a": "old", "keep": "k"}, m); diff != "" {
		t.Errorf("after undo (-want +got):\n%s", diff)
	}
}

// TestPlace: each credential gets the name the caller's rule gives it
// against what the file holds under the lock; a name holding the same
// value is shared and not written again; undo removes what was added and
// puts back what was replaced.
func TestPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "creds.json")
	if err := creds.Update(path, map[string]string{"API_KEY": "theirs", "SHARED": "same", "OWN": "old"}, nil); err != nil {
		t.Fatal(err)
	}
	rule := func(want, value string, taken func(string) (string, bool)) string {
		if want == "OWN" {
			return want // the caller's own: replaced
		}
		for n := want; ; n += "_2" {
			if v, ok := taken(n); !ok || v == value {
				return n
			}
		}
	}
	placed, undo, err := creds.Place(path, map[string]string{"API_KEY": "mine", "SHARED": "same", "OWN": "new", "FRESH": "f"}, rule)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"API_KEY": "API_KEY_2", "SHARED": "SHARED", "OWN": "OWN", "FRESH": "FRESH"}, placed); diff != "" {
		t.Errorf("placed (-want +got):\n%s", diff)
	}
	got, _ := creds.Load(path)
	want := map[string]string{"API_KEY": "theirs", "API_KEY_2": "mine", "SHARED": "same", "OWN": "new", "FRESH": "f"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("creds.json (-want +got):\n%s", diff)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	got, _ = creds.Load(path)
	if diff := cmp.Diff(map[string]string{"API_KEY": "theirs", "SHARED": "same", "OWN": "old"}, got); diff != "" {
		t.Errorf("creds.json after undo (-want +got):\n%s", diff)
	}
}

// TestPlaceKeepsNoOldValue: a credential replaced by Place (an edit that
// rotates a secret) leaves no copy of the old value beside creds.json.
func TestPlaceKeepsNoOldValue(t *testing.T) {
	dir := t.TempDir()
	path := creds.Path(dir)
	if err := creds.Update(path, map[string]string{"TOKEN": "old-secret-value"}, nil); err != nil {
		t.Fatal(err)
	}
	own := func(want, _ string, _ func(string) (string, bool)) string { return want }
	if _, _, err := creds.Place(path, map[string]string{"TOKEN": "new-secret-value"}, own); err != nil {
		t.Fatal(err)
	}
	creds.Saved(path)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if strings.Contains(string(b), "old-secret-value") {
			t.Errorf("%s keeps the rotated secret", e.Name())
		}
	}
}

// TestSweep: the credentials that a killed command added (its journal
// names a process that no longer runs) and that nothing refers to are
// deleted by the next Sweep; those referred to stay, and so does what a
// command still running added.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	path := creds.Path(dir)
	if err := creds.Update(path, map[string]string{"KEPT": "k"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := creds.Set(path, map[string]string{"ORPHAN": "o", "USED": "u", "KEPT": "k2"}); err != nil {
		t.Fatal(err)
	}
	journal := path + ".pending-" + strconv.Itoa(os.Getpid())
	data, err := os.ReadFile(journal)
	if err != nil || strings.Contains(string(data), "KEPT") || !strings.Contains(string(data), "ORPHAN") || strings.Contains(string(data), `"o"`) {
		t.Fatalf("journal %q, %v: want the names added, no value, not the name replaced", data, err)
	}
	used := func(n string) bool { return n == "USED" }

	// Our own journal: this command is still running.
	if removed, err := creds.Sweep(path, used); err != nil || len(removed) != 0 {
		t.Fatalf("a running command's credentials swept: %v %v", removed, err)
	}

	// The same journal left by a process that has exited.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	left := path + ".pending-" + strconv.Itoa(dead.Process.Pid)
	if err := os.Rename(journal, left); err != nil {
		t.Fatal(err)
	}
	removed, err := creds.Sweep(path, used)
	if err != nil || !slices.Equal(removed, []string{"ORPHAN"}) {
		t.Errorf("swept %v, %v; want ORPHAN", removed, err)
	}
	m, _ := creds.Load(path)
	if diff := cmp.Diff(map[string]string{"KEPT": "k2", "USED": "u"}, m); diff != "" {
		t.Errorf("creds after the sweep (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the journal is still there: %v", err)
	}

	// A command that saved its configuration leaves no journal.
	if _, err := creds.Set(path, map[string]string{"NEW": "n"}); err != nil {
		t.Fatal(err)
	}
	creds.Saved(path)
	if _, err := os.Stat(journal); !os.IsNotExist(err) {
		t.Errorf("Saved left the journal: %v", err)
	}
}
