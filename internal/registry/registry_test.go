package registry

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/names"
)

func tools(ns ...string) []*mcp.Tool {
	var out []*mcp.Tool
	for _, n := range ns {
		out = append(out, &mcp.Tool{Name: n})
	}
	return out
}

func TestBuildFiltersAndNames(t *testing.T) {
	s := Build([]string{"off"}, []Source{
		{Server: "gh", Prefix: "gh", Tools: tools("create_issue", "delete_repo", "get_file"), DisabledTools: []string{"delete_*"}},
		{Server: "gh:sub", Prefix: "sub", Tools: tools("x", "y"), EnabledTools: []string{"x"}},
		{Server: "demo", Prefix: "demo", Tools: append(tools("echo", "echo", ""), nil)},
		{Server: "none", Prefix: "none", Tools: tools("a", "b"), EnabledTools: []string{}}, // [] means none
	})
	var got []string
	for _, tl := range s.Tools() {
		got = append(got, tl.Name+"="+tl.ID.String())
	}
	want := []string{"demo__echo=demo:echo", "gh__create_issue=gh:create_issue", "gh__get_file=gh:get_file", "sub__x=gh:sub:x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if len(s.Skipped) != 3 {
		t.Errorf("Skipped = %q, want the duplicate, the nameless and the nil tool", s.Skipped)
	}
	if !s.HasServer("off") {
		t.Error("a configured server without catalogue must still resolve")
	}
}

func TestToolLookup(t *testing.T) {
	s := Build(nil, []Source{
		{Server: "gh", Prefix: "gh", Tools: tools("sub:x", "a")},
		{Server: "gh:sub", Prefix: "sub", Tools: tools("x")},
	})
	tests := []struct {
		in     string
		want   names.ID
		wantOK bool
	}{
		{"gh__a", names.ID{Server: "gh", Name: "a"}, true},
		{"gh:a", names.ID{Server: "gh", Name: "a"}, true},
		{"gh:sub:x", names.ID{Server: "gh:sub", Name: "x"}, true}, // longest prefix wins
		{"sub__x", names.ID{Server: "gh:sub", Name: "x"}, true},
		{"gh:nope", names.ID{}, false},
		{"zz:a", names.ID{}, false},
		{"", names.ID{}, false},
	}
	for _, tt := range tests {
		got, ok := s.Tool(tt.in)
		if ok != tt.wantOK || (ok && got.ID != tt.want) {
			t.Errorf("Tool(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestCollisionsReported(t *testing.T) {
	s := Build(nil, []Source{
		{Server: "a", Prefix: "", Tools: tools("search")},
		{Server: "b", Prefix: "", Tools: tools("search")},
	})
	if len(s.Collisions) != 1 || s.Collisions[0].Name != "search" {
		t.Fatalf("Collisions = %+v", s.Collisions)
	}
	a, _ := s.Tool("a:search")
	b, _ := s.Tool("b:search")
	if a.Name == b.Name || a.Name == "search" || b.Name == "search" {
		t.Errorf("names not separated: %q, %q", a.Name, b.Name)
	}
}

func TestPromptsAndResources(t *testing.T) {
	s := Build(nil, []Source{{
		Server:    "fs",
		Prompts:   []*mcp.Prompt{{Name: "review"}, nil, {Name: "review"}},
		Resources: []*mcp.Resource{{URI: "file:///a"}, {URI: ""}},
		Templates: []*mcp.ResourceTemplate{{URITemplate: "file:///{path}"}},
	}})
	if p, ok := s.Prompt("fs:review"); !ok || p.Prompt.Name != "review" {
		t.Errorf("Prompt(fs:review) = %v, %v", p, ok)
	}
	if len(s.Prompts()) != 1 || len(s.Resources()) != 1 || len(s.Templates()) != 1 {
		t.Errorf("counts: %d prompts, %d resources, %d templates", len(s.Prompts()), len(s.Resources()), len(s.Templates()))
	}
	if id, ok := s.Resolve("fs:file:///a:b"); !ok || id.Name != "file:///a:b" {
		t.Errorf("Resolve = %+v, %v", id, ok)
	}
}

func TestSuggest(t *testing.T) {
	cands := []string{"demo__echo", "demo:echo", "demo__add", "demo:add", "gh__create_issue", "gh:create_issue"}
	tests := map[string]string{
		"demo__ecoh":      "demo__echo",
		"demo__ech":       "demo__echo",
		"echo":            "demo:echo",
		"create_issue":    "gh:create_issue",
		"gh__create_isue": "gh__create_issue",
		"zzzzzzzz":        "",
		"":                "",
	}
	for in, want := range tests {
		if got := Suggest(in, cands); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestResourceOrder checks that resources and templates go by server name,
// then URI, not by canonical ID string ("memory2:…" < "memory:…").
func TestResourceOrder(t *testing.T) {
	src := func(server string) Source {
		return Source{
			Server:    server,
			Resources: []*mcp.Resource{{URI: "memory://b"}, {URI: "memory://a"}},
			Templates: []*mcp.ResourceTemplate{{URITemplate: "memory://{x}"}},
		}
	}
	s := Build(nil, []Source{src("memory2"), src("memory:x"), src("memory")})
	var got []string
	for _, r := range s.Resources() {
		got = append(got, r.ID.String())
	}
	for _, tm := range s.Templates() {
		got = append(got, tm.ID.String())
	}
	want := []string{
		"memory:memory://a", "memory:memory://b",
		"memory2:memory://a", "memory2:memory://b",
		"memory:x:memory://a", "memory:x:memory://b",
		"memory:memory://{x}", "memory2:memory://{x}", "memory:x:memory://{x}",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order mismatch (-want +got):\n%s", diff)
	}
}
