package confedit_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/confedit"
)

// TestEditKeepsOrderAndContent: members the edit does not touch keep
// their order and values (numbers as written), the new member goes last,
// the old content is kept as .bak, and the mode of the file stays.
func TestEditKeepsOrderAndContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	orig := `{"zeta": 1.50, "mcpServers": {"b": {"command": "x"}, "a": {"url": "https://h/"}}, "alpha": [1, {"k": null}]}`
	if err := os.WriteFile(path, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	err := confedit.Edit(path, nil, func(o *confedit.Object) error {
		servers, err := o.Object("mcpServers")
		if err != nil {
			return err
		}
		if err := servers.SetValue("c", map[string]any{"command": "a<b&c"}); err != nil {
			return err
		}
		servers.Delete("b")
		return o.SetValue("mcpServers", servers)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := `{"zeta": 1.50, "mcpServers": {"a": {"url": "https://h/"}, "c": {"command":"a<b&c"}}, "alpha": [1, {"k": null}]}
`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if bak, _ := os.ReadFile(path + ".bak"); string(bak) != orig {
		t.Errorf("backup = %s, want the old content", bak)
	}
	for _, p := range []string{path, path + ".bak"} {
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
			t.Errorf("%s mode %v, want 0640", p, fi.Mode().Perm())
		}
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestEditKeepsLayout: an edit changes the bytes of what it changes only:
// the file's indentation (four spaces here), blank lines, key order and
// escapes stay, a new member follows its siblings' indentation, and a
// member taken out goes with the blank line before it.
func TestEditKeepsLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	orig := `{
    "mcpServers": {
        "fs": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"]
        },

        "old": {"type": "sse", "url": "http://127.0.0.1:3001/sse"},
        "gh": {
            "url": "https://api.example.com/mcp",
            "disabledTools": ["delete_\u002a"]
        }
    },
    "context": {"deferTools": true}
}
`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	err := confedit.Edit(path, nil, func(o *confedit.Object) error {
		servers, err := o.Object("mcpServers")
		if err != nil {
			return err
		}
		servers.Delete("old")
		gh, _ := servers.Object("gh")
		gh.SetValue("enabled", false)
		servers.Set("gh", mustJSON(t, gh))
		type server struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}
		if err := servers.SetValue("memory", server{"npx", []string{"-y", "@modelcontextprotocol/server-memory"}}); err != nil {
			return err
		}
		return o.SetValue("mcpServers", servers)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := `{
    "mcpServers": {
        "fs": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"]
        },
        "gh": {
            "url": "https://api.example.com/mcp",
            "disabledTools": ["delete_\u002a"],
            "enabled": false
        },
        "memory": {
            "command": "npx",
            "args": [
                "-y",
                "@modelcontextprotocol/server-memory"
            ]
        }
    },
    "context": {"deferTools": true}
}
`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func mustJSON(t *testing.T, o *confedit.Object) json.RawMessage {
	t.Helper()
	b, err := o.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEditRefused: an edit or a check that fails writes nothing, and a
// file that is not a JSON object is not replaced.
func TestEditRefused(t *testing.T) {
	tests := []struct {
		name  string
		orig  string
		edit  func(*confedit.Object) error
		check func([]byte) error
	}{
		{"edit fails", `{"a": 1}`, func(*confedit.Object) error { return errors.New("no") }, nil},
		{"check fails", `{"a": 1}`, func(o *confedit.Object) error { return o.SetValue("b", 2) }, func([]byte) error { return errors.New("invalid") }},
		{"not an object", `[1, 2]`, func(*confedit.Object) error { return nil }, nil},
		{"trailing data", `{"a": 1} {}`, func(*confedit.Object) error { return nil }, nil},
		{"broken", `{"a": `, func(*confedit.Object) error { return nil }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			os.WriteFile(path, []byte(tt.orig), 0o600)
			if err := confedit.Edit(path, &confedit.Options{Check: tt.check}, tt.edit); err == nil {
				t.Fatal("no error")
			}
			if got, _ := os.ReadFile(path); string(got) != tt.orig {
				t.Errorf("file changed to %s", got)
			}
			if _, err := os.Stat(path + ".bak"); err == nil {
				t.Error("a backup was written")
			}
		})
	}
}

// TestEditNewFile: a missing file (and directory) is the empty object; the
// new file has the given mode.
func TestEditNewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", "creds.json")
	err := confedit.Edit(path, &confedit.Options{Perm: 0o600}, func(o *confedit.Object) error { return o.SetValue("k", "v") })
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "{\n  \"k\": \"v\"\n}\n" {
		t.Errorf("got %q", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
}

// TestConcurrentEdits: writers under the lock never lose each other's
// member.
func TestConcurrentEdits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			errs <- confedit.Edit(path, nil, func(o *confedit.Object) error {
				time.Sleep(time.Millisecond) // widen the window between read and write
				return o.SetValue(fmt.Sprint("k", i), i)
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(path)
	var m map[string]int
	if err := json.Unmarshal(b, &m); err != nil || len(m) != n {
		t.Errorf("%d members (%v), want %d:\n%s", len(m), err, n, b)
	}
}

// TestLockTimeout: a writer that cannot get the lock in time fails
// naming the holder's process ID.
func TestLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	unlock, err := confedit.Lock(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = confedit.Lock(path, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("process %d", os.Getpid())) {
		t.Errorf("err = %v, want one naming process %d", err, os.Getpid())
	}
	unlock()
	unlock2, err := confedit.Lock(path, 50*time.Millisecond)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unlock2()
}

// FuzzParseObject: whatever ParseObject accepts is a JSON object that
// encoding/json reads to the same value once marshalled.
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a": 1, "b": [true, null], "a": "x"}`, `{"k": {"n": 1e3}}`, ``, `[]`, `{"a":1}x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := confedit.ParseObject(data)
		if err != nil {
			return
		}
		out, err := o.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		var a, b map[string]any
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("output is not an object: %v\n%s", err, out)
		}
		if len(strings.TrimSpace(string(data))) > 0 {
			if err := json.Unmarshal(data, &a); err != nil {
				t.Fatalf("accepted what encoding/json refuses: %v", err)
			}
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("value changed: %v -> %v", a, b)
			}
		}
	})
}

// A key repeated in any object is an error naming its path and line:
// which of the two an editor kept would be a guess.
func TestParseObjectDuplicates(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": 1, "a": 2}`: `duplicate key "a" at $.a (line 1, column 10)`,
		"{\"mcpServers\": {\n  \"x\": {}, \"x\": {}}}": `duplicate key "x" at $.mcpServers.x (line 2, column 12)`,
	} {
		if _, err := confedit.ParseObject([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseObject(%s): %v, want %s", in, err, want)
		}
	}
	o, err := confedit.ParseObject([]byte(`{"b": [1, 2], "a": {"k": "v"}}`))
	if err != nil || len(o.Members) != 2 || o.Members[0].Key != "b" || string(o.Members[1].Value) != `{"k": "v"}` {
		t.Errorf("ParseObject: %+v, %v", o, err)
	}
}
