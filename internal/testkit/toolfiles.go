package testkit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// ToolFile is one server's tool list as the tests keep it in testdata:
// captured from a real server or written by hand.
type ToolFile struct {
	Server string `json:"server"`
	Source string `json:"source"`
	Split  string `json:"split"` // a dev set's: which part the server is in
	Tools  []struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	} `json:"tools"`
}

// ToolFiles reads every dir/*.json, in file-name order; the test fails
// when there is none or one does not parse.
func ToolFiles(t testing.TB, dir string) []ToolFile {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tool files in %s: %v", dir, err)
	}
	sort.Strings(files)
	out := make([]ToolFile, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tf ToolFile
		if err := json.Unmarshal(b, &tf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, tf)
	}
	return out
}
