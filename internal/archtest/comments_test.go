package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A comment says what is. It may cite an upstream project's issue to
// explain why code exists (go.dev/issue/N, golang/go#N, go-sdk #N, go-sdk
// issue #N, owner/repo#N), never an issue of this project or a work
// session ("issue 7", "Issue 6:", "session 4", "the session-6 run",
// "#123").
var (
	// numbered is an issue, ticket or session with a number.
	numbered = regexp.MustCompile(`(?i)\b(?:issues?|tickets?|sessions?)[ -]?#?[0-9]+\b`)
	// bareHash is "#N" that is not part of a word or path ("owner/repo#N").
	bareHash = regexp.MustCompile(`(?:^|[^\w/.#-])(#[0-9]+)\b`)
	// issueNote is a parenthesised citation without a number: "(issue: ...)".
	issueNote = regexp.MustCompile(`(?i)\((?:issues?|tickets?|sessions?):`)
	// upstream is what, just before a match, names go-sdk as the project
	// cited: "go-sdk ", "go-sdk issue ". Other projects are cited as
	// owner/repo#N, which neither pattern matches.
	upstream = regexp.MustCompile(`(?i)\bgo-sdk(?: issues?)? $`)
)

// citations returns the citations of this project's issues or of work
// sessions in one line of comment text.
func citations(line string) []string {
	var found []string
	take := func(start, end int) {
		before := line[:start]
		if upstream.MatchString(before) || quoted(before) {
			return
		}
		found = append(found, line[start:end])
	}
	for _, m := range issueNote.FindAllStringIndex(line, -1) {
		take(m[0], m[1])
	}
	for _, m := range numbered.FindAllStringIndex(line, -1) {
		take(m[0], m[1])
	}
	for _, m := range bareHash.FindAllStringSubmatchIndex(line, -1) {
		if !slices.ContainsFunc(found, func(f string) bool { return strings.Contains(f, line[m[2]:m[3]]) }) {
			take(m[2], m[3])
		}
	}
	return found
}

// quoted reports whether text ending here is inside a quotation (an
// example of what a user types, say): an odd number of quotation marks
// came before.
func quoted(before string) bool {
	return (strings.Count(before, `"`)+strings.Count(before, "“")-strings.Count(before, "”"))%2 == 1
}

func TestCitations(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"see issue 7", []string{"issue 7"}},
		{"(issue 7, item 6)", []string{"issue 7"}},
		{"Issue 6: GET and DELETE answer 405", []string{"Issue 6"}},
		{"as measured in session 4", []string{"session 4"}},
		{"the session-6 run", []string{"session-6"}},
		{"fixed in Sessions 3-5", []string{"Sessions 3"}},
		{"closes issue #12", []string{"issue #12"}},
		{"fixed in #123", []string{"#123"}},
		{"(#45)", []string{"#45"}},
		{"ticket 9 and issue 10", []string{"ticket 9", "issue 10"}},
		{"settings (issue: catalogue-first start)", []string{"(issue:"}},
		{"the issue: a race", nil},
		{"go-sdk issue #1177: it", nil},
		{"(go-sdk #1177)", nil},
		{"(golang/go#22682), and", nil},
		{"https://go.dev/issue/27505", nil},
		{"anthropics/claude-code#5319 and anthropics/claude-code#5973", nil},
		{"error quoted in agno-agi/agno#2112", nil},
		{"mark3labs/mcphost#35", nil},
		{"read/write issue 5", []string{"issue 5"}},
		{`arguments ("issue 42", "the last 20 lines")`, nil},
		{`a "session 3" label, then issue 4`, []string{"issue 4"}},
		{"a legacy session's call", nil},
		{"each downstream session", nil},
		{"sessions: 2 at most", nil},
		{"https://github.com/o/r/issues/12", nil},
		{"page#12", nil},
		{"SEP-2575 diagnostic tools", nil},
	}
	for _, tt := range tests {
		if got := citations(tt.line); !slices.Equal(got, tt.want) {
			t.Errorf("citations(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestCommentsCiteNoIssue reads the comments of every Go file of the
// module (but testdata and hidden directories) and fails on each that
// cites an issue of this project or a work session.
func TestCommentsCiteNoIssue(t *testing.T) {
	mod := findModule(t)
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(mod.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != mod.dir && (name == "testdata" || name == "vendor" || name == "node_modules" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if path != mod.dir {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		files++
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, g := range f.Comments {
			for _, c := range g.List {
				for i, line := range strings.Split(c.Text, "\n") {
					for _, cite := range citations(line) {
						pos := fset.Position(c.Pos())
						t.Errorf("%s:%d: %q cites an issue of this project or a work session; say what is instead (an upstream issue names its project: owner/repo#N, go-sdk #N)",
							relTo(mod.dir, pos.Filename), pos.Line+i, cite)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("read %d Go files under %s; the walk is broken", files, mod.dir)
	}
}
