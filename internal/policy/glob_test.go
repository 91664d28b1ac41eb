package policy

import (
	"errors"
	"path"
	"strings"
	"testing"
)

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern string
		id      string
		want    bool
	}{
		// Literals match exactly themselves.
		{"gh:list_issues", "gh:list_issues", true},
		{"gh:list_issues", "gh:list_issue", false},
		{"gh:list_issues", "gh:list_issuesX", false},
		{"gh:list_issues", "xgh:list_issues", false},

		// '*' crosses ':' and '/', since IDs are opaque strings.
		{"gh:*", "gh:delete_repo", true},
		{"gh:*", "gh:", true},
		{"gh:*", "gh", false},
		{"gh:*", "gh:sub:tool", true},
		{"gh:*", "ghx:tool", false},
		{"*", "", true},
		{"*", "anything:at/all", true},
		{"*:delete_*", "gh:delete_repo", true},
		{"*:delete_*", "gh:sub:delete_repo", true},
		{"*:delete_*", "gh:list", false},
		{"*_repo", "gh:delete_repo", true},
		{"*_repo", "gh:delete_repos", false},
		{"demo:file:///*", "demo:file:///tmp/a:b", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZcd", false},
		{"a*b*c", "acb", false},
		{"a**b", "ab", true},
		{"*a*", "bab", true},

		// Server names that contain ':' (configured with an explicit prefix).
		{"gh:sub:*", "gh:sub:x", true},
		{"gh:sub:*", "gh:x", false},
		{"gh:*:x", "gh:sub:x", true},
		{"gh:?", "gh:x", true},
		{"gh:?", "gh:xy", false},
		{"gh:?", "gh:", false},
		{"gh?sub:x", "gh:sub:x", true},

		// '?' is one character, not one byte.
		{"t:?", "t:é", true},
		{"t:??", "t:é", false},
		{"t:?", "t:\xff", true}, // one invalid byte is one character

		// Classes, as in path.Match.
		{"gh:[dl]*", "gh:delete", true},
		{"gh:[dl]*", "gh:list", true},
		{"gh:[dl]*", "gh:get", false},
		{"gh:[^dl]*", "gh:get", true},
		{"gh:[^dl]*", "gh:list", false},
		{"v[0-9]:x", "v7:x", true},
		{"v[0-9]:x", "va:x", false},
		{"v[0-9a-f]", "vc", true},
		{"[é-ë]", "ê", true},
		{"[*]", "*", true},
		{"[*]", "a", false},
		{`[\]]`, "]", true},
		{`[\-]`, "-", true},
		{`[\\]`, `\`, true},
		{"[[]", "[", true},
		{"x[:]y", "x:y", true},
		{"x[^:]y", "x:y", false},
		{"[a]", "", false},
		{"]", "]", true}, // a lone ']' is a literal
		{"a-b^c", "a-b^c", true},

		// '\\' escapes.
		{`gh:\*`, "gh:*", true},
		{`gh:\*`, "gh:x", false},
		{`gh:\?`, "gh:?", true},
		{`gh:\?`, "gh:x", false},
		{`gh:\[x]`, "gh:[x]", true},
		{`a\\b`, `a\b`, true},
		{`\a`, "a", true},
		{`*\*`, "weird:tool*", true},
		{`*\*`, "weird:tool", false},

		// Empty pattern matches only the empty ID.
		{"", "", true},
		{"", "x", false},
	}
	for _, tt := range tests {
		g, err := CompileGlob(tt.pattern)
		if err != nil {
			t.Errorf("CompileGlob(%q): %v", tt.pattern, err)
			continue
		}
		if got := g.Match(tt.id); got != tt.want {
			t.Errorf("Glob(%q).Match(%q) = %v, want %v", tt.pattern, tt.id, got, tt.want)
		}
		if g.String() != tt.pattern {
			t.Errorf("Glob(%q).String() = %q", tt.pattern, g.String())
		}
	}
}

func TestCompileGlobErrors(t *testing.T) {
	tests := []struct {
		pattern string
		offset  int
		problem string
	}{
		{`gh:\`, 3, "trailing backslash"},
		{"gh:[", 4, "unterminated character class"},
		{"gh:[a", 4, "unterminated character class"},
		{"gh:[a-", 6, "unterminated character class"},
		{"gh:[]", 4, "empty character class"},
		{"gh:[^]", 5, "empty character class"},
		{"gh:[a-]", 6, "range without an upper bound"},
		{"gh:[-a]", 4, `unescaped '-' in character class (write \-)`},
		{"gh:[a--]", 6, `unescaped '-' in character class (write \-)`},
		{`gh:[\`, 4, "unterminated character class"},
		{"gh:[z-a]", 6, `reversed range 'z'-'a'`},
		{"gh:[\xff]", 4, "invalid UTF-8 in character class"},
	}
	for _, tt := range tests {
		_, err := CompileGlob(tt.pattern)
		var pe *PatternError
		if !errors.As(err, &pe) {
			t.Errorf("CompileGlob(%q) = %v, want a *PatternError", tt.pattern, err)
			continue
		}
		if pe.Offset != tt.offset || pe.Problem != tt.problem || pe.Pattern != tt.pattern {
			t.Errorf("CompileGlob(%q) = %+v, want offset %d problem %q", tt.pattern, *pe, tt.offset, tt.problem)
		}
	}
}

func TestQuoteGlob(t *testing.T) {
	for _, id := range []string{"gh:x", "odd:*", `w:a?b[c]\d`, "", "a:[z-a]"} {
		g, err := CompileGlob(QuoteGlob(id))
		if err != nil {
			t.Fatalf("CompileGlob(QuoteGlob(%q)): %v", id, err)
		}
		if !g.Match(id) {
			t.Errorf("QuoteGlob(%q) = %q does not match its input", id, QuoteGlob(id))
		}
		if g.Match(id+"x") || g.Match("odd:y") {
			t.Errorf("QuoteGlob(%q) = %q matches too much", id, QuoteGlob(id))
		}
	}
}

func TestGlobMatchDoesNotAllocate(t *testing.T) {
	g := MustCompileGlob("gh:*:[dl]?lete_*_repo")
	allocs := testing.AllocsPerRun(100, func() { g.Match("gh:sub:delete_big_repo") })
	if allocs != 0 {
		t.Errorf("Match allocates %v times per call", allocs)
	}
}

// FuzzGlob checks that compiling and matching never panic; that a pattern
// without metacharacters, or one made by QuoteGlob, matches exactly itself;
// and that, where no '/' is involved, results and errors agree with
// path.Match (whose '*' and '?' merely refuse to cross '/').
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"gh:*", "gh:delete_repo"},
		{"*:delete_*", "gh:sub:delete_x"},
		{`gh:\*`, "gh:*"},
		{"v[0-9a-f]?", "vcé"},
		{"[^a-c]*[\\]]", "d]"},
		{"a*b*c", "aXbYbZc"},
		{"[z-a]", "m"},
		{"[", "["},
		{"t:?", "t:\xff"},
		{"", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, id string) {
		g, err := CompileGlob(pattern)
		if err == nil {
			g.Match(id)
		}

		if !strings.ContainsAny(pattern, `*?[\`) {
			if err != nil {
				t.Fatalf("CompileGlob(%q) of a literal: %v", pattern, err)
			}
			if got, want := g.Match(id), id == pattern; got != want {
				t.Fatalf("literal Glob(%q).Match(%q) = %v, want %v", pattern, id, got, want)
			}
			if !g.Match(pattern) {
				t.Fatalf("literal Glob(%q) does not match itself", pattern)
			}
		}

		q := MustCompileGlob(QuoteGlob(id))
		if !q.Match(id) || q.Match(id+"x") || (pattern != id && q.Match(pattern)) {
			t.Fatalf("QuoteGlob(%q) = %q does not match exactly its input", id, QuoteGlob(id))
		}

		if strings.Contains(pattern, "/") || strings.Contains(id, "/") {
			return
		}
		want, werr := path.Match(pattern, id)
		var pe *PatternError
		switch {
		case werr != nil && err == nil:
			t.Fatalf("CompileGlob(%q) accepts what path.Match rejects", pattern)
		case werr == nil && err != nil:
			// The one deliberate difference: reversed ranges.
			if !errors.As(err, &pe) || !strings.HasPrefix(pe.Problem, "reversed range") {
				t.Fatalf("CompileGlob(%q) = %v; path.Match accepts it", pattern, err)
			}
		case err == nil:
			if got := g.Match(id); got != want {
				t.Fatalf("Glob(%q).Match(%q) = %v, path.Match says %v", pattern, id, got, want)
			}
		}
	})
}
