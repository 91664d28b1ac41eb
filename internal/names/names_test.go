package names

import (
	"fmt"
	"strings"
	"testing"
)

func TestResolveLongestPrefix(t *testing.T) {
	servers := map[string]bool{"gh": true, "gh:sub": true, "demo": true, "a:b:c": true}
	known := func(s string) bool { return servers[s] }
	tests := []struct {
		in     string
		want   ID
		wantOK bool
	}{
		{"gh:sub:x", ID{"gh:sub", "x"}, true},
		{"gh:x", ID{"gh", "x"}, true},
		{"gh:x:y", ID{"gh", "x:y"}, true},
		{"gh:sub", ID{"gh", "sub"}, true}, // a tool named "sub" of gh
		{"gh:sub:", ID{"gh:sub", ""}, true},
		{"demo:file:///tmp/a:b", ID{"demo", "file:///tmp/a:b"}, true},
		{"a:b:c:tool", ID{"a:b:c", "tool"}, true},
		{"a:b:tool", ID{}, false}, // "a" and "a:b" are not servers
		{"nope:x", ID{}, false},
		{"gh", ID{}, false},
		{"", ID{}, false},
		{":x", ID{}, false},
	}
	for _, tt := range tests {
		got, ok := Resolve(tt.in, known)
		if ok != tt.wantOK || got != tt.want {
			t.Errorf("Resolve(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
		if ok && got.String() != tt.in {
			t.Errorf("Resolve(%q).String() = %q, does not round-trip", tt.in, got.String())
		}
	}
}

func TestModelName(t *testing.T) {
	long := strings.Repeat("x", 200)
	tests := []struct {
		prefix, tool string
		want         string // "" means: must be hashed
		wantPrefix   string // for hashed names: expected readable start
	}{
		{"demo", "echo", "demo__echo", ""},
		{"gh", "create_issue", "gh__create_issue", ""},
		{"gh", "get-file", "gh__get-file", ""},
		{"", "echo", "echo", ""},
		{"a", "_b", "a___b", ""},
		{"gh", "a.b", "", "gh__a_b__"},
		{"gh", "with space", "", "gh__with_space__"},
		{"gh", "ünïcode", "", "gh__"},
		{"gh", long, "", "gh__xxxx"},
		{"gh", "", "", "gh____"},
		{"", "", "", "__"},
		{"a_", "b", "", "a___b__"}, // prefix ending in '_' would be ambiguous
		{"a__b", "c", "", "a__b__c__"},
		{"gh", "x__0123456789", "", "gh__x__0123456789__"}, // looks hashed, so it is
	}
	for _, tt := range tests {
		got := ModelName(tt.prefix, tt.tool)
		if !Valid.MatchString(got) {
			t.Errorf("ModelName(%q, %q) = %q, does not match %v", tt.prefix, tt.tool, got, Valid)
		}
		if tt.want != "" {
			if got != tt.want {
				t.Errorf("ModelName(%q, %q) = %q, want %q", tt.prefix, tt.tool, got, tt.want)
			}
			continue
		}
		if !hashed.MatchString(got) || !strings.HasPrefix(got, tt.wantPrefix) {
			t.Errorf("ModelName(%q, %q) = %q, want a hashed name starting %q", tt.prefix, tt.tool, got, tt.wantPrefix)
		}
		if again := ModelName(tt.prefix, tt.tool); again != got {
			t.Errorf("ModelName not deterministic: %q then %q", got, again)
		}
	}
}

func TestPrefix(t *testing.T) {
	tests := map[string]string{
		"demo":                               "demo",
		"gh:sub":                             "gh_sub",
		"my.server":                          "my_server",
		"__x__":                              "x",
		"a::b":                               "a_b",
		"é":                                  "",
		"a-b_c":                              "a-b_c",
		"very-long-server-name-beyond-limit": "very-long-server-name-beyond-lim",
	}
	for in, want := range tests {
		got := Prefix(in)
		if got != want {
			t.Errorf("Prefix(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(got, "__") || strings.HasSuffix(got, "_") {
			t.Errorf("Prefix(%q) = %q is not a clean prefix", in, got)
		}
	}
}

func TestAssign(t *testing.T) {
	entries := []Entry{
		{ID{"gh", "search"}, "gh"},
		{ID{"gh:sub", "search"}, Prefix("gh:sub")},
		{ID{"gh_sub", "search"}, Prefix("gh_sub")}, // same derived prefix as gh:sub
		{ID{"a", "search"}, ""},                    // pass-through
		{ID{"b", "search"}, ""},                    // pass-through, same name
		{ID{"demo", "echo"}, "demo"},
	}
	got, collisions := Assign(entries)
	if got[ID{"gh", "search"}] != "gh__search" || got[ID{"demo", "echo"}] != "demo__echo" {
		t.Errorf("uncontested names changed: %v", got)
	}
	if len(collisions) != 2 {
		t.Fatalf("collisions = %+v, want 2 (gh_sub__search and search)", collisions)
	}
	if collisions[0].Name != "gh_sub__search" || collisions[1].Name != "search" {
		t.Errorf("collision names = %q, %q", collisions[0].Name, collisions[1].Name)
	}
	seen := map[string]ID{}
	for id, n := range got {
		if !Valid.MatchString(n) {
			t.Errorf("%v → %q invalid", id, n)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("%v and %v share %q", id, other, n)
		}
		seen[n] = id
	}
	// Order independence: the same set reversed gives the same names.
	rev := make([]Entry, len(entries))
	for i, e := range entries {
		rev[len(entries)-1-i] = e
	}
	got2, _ := Assign(rev)
	for id, n := range got {
		if got2[id] != n {
			t.Errorf("order dependence for %v: %q vs %q", id, n, got2[id])
		}
	}
}

// FuzzModelName checks that every name is valid and that, for clean
// prefixes, two different tools never share a name.
func FuzzModelName(f *testing.F) {
	f.Add("gh", "create_issue", "gh", "create-issue")
	f.Add("a", "_b", "a_", "b")
	f.Add("", "x__0123456789", "x", "0123456789")
	f.Add("gh", "a.b", "gh", "a_b")
	f.Add("s", strings.Repeat("y", 70), "s", strings.Repeat("y", 71))
	f.Fuzz(func(t *testing.T, p1, t1, p2, t2 string) {
		n1, n2 := ModelName(p1, t1), ModelName(p2, t2)
		for _, n := range []string{n1, n2} {
			if !Valid.MatchString(n) {
				t.Fatalf("invalid name %q", n)
			}
		}
		if p1 == "" || p2 == "" || !cleanPrefix(p1) || !cleanPrefix(p2) {
			return // pass-through and unclean prefixes are kept apart by Assign
		}
		if n1 == n2 && (p1 != p2 || t1 != t2) {
			t.Fatalf("collision: (%q,%q) and (%q,%q) → %q", p1, t1, p2, t2, n1)
		}
	})
}

// FuzzAssign checks that Assign is injective over arbitrary sets of IDs,
// including colon server names, pass-through prefixes and shared prefixes.
func FuzzAssign(f *testing.F) {
	f.Add("gh", "search", "gh:sub", "search", "", "search")
	f.Add("a", "x", "a", "x", "a", "y")
	f.Add("é", "t", "_", "t", "", "_")
	f.Fuzz(func(t *testing.T, s1, t1, s2, t2, s3, t3 string) {
		var entries []Entry
		for i, p := range [][2]string{{s1, t1}, {s2, t2}, {s3, t3}} {
			prefix := Prefix(p[0])
			if i == 2 {
				prefix = "" // one pass-through server
			}
			entries = append(entries, Entry{ID{p[0], p[1]}, prefix})
		}
		got, _ := Assign(entries)
		seen := map[string]ID{}
		for id, n := range got {
			if !Valid.MatchString(n) {
				t.Fatalf("%v → invalid %q", id, n)
			}
			if other, dup := seen[n]; dup {
				t.Fatalf("%v and %v share %q", id, other, n)
			}
			seen[n] = id
		}
	})
}

func ExampleModelName() {
	fmt.Println(ModelName("demo", "echo"))
	fmt.Println(ModelName("gh", "repos.get"))
	// Output:
	// demo__echo
	// gh__repos_get__50f0e24345
}
