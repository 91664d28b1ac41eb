package profile

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.json from the current output")

// loadTools reads every testdata/tools/*.json, in file-name order. Tools
// of captured servers are named "<server>__<tool>", as the host names
// them for the model; the hand-written "edge" tools keep their raw names,
// which are there to exercise renaming.
func loadTools(t testing.TB) []Tool {
	t.Helper()
	var out []Tool
	for _, tf := range testkit.ToolFiles(t, filepath.Join("testdata", "tools")) {
		for _, tt := range tf.Tools {
			name := tf.Server + "__" + tt.Name
			if tf.Server == "edge" {
				name = tt.Name
			}
			out = append(out, Tool{Name: name, Title: tt.Title, Description: tt.Description,
				InputSchema: tt.InputSchema, OutputSchema: tt.OutputSchema})
		}
	}
	return out
}

// golden is what a golden file holds: the converted list, and the names
// that changed (provider-side → original).
type golden struct {
	Renamed map[string]string `json:"renamed,omitempty"`
	Tools   []json.RawMessage `json:"tools"`
}

func TestGolden(t *testing.T) {
	tools := loadTools(t)
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			res, err := Convert(f, tools)
			if err != nil {
				t.Fatal(err)
			}
			g := golden{Tools: res.Tools, Renamed: map[string]string{}}
			for _, tool := range tools {
				if n, _ := res.Mapping.Name(tool.Name); n != tool.Name {
					g.Renamed[n] = tool.Name
				}
			}
			compact, err := json.Marshal(g)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := json.Indent(&got, compact, "", "  "); err != nil {
				t.Fatal(err)
			}
			got.WriteByte('\n')
			path := filepath.Join("testdata", "golden", string(f)+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("%s differs (-want +got); rerun with -update if intended:\n%s", path, diff)
			}
		})
	}
}

// TestConstraints checks every converted list, golden inputs included,
// against the providers' documented constraints.
func TestConstraints(t *testing.T) {
	tools := loadTools(t)
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			res, err := Convert(f, tools)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Tools) != len(tools) {
				t.Fatalf("got %d tools, want %d", len(res.Tools), len(tools))
			}
			if errs := checkTools(f, res.Tools); len(errs) > 0 {
				t.Errorf("%d violations:\n%s", len(errs), errsString(errs))
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	tools := loadTools(t)
	// The same set in reverse order must give each tool the same bytes.
	rev := make([]Tool, len(tools))
	for i, tool := range tools {
		rev[len(tools)-1-i] = tool
	}
	for _, f := range Formats() {
		a, err := Convert(f, tools)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Convert(f, rev)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tools {
			if !bytes.Equal(a.Tools[i], b.Tools[len(tools)-1-i]) {
				t.Errorf("%s: tool %q converts differently in another order:\n%s\n%s", f, tools[i].Name, a.Tools[i], b.Tools[len(tools)-1-i])
			}
		}
	}
}
