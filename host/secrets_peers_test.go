package host_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/peers"
)

// TestSecretsPeerFalseAlarms calls the npm peers (server-everything,
// server-filesystem reading this module's own files, server-memory) and
// counts the results in which the secret scanner found anything: none of
// them holds a credential, so every finding is a false alarm.
// docs/SECURITY.md quotes the share; the goal is at most 1 %.
func TestSecretsPeerFalseAlarms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var files []string
	for _, glob := range []string{"../go.mod", "../go.sum", "../README.md", "../docs/*.md", "../config/default.json",
		"../host/calls.go", "../host/audit.go", "../internal/jsonscan/*.go", "../internal/store/sqlite/migrations/*.sql", "../internal/launcher/*.go"} {
		ms, _ := filepath.Glob(glob)
		for _, m := range ms {
			b, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(dir, filepath.Base(m))
			if err := os.WriteFile(dst, b, 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, dst)
		}
	}
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	r := &secretsRig{}
	cfg := parse(t, map[string]any{
		"everything": peerServer(t, peers.Everything, nil, nil),
		"fs":         peerServer(t, peers.Filesystem, []string{dir}, nil),
		"memory":     peerServer(t, peers.Memory, nil, map[string]string{"MEMORY_FILE_PATH": memFile}),
	}, nil)
	r.h = openWith(t, cfg, fastOptsWith(r))

	type req struct{ tool, args string }
	calls := []req{
		{"everything__echo", `{"message":"hello"}`},
		{"everything__get-sum", `{"a":2,"b":40}`},
		{"everything__get-tiny-image", `{}`},
		{"everything__get-structured-content", `{"location":"Chicago"}`},
		{"everything__get-structured-content", `{"location":"New York"}`},
		{"everything__get-structured-content", `{"location":"Los Angeles"}`},
		{"everything__get-resource-links", `{"count":5}`},
		{"everything__get-annotated-message", `{"messageType":"success","includeImage":true}`},
		{"everything__get-annotated-message", `{"messageType":"error"}`},
		{"everything__get-resource-reference", `{"resourceType":"Text","resourceId":1}`},
		{"everything__get-resource-reference", `{"resourceType":"Blob","resourceId":2}`},
		{"fs__list_directory", fmt.Sprintf(`{"path":%q}`, dir)},
		{"fs__list_directory_with_sizes", fmt.Sprintf(`{"path":%q}`, dir)},
		{"fs__directory_tree", fmt.Sprintf(`{"path":%q}`, dir)},
		{"fs__search_files", fmt.Sprintf(`{"path":%q,"pattern":"*.go"}`, dir)},
		{"fs__list_allowed_directories", `{}`},
		{"memory__create_entities", `{"entities":[{"name":"Ada","entityType":"person","observations":["wrote the first program","worked with Babbage"]},{"name":"Analytical Engine","entityType":"machine","observations":["designed 1837"]}]}`},
		{"memory__create_relations", `{"relations":[{"from":"Ada","to":"Analytical Engine","relationType":"programmed"}]}`},
		{"memory__add_observations", `{"observations":[{"entityName":"Ada","contents":["born 1815 in London"]}]}`},
		{"memory__read_graph", `{}`},
		{"memory__search_nodes", `{"query":"Ada"}`},
		{"memory__open_nodes", `{"names":["Ada","Analytical Engine"]}`},
	}
	for _, f := range files {
		calls = append(calls, req{"fs__read_text_file", fmt.Sprintf(`{"path":%q}`, f)}, req{"fs__get_file_info", fmt.Sprintf(`{"path":%q}`, f)})
	}
	results, alarmed := 0, 0
	for _, c := range calls {
		call(t, r.h, c.tool, c.args)
		results++
		if got := r.last(); len(got) > 0 {
			alarmed++
			t.Logf("false alarm in %s %s: %v", c.tool, c.args, got)
		}
	}
	share := float64(alarmed) / float64(results)
	t.Logf("npm peers: %d of %d results (%.1f %%) with a false alarm", alarmed, results, 100*share)
	if share > 0.01 {
		t.Errorf("false alarms on %.1f %% of real results, want at most 1 %%", 100*share)
	}
}
