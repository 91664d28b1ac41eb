package search

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// terms renders analysis compactly: words as their stems, compounds
// prefixed with "+".
func terms(s string) string {
	var out []string
	for _, t := range analyze(nil, s) {
		if t.joined {
			out = append(out, "+"+t.term)
		} else {
			out = append(out, t.term)
		}
	}
	return strings.Join(out, " ")
}

func TestAnalyze(t *testing.T) {
	tests := []struct{ in, want string }{
		// snake_case, with the server prefix split off by Index, not here
		{"create_issue", "creat issu +createissu"},
		{"github__create_issue", "github creat issu +githubcreateissu"},
		// camelCase, acronyms and kebab-case
		{"getFileInfo", "get file info +getfileinfo"},
		{"HTTPServer", "http server +httpserver"},
		{"parseJSONBody", "pars json bodi +parsejsonbodi"},
		{"get-tiny-image", "get tini imag +gettinyimag"},
		// dots and slashes join; digits split off and are dropped alone
		{"README.md", "readm md +readmemd"},
		{"owner/repo", "owner repo +ownerrepo"},
		{"base64 s3 v2 oauth2", "base +base64 +s3 +v2 oauth +oauth2"},
		{"the last 20 lines", "last line"},
		// stop words, single letters and punctuation
		{"Please, can you show me the files?", "show file"},
		{"a b c", ""},
		// a word of more than four parts is not an identifier
		{"a_b_c_d_e", ""},
		{"list_all_the_open_issues", "list all open issu"},
		// the hash suffix of a long model-facing name is dropped
		{"gh__read_file__0a1b2c3d4e", "gh read file +ghreadfil"},
		// acronyms and their plurals
		{"listPRs getURLsFound IDs", "list pr +listpr get url found +geturlsfound id"},
		{"deadbeefcafe", "deadbeefcaf"}, // no digit: a (strange) word
		// non-ASCII letters are kept, lower-cased, not stemmed
		{"Größe ÄNDERN", "größe ändern"},
		{"日本語のテキスト", "日本語のテキスト"},
		{"", ""},
		{"  __--..  ", ""},
	}
	for _, tt := range tests {
		if got := terms(tt.in); got != tt.want {
			t.Errorf("analyze(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStem(t *testing.T) {
	// Inflections of one word meet; different words stay apart.
	same := [][]string{
		{"create", "creates", "created", "creating", "creation"},
		{"delete", "deletes", "deleted", "deleting", "deletion"},
		{"directory", "directories"},
		{"list", "lists", "listed", "listing"},
		{"file", "files", "filed"},
		{"query", "queries", "queried"},
		{"status", "statuses"},
		{"use", "uses", "used", "using"},
		{"deploy", "deployment", "deployments", "deployed"},
		{"select", "selection", "selected"},
		{"run", "running", "runs"},
		{"repository", "repositories"},
		{"relation", "relations"},
		{"address", "addresses"},
	}
	for _, g := range same {
		for _, w := range g[1:] {
			if stem(w) != stem(g[0]) {
				t.Errorf("stem(%q) = %q, stem(%q) = %q; want equal", w, stem(w), g[0], stem(g[0]))
			}
		}
	}
	apart := [][2]string{
		{"user", "use"}, {"general", "generate"}, {"server", "serve"},
		{"comment", "come"}, {"pages", "pagination"},
	}
	for _, p := range apart {
		if stem(p[0]) == stem(p[1]) {
			t.Errorf("stem(%q) = stem(%q) = %q; want different", p[0], p[1], stem(p[0]))
		}
	}
	// Short, non-ASCII and mixed words are left alone.
	for _, w := range []string{"is", "ls", "größen", "s3", "ab1"} {
		if stem(w) != w {
			t.Errorf("stem(%q) = %q, want unchanged", w, stem(w))
		}
	}
}

func TestSynonyms(t *testing.T) {
	has := func(from, to string) bool {
		for _, s := range synonyms[stem(from)] {
			if strings.Join(s, " ") == to {
				return true
			}
		}
		return false
	}
	for _, tt := range []struct{ from, to string }{
		{"add", stem("create")}, {"making", stem("create")},
		{"remove", stem("delete")}, {"rm", stem("delete")},
		{"folder", stem("directory")}, {"dir", stem("directory")},
		{"ticket", stem("issue")}, {"fetch", "get"}, {"lookup", "search"},
		{"repo", stem("repository")}, {"exec", "run"},
		// a phrase entry yields the compound and the phrase
		{"pr", "pullrequest"}, {"pr", "pull request"},
		// a word in two groups expands to both
		{"add", "sum"},
		{"give", stem("assign")}, {"p95", stem("metrics")}, {"latency", stem("metrics")},
		{"whoami", stem("viewer")}, {"version", "tag"},
	} {
		if !has(tt.from, tt.to) {
			t.Errorf("synonyms[%q] lacks %q; has %v", stem(tt.from), tt.to, synonyms[stem(tt.from)])
		}
	}
	if has("create", stem("create")) {
		t.Errorf("a term is its own synonym")
	}
	// "turn by turn" less its stop word is no phrase: it would match
	// every document that says "turn".
	if has("route", "turn turn") {
		t.Errorf("synonyms[route] holds the phrase \"turn turn\"")
	}
	if !has("route", "turnturn") {
		t.Errorf("synonyms[route] lacks the compound turnturn")
	}
}

func TestSynonymsRank(t *testing.T) {
	ix := New()
	ix.Upsert(
		Doc{ID: "fs__create_directory", Name: "fs__create_directory", Description: "Create a new directory."},
		Doc{ID: "fs__delete_file", Name: "fs__delete_file", Description: "Delete a file."},
		Doc{ID: "gh__list_pull_requests", Name: "gh__list_pull_requests", Description: "List pull requests."},
		Doc{ID: "gh__list_issues", Name: "gh__list_issues", Description: "List issues."},
	)
	for q, want := range map[string]string{
		"make a folder":     "fs__create_directory",
		"erase a document":  "fs__delete_file",
		"show open PRs":     "gh__list_pull_requests",
		"enumerate tickets": "gh__list_issues",
	} {
		if hits := ix.Search(q, 1); len(hits) == 0 || hits[0].ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, hits, want)
		}
	}
}

// FuzzAnalyze checks that analysis never panics and yields well-formed
// terms, and that splitting into words is stable: the lower-cased parts,
// re-joined with spaces, split into the same parts (hash-like ones aside).
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"github__create_issue", "getFileInfo HTTPServer", "base64 s3", "README.md",
		"gh__x__0a1b2c3d4e", "Größe ÄNDERN", "日本語", "a_b-c.d/e:f", "\xff\xfe", "ǅungla ǈ",
		"ΣΊΣΥΦΟΣ", "İstanbul", "x\u0301y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range analyze(nil, s) {
			if tok.term == "" || tok.raw == "" {
				t.Fatalf("analyze(%q): empty token %+v", s, tok)
			}
			if len(tok.raw) > maxPart && !tok.joined {
				t.Fatalf("analyze(%q): part %q longer than %d", s, tok.raw, maxPart)
			}
			if !utf8.ValidString(tok.term) {
				t.Fatalf("analyze(%q): invalid UTF-8 term %q", s, tok.term)
			}
			for _, r := range tok.term {
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
					t.Fatalf("analyze(%q): term %q holds %q", s, tok.term, r)
				}
			}
			if stopWords[tok.raw] {
				t.Fatalf("analyze(%q): stop word %q", s, tok.raw)
			}
		}
		var parts []string
		words(s, func(p []string) {
			for _, x := range p {
				// A part may be a run that only looks like a hash on
				// its own ("A0000000000" → "a", "0000000000").
				if x = lowerASCII(x); !hashLike(x) {
					parts = append(parts, x)
				}
			}
		})
		var again []string
		words(strings.Join(parts, " "), func(p []string) {
			for _, x := range p {
				again = append(again, lowerASCII(x))
			}
		})
		if strings.Join(parts, " ") != strings.Join(again, " ") {
			t.Fatalf("words(%q) = %q, but re-splitting gives %q", s, parts, again)
		}
	})
}
