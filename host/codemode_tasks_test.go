package host_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit/peers"
	"github.com/switchboard-mcp/switchboard/internal/tokens"
)

// taskSet is testdata/codemode/tasks.json: each task's fixed plan of
// direct calls, in turns, and its one script.
type taskSet struct {
	Tasks []struct {
		Name  string `json:"name"`
		Goal  string `json:"goal"`
		Turns [][]struct {
			Tool string          `json:"tool"`
			Args json.RawMessage `json:"args"`
		} `json:"turns"`
		Script string          `json:"script"`
		Expect json.RawMessage `json:"expect"`
	} `json:"tasks"`
}

// TestCodeModeTasks runs each task of the task set by its direct calls
// and by one script through the host, checks that both give the task's
// expected answer, and counts with internal/tokens the context a client
// carries at each model turn: the tool definitions it was given, and the
// calls' arguments and results so far (for the script: its text and its
// one result). The definitions of direct calls are every server tool's;
// a code-mode client's are what it is listed with context.deferTools on:
// the search's built-ins and code_run with its declarations.
// go test -v -run TestCodeModeTasks ./host prints the table in
// docs/PERFORMANCE.md.
func TestCodeModeTasks(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/codemode/tasks.json")
	if err != nil {
		t.Fatal(err)
	}
	var set taskSet
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	data := taskFixture(t)
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	h := openWith(t, parseDoc(t, map[string]any{
		"context": map[string]any{"deferTools": true, "capabilityTools": false,
			"codeMode": map[string]any{"enabled": true, "cpuMs": 60000}},
		"mcpServers": map[string]any{
			"demo":       demoServer(t),
			"filesystem": sandboxedPeer(peerServer(t, peers.Filesystem, []string{data}, nil)),
			"memory":     sandboxedPeer(peerServer(t, peers.Memory, nil, map[string]string{"MEMORY_FILE_PATH": memFile})),
		},
	}), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})
	ctx := t.Context()
	for _, s := range []string{"demo", "filesystem", "memory"} {
		if err := h.Ready(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	setup := call(t, h, "memory__create_entities", `{"entities":[
		{"name":"project-apollo","entityType":"project","observations":["status: active","lead: ana"]},
		{"name":"project-borealis","entityType":"project","observations":["status: paused"]},
		{"name":"project-cygnus","entityType":"project","observations":["status: active"]},
		{"name":"person-ana","entityType":"person","observations":["works on apollo"]},
		{"name":"person-ben","entityType":"person","observations":["likes projects"]},
		{"name":"tool-drill","entityType":"tool","observations":["heavy"]}]}`)
	if setup.IsError {
		t.Fatalf("memory set-up: %s", setup.Text)
	}

	direct := definitionTokens(t, h.Tools())
	code := definitionTokens(t, h.ModelTools())
	t.Logf("definitions: direct %d tokens (%d tools), code mode %d tokens (%d tools)", direct, len(h.Tools()), code, len(h.ModelTools()))
	for _, tl := range h.ModelTools() {
		if tl.Name == host.CodeTool {
			t.Logf("code_run's description: %d bytes, %d tokens", len(tl.Description), tokens.Estimate([]byte(tl.Description)))
		}
	}
	var totalDirect, totalCode int
	var rows []string
	for _, task := range set.Tasks {
		sub := func(s string) string { return strings.ReplaceAll(s, "${DATA}", data) }
		// Direct: each turn's calls, then a turn for the answer.
		ctxTokens, history, calls := 0, 0, 0
		var results [][]*host.Result
		for _, turn := range task.Turns {
			ctxTokens += direct + history
			var rs []*host.Result
			for _, c := range turn {
				args := sub(string(c.Args))
				res := call(t, h, c.Tool, args)
				rs = append(rs, res)
				history += tokens.Estimate(fmt.Appendf(nil, `{"name":%q,"arguments":%s}`, c.Tool, args)) + tokens.Estimate(res.Raw)
				calls++
			}
			results = append(results, rs)
		}
		ctxTokens += direct + history
		got := answerOf(t, task.Name, results)
		checkAnswer(t, task.Name+" (direct)", got, task.Expect)

		// Code mode: one turn to write the script, one for the answer.
		script := sub(task.Script)
		args, _ := json.Marshal(map[string]string{"script": script})
		res, err := h.Call(ctx, host.CodeTool, args, nil)
		if err != nil {
			t.Fatalf("%s: script: %v", task.Name, err)
		}
		checkAnswer(t, task.Name+" (script)", scriptAnswer(res), task.Expect)
		scriptTokens := code + (code + tokens.Estimate(fmt.Appendf(nil, `{"name":%q,"arguments":%s}`, host.CodeTool, args)) + tokens.Estimate(res.Raw))
		totalDirect += ctxTokens
		totalCode += scriptTokens
		rows = append(rows, fmt.Sprintf("| %s | %d in %d turns | %d | %d | %.0f %% |", task.Name, calls, len(task.Turns), ctxTokens, scriptTokens,
			100*(1-float64(scriptTokens)/float64(ctxTokens))))
	}
	t.Logf("\n| task | direct calls | direct tokens | script tokens | fewer |\n|---|---|---|---|---|\n%s\n| all | | %d | %d | %.0f %% |",
		strings.Join(rows, "\n"), totalDirect, totalCode, 100*(1-float64(totalCode)/float64(totalDirect)))
	if totalCode >= totalDirect {
		t.Errorf("scripts took %d tokens, direct calls %d", totalCode, totalDirect)
	}
}

// sandboxedPeer is a peer's entry in the tests' default sandbox (the
// temporary directory writable).
func sandboxedPeer(s map[string]any) map[string]any {
	s["sandbox"] = testSandbox
	return s
}

// definitionTokens counts tools' definitions as tools/list carries them.
func definitionTokens(t *testing.T, tools []host.Tool) int {
	t.Helper()
	n := 0
	for _, tl := range tools {
		b, err := json.Marshal(map[string]any{"name": tl.Name, "title": tl.Title, "description": tl.Description,
			"inputSchema": tl.InputSchema, "outputSchema": tl.OutputSchema, "annotations": tl.Annotations})
		if err != nil {
			t.Fatal(err)
		}
		n += tokens.Estimate(b)
	}
	return n
}

// taskFixture writes the task set's data directory (its "fixture").
func taskFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for n := 1; n <= 20; n++ {
		write(fmt.Sprintf("docs/f%02d.txt", n), strings.Repeat(fmt.Sprintf("line %02d\n", n), n*37%50+5))
	}
	for n := 1; n <= 8; n++ {
		var b strings.Builder
		for i := range 30 {
			if (i+n)%(n+2) == 0 {
				fmt.Fprintf(&b, "ERROR disk %d-%d\n", n, i)
			} else {
				fmt.Fprintf(&b, "INFO ok %d-%d\n", n, i)
			}
		}
		write(fmt.Sprintf("logs/app%d.log", n), b.String())
	}
	for k, w := range []string{"alpha", "bravo", "charlie", "delta", "echo"} {
		var b strings.Builder
		fmt.Fprintf(&b, "# Topic %d: %s\n", k+1, w)
		for j := range 10 {
			fmt.Fprintf(&b, "body %d-%d\n", k+1, j)
		}
		write(fmt.Sprintf("notes/n%d.md", k+1), b.String())
	}
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// structuredOf is a result's structuredContent.
func structuredOf(t *testing.T, r *host.Result) map[string]any {
	t.Helper()
	var v struct {
		SC map[string]any `json:"structuredContent"`
	}
	if err := json.Unmarshal(r.Raw, &v); err != nil || v.SC == nil {
		t.Fatalf("%s: no structured content: %s", r.Tool, r.Raw)
	}
	return v.SC
}

// answerOf is what a model would answer from the direct calls' results:
// each task's reasoning, written out.
func answerOf(t *testing.T, task string, rs [][]*host.Result) any {
	t.Helper()
	text := func(r *host.Result) string { return structuredOf(t, r)["content"].(string) }
	switch task {
	case "tree-stats":
		var tree []struct {
			Name, Type string
			Children   []struct{ Type string }
		}
		if err := json.Unmarshal([]byte(text(rs[0][0])), &tree); err != nil {
			t.Fatal(err)
		}
		out := map[string]any{}
		for _, d := range tree {
			if d.Type == "directory" {
				n := 0
				for _, c := range d.Children {
					if c.Type == "file" {
						n++
					}
				}
				out[d.Name] = float64(n)
			}
		}
		return out
	case "largest-files":
		type f struct {
			name string
			size int
		}
		var fs []f
		for _, r := range rs[1] {
			// The file's number is in its first line: "line NN".
			nn := strings.TrimPrefix(strings.SplitN(text(r), "\n", 2)[0], "line ")
			fs = append(fs, f{"f" + nn + ".txt", len(text(r))})
		}
		sort.Slice(fs, func(i, j int) bool {
			return fs[i].size > fs[j].size || fs[i].size == fs[j].size && fs[i].name < fs[j].name
		})
		return []any{fs[0].name, fs[1].name, fs[2].name}
	case "error-count":
		total, most, worst := 0, -1, ""
		for i, r := range rs[1] {
			k := strings.Count("\n"+text(r), "\nERROR")
			total += k
			if k > most {
				most, worst = k, fmt.Sprintf("app%d.log", i+1)
			}
		}
		return map[string]any{"total": float64(total), "worst": worst}
	case "weather-warmest":
		best, temp := "", -1000.0
		for _, r := range rs[0] {
			sc := structuredOf(t, r)
			if v := sc["temperature"].(float64); v > temp {
				best, temp = sc["city"].(string), v
			}
		}
		return best
	case "sum-chain":
		return structuredOf(t, rs[len(rs)-1][0])["sum"]
	case "memory-to-file":
		var lines []string
		for _, e := range structuredOf(t, rs[0][0])["entities"].([]any) {
			m := e.(map[string]any)
			lines = append(lines, fmt.Sprintf("%s (%s)", m["name"], m["entityType"]))
		}
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	case "search-filter-write":
		var names []any
		for _, e := range structuredOf(t, rs[0][0])["entities"].([]any) {
			m := e.(map[string]any)
			for _, o := range m["observations"].([]any) {
				if o == "status: active" {
					names = append(names, m["name"])
				}
			}
		}
		return names
	case "notes-to-memory":
		var out []any
		for i, r := range rs[1] {
			out = append(out, fmt.Sprintf("note-n%d: %s", i+1, strings.TrimSpace(text(r))))
		}
		return out
	}
	t.Fatalf("no reasoning written for task %s", task)
	return nil
}

// scriptAnswer is a script's returned value.
func scriptAnswer(r *host.Result) any {
	var v any
	if json.Unmarshal([]byte(r.Text), &v) != nil {
		return r.Text // a string is returned as its text
	}
	return v
}

func checkAnswer(t *testing.T, what string, got any, expect json.RawMessage) {
	t.Helper()
	var want any
	if err := json.Unmarshal(expect, &want); err != nil {
		t.Fatal(err)
	}
	if s, ok := got.(string); ok {
		// A string answer that reads as JSON (a number) compares as it.
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			got = v
		}
	}
	if !reflect.DeepEqual(normalize(got), normalize(want)) {
		t.Errorf("%s: answer %v, want %v", what, got, want)
	}
}

// normalize makes an answer comparable: JSON-decoded shapes.
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
