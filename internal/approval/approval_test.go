package approval

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/switchboard-mcp/switchboard/internal/policy"
)

func TestArgsHashCanonical(t *testing.T) {
	for _, tt := range []struct {
		name string
		a, b string
		same bool
	}{
		{"member order", `{"a":1,"b":"x"}`, `{"b":"x","a":1}`, true},
		{"whitespace", `{"a": [1, 2]}`, "{\n\"a\":[1,2]}", true},
		{"number spelling", `{"n":1.0e2}`, `{"n":100}`, true},
		{"string escapes", `{"s":"\u0041"}`, `{"s":"A"}`, true},
		{"empty is {}", ``, `{}`, true},
		{"value", `{"a":1}`, `{"a":2}`, false},
		{"nested order", `{"o":{"x":1,"y":2}}`, `{"o":{"y":2,"x":1}}`, true},
		{"array order counts", `{"a":[1,2]}`, `{"a":[2,1]}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ha, err := ArgsHash([]byte(tt.a))
			if err != nil {
				t.Fatal(err)
			}
			hb, err := ArgsHash([]byte(tt.b))
			if err != nil {
				t.Fatal(err)
			}
			if (ha == hb) != tt.same {
				t.Errorf("ArgsHash(%s) == ArgsHash(%s): %v, want %v", tt.a, tt.b, ha == hb, tt.same)
			}
		})
	}
	if _, err := ArgsHash([]byte(`{"a":`)); err == nil {
		t.Error("malformed arguments hashed")
	}
}

// FuzzArgsHash: a JSON object hashes as its round trip through
// encoding/json does (same values, Go's member order and spelling).
func FuzzArgsHash(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null,"x"]}`, `{"n":1e21,"m":0.1}`, `{"\u00e9":"\ud83d\ude00"}`, `{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v map[string]any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		round, err := json.Marshal(v)
		if err != nil {
			return
		}
		h1, err1 := ArgsHash([]byte(s))
		h2, err2 := ArgsHash(round)
		if err1 != nil || err2 != nil {
			t.Fatalf("ArgsHash(%q): %v / %v", s, err1, err2)
		}
		if _, err := jcs.Transform([]byte(s)); err != nil || strings.ToValidUTF8(s, "\uFFFD") != s {
			// No canonical form (a lone surrogate, invalid UTF-8 that
			// Marshal replaces): hashed as its bytes, not as the round
			// trip's different value.
			return
		}
		if h1 != h2 {
			t.Fatalf("ArgsHash(%q) != ArgsHash(%s)", s, round)
		}
	})
}

func TestKeyBindsEveryPart(t *testing.T) {
	base := Key("alice", "flow1", "gh:push", "h")
	for _, k := range []string{Key("bob", "flow1", "gh:push", "h"), Key("alice", "flow2", "gh:push", "h"),
		Key("alice", "flow1", "gh:pull", "h"), Key("alice", "flow1", "gh:push", "g"), Key("alicef", "low1", "gh:push", "h")} {
		if k == base {
			t.Errorf("two bindings share key %s", k)
		}
	}
}

func TestNeed(t *testing.T) {
	yes, no := true, false
	r, err := NewRules(RulesConfig{Tools: []string{"gh:delete_*"}, Destructive: true, OpenWorld: true, Trust: []policy.Trust{policy.Sandboxed}})
	if err != nil {
		t.Fatal(err)
	}
	unknown, _ := NewRules(RulesConfig{Destructive: true, Unknown: true})
	for _, tt := range []struct {
		name string
		r    *Rules
		c    Call
		want string
	}{
		{"glob", r, Call{ID: "gh:delete_repo", Trust: policy.Trusted, Annotations: &policy.Annotations{Destructive: &no, OpenWorld: &no}}, ReasonTool},
		{"trusted destructive", r, Call{ID: "fs:rm", Trust: policy.Trusted, Annotations: &policy.Annotations{Destructive: &yes, OpenWorld: &no}}, ReasonDestructive},
		{"trusted read-only wins", r, Call{ID: "fs:ls", Trust: policy.Trusted, Annotations: &policy.Annotations{ReadOnly: &yes, Destructive: &yes, OpenWorld: &no}}, ""},
		{"absent hint is unknown, not true", r, Call{ID: "fs:x", Trust: policy.Trusted}, ""},
		{"untrusted hint not believed", r, Call{ID: "u:x", Trust: policy.Untrusted, Annotations: &policy.Annotations{Destructive: &yes, OpenWorld: &yes}}, ""},
		{"open world", r, Call{ID: "web:get", Trust: policy.Trusted, Annotations: &policy.Annotations{OpenWorld: &yes, Destructive: &no}}, ReasonOpenWorld},
		{"trust level", r, Call{ID: "s:x", Trust: policy.Sandboxed}, ReasonTrust},
		{"unknown counts when asked", unknown, Call{ID: "u:x", Trust: policy.Untrusted, Annotations: &policy.Annotations{Destructive: &no}}, ReasonDestructive},
		{"unknown: trusted false", unknown, Call{ID: "t:x", Trust: policy.Trusted, Annotations: &policy.Annotations{Destructive: &no}}, ""},
		{"no rules", nil, Call{ID: "x:y"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, detail := tt.r.Need(tt.c)
			if got != tt.want {
				t.Errorf("Need = %q (%s), want %q", got, detail, tt.want)
			}
			if (got == "") != (detail == "") {
				t.Errorf("reasons %q with detail %q", got, detail)
			}
		})
	}
}

func TestLabels(t *testing.T) {
	yes := true
	l, err := NewLabeler([]LabelRule{{Pattern: "priv:*", Labels: []string{Private}}, {Pattern: "gh:get_me", Labels: nil}}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		t    Tool
		want Set
		src  string
	}{
		{"config", Tool{ID: "priv:read", Name: "read", Trust: policy.Trusted}, Set{Private: true}, SourceConfig},
		{"config beats preset", Tool{ID: "gh:get_me", Name: "get_me", Preset: "github"}, Set{}, SourceConfig},
		{"github issue", Tool{ID: "gh:get_issue", Name: "get_issue", Preset: "github"}, Set{Untrusted: true}, SourcePreset},
		{"github file", Tool{ID: "gh:get_file_contents", Name: "get_file_contents", Preset: "github"}, Set{Private: true}, SourcePreset},
		{"github other read", Tool{ID: "gh:get_team", Name: "get_team", Preset: "github"}, Set{Private: true, Untrusted: true}, SourcePreset},
		{"github pull request", Tool{ID: "gh:create_pull_request", Name: "create_pull_request", Preset: "github"}, Set{Outward: true}, SourcePreset},
		{"fetch", Tool{ID: "f:fetch", Name: "fetch", Preset: "fetch"}, Set{Untrusted: true, Outward: true}, SourcePreset},
		{"github resource", Tool{ID: "gh:resources/read", Name: "resources/read", Preset: "github", Read: true}, Set{Private: true, Untrusted: true}, SourcePreset},
		{"filesystem resource", Tool{ID: "fs:resources/read", Name: "resources/read", Preset: "filesystem", Read: true}, Set{Private: true}, SourcePreset},
		{"resource of a server without a preset", Tool{ID: "u:resources/read", Name: "resources/read", Trust: policy.Untrusted, Read: true}, Set{Untrusted: true}, SourceDefault},
		{"trusted, no hints", Tool{ID: "t:x", Name: "x", Trust: policy.Trusted}, Set{}, SourceDefault},
		{"trusted open world", Tool{ID: "t:x", Name: "x", Trust: policy.Trusted, Annotations: &policy.Annotations{OpenWorld: &yes}}, Set{Untrusted: true, Outward: true}, SourceDefault},
		{"untrusted", Tool{ID: "u:x", Name: "x", Trust: policy.Untrusted}, Set{Untrusted: true}, SourceDefault},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, src := l.Labels(tt.t)
			if got != tt.want || src != tt.src {
				t.Errorf("Labels = %v from %s, want %v from %s", got, src, tt.want, tt.src)
			}
		})
	}
}

func TestPresetOf(t *testing.T) {
	for _, tt := range []struct {
		name   string
		launch []string
		want   string
	}{
		{"gh", []string{"npx", "-y", "@modelcontextprotocol/server-github"}, "github"},
		{"files", []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"}, "filesystem"},
		{"web", []string{"uvx", "mcp-server-fetch"}, "fetch"},
		{"chat", []string{"https://mcp.slack.example/mcp"}, "slack"},
		{"demo", []string{"switchboard", "demo-server"}, ""},
	} {
		if got := PresetOf(tt.name, tt.launch...); got != tt.want {
			t.Errorf("PresetOf(%s, %v) = %q, want %q", tt.name, tt.launch, got, tt.want)
		}
	}
}

func TestTainted(t *testing.T) {
	out := Set{Outward: true}
	if d := Tainted([]Mark{{Private, "gh:get_file"}}, out); d != "" {
		t.Errorf("private alone tainted: %s", d)
	}
	marks := []Mark{{Private, "gh:get_file"}, {Untrusted, "gh:get_issue"}, {Untrusted, "gh:get_issue"}}
	d := Tainted(marks, out)
	if !strings.Contains(d, "gh:get_file") || !strings.Contains(d, "gh:get_issue") || strings.Count(d, "gh:get_issue") != 1 {
		t.Errorf("Tainted = %q, want both calls named once", d)
	}
	if d := Tainted(marks, Set{Private: true}); d != "" {
		t.Errorf("a call that is not outward refused: %s", d)
	}
}
