// Package namegold is for tests only: it holds fitted names (model-facing
// tool names, server prefixes, provider names), which users already have in
// clients' configurations, lockfiles and stored pins, to the names the code
// gave before, over real inputs: the servers and tool names of the search
// dev set (internal/search/testdata/devset/tools). The golden files keep a
// digest per server, since the names themselves would take a megabyte.
package namegold

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update-names", false, "rewrite the golden files of fitted names from the current output")

// Server is one server of the dev set and the names of its tools.
type Server struct {
	Name  string
	Tools []string
}

// devset returns the dev set's servers, sorted by name.
func devset(t testing.TB) []Server {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "search", "testdata", "devset", "tools")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("dev set in %s: %v (%d files)", dir, err, len(files))
	}
	var out []Server
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Server string
			Tools  []struct{ Name string }
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		s := Server{Name: doc.Server}
		for _, tl := range doc.Tools {
			s.Tools = append(s.Tools, tl.Name)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Check gives each server of the dev set to fit, which returns what the
// server's names come to, one line each, and compares that with the
// digests in the golden file at path, or rewrites the file when the test
// runs with -update-names. A difference names the server and prints its
// lines.
func Check(t testing.TB, path string, fit func(s Server) []string) {
	t.Helper()
	lines := map[string][]string{}
	var keys []string
	for _, s := range devset(t) {
		lines[s.Name] = fit(s)
		keys = append(keys, s.Name)
	}
	var b strings.Builder
	for _, k := range keys {
		h := sha256.New()
		for _, l := range lines[k] {
			fmt.Fprintln(h, l)
		}
		fmt.Fprintf(&b, "%s %d %x\n", k, len(lines[k]), h.Sum(nil)[:12])
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -args -update-names to create it)", err)
	}
	// The servers the file recorded are held to it; servers added to the
	// dev set since are not (no earlier code fitted them).
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		k, _, _ := strings.Cut(l, " ")
		got[k] = l
	}
	wl := strings.Split(strings.TrimSpace(string(want)), "\n")
	for _, w := range wl {
		k, _, _ := strings.Cut(w, " ")
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s: server %s is no longer in the dev set", path, k)
		case g != w:
			t.Errorf("%s: the names of %s changed: got %s, want %s; they are now:\n%s", path, k, g, w, strings.Join(lines[k], "\n"))
		}
	}
}
