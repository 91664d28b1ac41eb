package search

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func ids(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

func TestSearchBasics(t *testing.T) {
	ix := New()
	if got := ix.Search("anything", 5); got != nil {
		t.Errorf("empty index: Search = %v, want nil", got)
	}
	ix.Upsert(loadCorpus(t)...)
	if got := ix.Search("the of and please", 5); got != nil {
		t.Errorf("stop words only: Search = %v, want nil", got)
	}
	if got := ix.Search("", 5); got != nil {
		t.Errorf("empty query: Search = %v, want nil", got)
	}
	if got := ix.Search("zzqxj wvkpl", 5); got != nil {
		t.Errorf("unknown words: Search = %v, want nil", got)
	}
	if got := len(ix.Search("file", 0)); got != defaultK {
		t.Errorf("k=0: %d hits, want %d", got, defaultK)
	}
	if got := len(ix.Search("file", -3)); got != defaultK {
		t.Errorf("k<0: %d hits, want %d", got, defaultK)
	}
	hits := ix.Search("file", 1000)
	if len(hits) < 20 || len(hits) > ix.Len() {
		t.Errorf("k=1000: %d hits of %d docs", len(hits), ix.Len())
	}
	for i := 1; i < len(hits); i++ {
		if worse(hits[i-1], hits[i]) {
			t.Fatalf("hits out of order at %d: %v then %v", i, hits[i-1], hits[i])
		}
	}
	// The exact name ranks first, whatever else matches.
	for q, want := range map[string]string{
		"read_text_file":            "filesystem__read_text_file",
		"list directory with sizes": "filesystem__list_directory_with_sizes",
		"createPullRequest":         "github__create_pull_request",
		"notion-duplicate-page":     "notion__notion-duplicate-page",
		"get-tiny-image":            "everything__get-tiny-image",
		"filesystem__read_file":     "filesystem__read_file",
		"github__create_issue":      "github__create_issue",
		"linear__create_issue":      "linear__create_issue",
		"slack__slack_post_message": "slack__slack_post_message",
		"notion__notion-get-users":  "notion__notion-get-users",
	} {
		if got := ix.Search(q, 1); len(got) != 1 || got[0].ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, got, want)
		}
	}
	// A long query is cut, not rejected.
	long := ""
	for range 500 {
		long += "file "
	}
	if got := ix.Search(long, 3); len(got) != 3 {
		t.Errorf("long query: %d hits", len(got))
	}
}

func TestTiesOrderedByID(t *testing.T) {
	ix := New()
	for _, id := range []string{"c", "a", "d", "b"} {
		ix.Upsert(Doc{ID: id, Name: "srv__same_tool", Description: "Identical text."})
	}
	ix.Upsert(Doc{ID: "z", Name: "srv__other", Description: "Unrelated."})
	for range 10 {
		if got := ids(ix.Search("same tool", 10)); !reflect.DeepEqual(got, []string{"a", "b", "c", "d"}) {
			t.Fatalf("ties: got %v, want a b c d", got)
		}
	}
	if got := ids(ix.Search("same tool", 2)); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("ties cut at k: got %v, want a b", got)
	}
}

func TestUpsertRemove(t *testing.T) {
	docs := loadCorpus(t)
	ix := New()
	ix.Upsert(docs...)
	n := ix.Len()
	if n != len(docs) {
		t.Fatalf("Len = %d, want %d", n, len(docs))
	}

	// A removed tool is never returned, for any query, at any k.
	gone := "filesystem__create_directory"
	ix.Remove(gone, "no-such-id")
	if ix.Len() != n-1 {
		t.Fatalf("after Remove: Len = %d, want %d", ix.Len(), n-1)
	}
	queries := append(loadQueries(t, "queries.json"), labelled{Query: "create directory"}, labelled{Query: "filesystem create_directory"})
	for _, q := range queries {
		for _, h := range ix.Search(q.Query, 1000) {
			if h.ID == gone {
				t.Fatalf("Search(%q) returned removed %s", q.Query, gone)
			}
		}
	}
	ix.Remove(gone) // twice is fine
	if ix.Len() != n-1 {
		t.Fatalf("double Remove: Len = %d", ix.Len())
	}

	// An updated description changes results: the old words no longer
	// find the tool, the new ones do.
	echo := Doc{ID: "everything__echo", Name: "everything__echo", Description: "Renders a flamingo as ASCII art."}
	ix.Upsert(echo)
	if ix.Len() != n-1 {
		t.Fatalf("replacing Upsert changed Len to %d", ix.Len())
	}
	if got := ix.Search("flamingo ascii art", 1); len(got) != 1 || got[0].ID != echo.ID {
		t.Errorf("new description: Search = %v, want %s", got, echo.ID)
	}
	for _, h := range ix.Search("input string", 1000) {
		if h.ID == echo.ID {
			t.Errorf("old description still matches: %v", h)
		}
	}

	// Within one call, the last doc with an ID wins; empty IDs are ignored.
	ix.Upsert(Doc{ID: "x", Name: "x__first", Description: "pelican"}, Doc{ID: "x", Name: "x__second", Description: "walrus"}, Doc{Name: "noid__tool"})
	if got := ids(ix.Search("pelican", 5)); len(got) != 0 {
		t.Errorf("first of duplicate IDs indexed: %v", got)
	}
	if got := ids(ix.Search("walrus", 5)); !reflect.DeepEqual(got, []string{"x"}) {
		t.Errorf("last of duplicate IDs: %v", got)
	}
	if ix.Len() != n {
		t.Errorf("Len = %d, want %d", ix.Len(), n)
	}
}

// TestIncrementalEqualsFresh checks that any history of Upserts and
// Removes ranks exactly like an index built at once from the result: the
// same IDs in the same order with the same scores.
func TestIncrementalEqualsFresh(t *testing.T) {
	docs := loadCorpus(t)
	inc := New()
	// Add in three batches, one by one for the last; remove every third;
	// replace every fifth with a changed description; re-add some removed.
	third := len(docs) / 3
	inc.Upsert(docs[:third]...)
	inc.Upsert(docs[third : 2*third]...)
	for _, d := range docs[2*third:] {
		inc.Upsert(d)
	}
	final := map[string]Doc{}
	for _, d := range docs {
		final[d.ID] = d
	}
	for i, d := range docs {
		switch {
		case i%3 == 0:
			inc.Remove(d.ID)
			delete(final, d.ID)
		case i%5 == 0:
			d.Description += " Also handles archived records."
			inc.Upsert(d)
			final[d.ID] = d
		}
	}
	for i, d := range docs {
		if i%3 == 0 && i%2 == 0 {
			inc.Upsert(d)
			final[d.ID] = d
		}
	}
	fresh := New()
	for _, d := range docs { // same order as docs, for readability of failures
		if f, ok := final[d.ID]; ok {
			fresh.Upsert(f)
		}
	}
	if inc.Len() != fresh.Len() {
		t.Fatalf("Len: incremental %d, fresh %d", inc.Len(), fresh.Len())
	}
	for _, q := range loadQueries(t, "queries.json") {
		a, b := inc.Search(q.Query, 10), fresh.Search(q.Query, 10)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("Search(%q):\nincremental %v\nfresh       %v", q.Query, a, b)
		}
	}
}

// TestConcurrent runs searches against concurrent Upserts and Removes;
// run it with -race. Searches must see either state of a tool, never a
// torn one: every hit is a live ID with a finite positive score.
func TestConcurrent(t *testing.T) {
	docs := loadCorpus(t)
	ix := New()
	ix.Upsert(docs...)
	qs := loadQueries(t, "queries.json")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				for _, h := range ix.Search(qs[i%len(qs)].Query, 5) {
					if h.ID == "" || !(h.Score > 0) {
						t.Errorf("bad hit %+v", h)
						return
					}
				}
				_ = ix.Len()
			}
		}()
	}
	for round := range 30 {
		batch := docs[round%len(docs):]
		batch = batch[:min(len(batch), 20)]
		ix.Remove(ids2(batch)...)
		for _, d := range batch {
			d.Description = fmt.Sprintf("%s (round %d)", d.Description, round)
			ix.Upsert(d)
		}
	}
	close(stop)
	wg.Wait()
	if ix.Len() != len(docs) {
		t.Errorf("Len = %d, want %d", ix.Len(), len(docs))
	}
}

func ids2(docs []Doc) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.ID)
	}
	return out
}

func TestPrefixAndTypo(t *testing.T) {
	ix := New()
	ix.Upsert(loadCorpus(t)...)
	for q, want := range map[string]string{
		"dirctory tree":         "filesystem__directory_tree",           // one typo
		"delte entities":        "memory__delete_entities",              // one typo
		"list allowed direc":    "filesystem__list_allowed_directories", // last word being typed
		"toggle subscr":         "everything__toggle-subscriber-updates",
		"knowledge grph entire": "memory__read_graph",
	} {
		if got := ix.Search(q, 1); len(got) != 1 || got[0].ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, got, want)
		}
	}
}

// TestServerPrefix checks that the server prefix is indexed whole and in
// parts, and that a hashed model-facing name is indexed by its readable
// part only.
func TestServerPrefix(t *testing.T) {
	ix := New()
	ix.Upsert(
		Doc{ID: "1", Name: "google_drive__list_files", Description: "List files."},
		Doc{ID: "2", Name: "filesystem__list_directory", Description: "List files."},
		Doc{ID: "3", Name: "my-gh__sync__0a1b2c3d4e", Description: "Synchronise."},
	)
	for q, want := range map[string]string{
		"google drive files": "1", "googledrive files": "1", "drive listing": "1",
		"file system listing": "2", "filesystem list": "2",
		"my gh sync": "3",
	} {
		if got := ix.Search(q, 1); len(got) != 1 || got[0].ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, got, want)
		}
	}
	if got := ix.Search("0a1b2c3d4e", 5); got != nil {
		t.Errorf("hash suffix indexed: %v", got)
	}
}

// TestFillsK: when fewer than k tools answer the query's words, the rest
// come from character trigrams, below every lexical hit; a tool that
// shares nothing with the query is not returned.
func TestFillsK(t *testing.T) {
	ix := New()
	ix.Upsert(
		Doc{ID: "maps__geocode", Name: "maps__geocode", Description: "Convert an address into coordinates"},
		Doc{ID: "maps__elevation", Name: "maps__elevation", Description: "Height above sea level of a point"},
		Doc{ID: "places__location_info", Name: "places__location_info", Description: "Details of a location"},
		Doc{ID: "chat__post_message", Name: "chat__post_message", Description: "Post a message to a channel"},
	)
	tests := []struct {
		query string
		k     int
		want  []string
	}{
		{"post to the channel", 3, []string{"chat__post_message"}},
		// "colocation" is beyond the stemmer and prefix matching
		// ("colocat" against "locat"); its trigrams find the location
		// tool, ahead of the rest.
		{"colocation of an elevation", 4, []string{"maps__elevation", "places__location_info"}},
		{"colocation", 2, []string{"places__location_info"}},
		{"colocation of the geocoder", 4, []string{"maps__geocode", "places__location_info"}},
	}
	for _, tt := range tests {
		hits := ix.Search(tt.query, tt.k)
		if got := ids(hits); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Search(%q, %d) = %v, want %v", tt.query, tt.k, got, tt.want)
		}
		for i := 1; i < len(hits); i++ {
			if worse(hits[i-1], hits[i]) {
				t.Errorf("Search(%q): out of order at %d: %v", tt.query, i, hits)
			}
		}
	}
	if got := ix.Search("zzqxj wvkpl", 5); got != nil {
		t.Errorf("no shared trigrams: Search = %v, want nil", got)
	}
}

// TestActionServerNumber: beyond the words a request shares with a tool,
// its action, the server it names and the number of its object weigh on
// their own.
func TestActionServerNumber(t *testing.T) {
	ix := New()
	ix.Upsert(
		Doc{ID: "gh__update_pull_request", Name: "gh__update_pull_request", Description: "Update a pull request: title, body, state"},
		Doc{ID: "gh__add_pull_request_comment", Name: "gh__add_pull_request_comment", Description: "Add a comment to a pull request"},
		Doc{ID: "chat__list_wiki_people", Name: "chat__list_wiki_people", Description: "The people whose pages the wiki links"},
		Doc{ID: "wiki__list_users", Name: "wiki__list_users", Description: "All users"},
		Doc{ID: "gh__get_issue", Name: "gh__get_issue", Description: "Get an issue"},
		Doc{ID: "gh__list_issues", Name: "gh__list_issues", Description: "Issues of a repository"},
		Doc{ID: "gh__delete_branch", Name: "gh__delete_branch", Description: "Delete a branch"},
		Doc{ID: "gh__list_branches", Name: "gh__list_branches", Description: "List the branches of a repository"},
		Doc{ID: "fs__read_text_file", Name: "fs__read_text_file", Description: "Read a text file"},
		Doc{ID: "fs__delete_file", Name: "fs__delete_file", Description: "Delete a file"},
	)
	for q, want := range map[string]string{
		"erase the text file":      "fs__delete_file",   // the action, though the topic says "read"
		"people in the wiki":       "wiki__list_users",  // the named server
		"show me the open issues":  "gh__list_issues",   // several issues
		"show me issue 12":         "gh__get_issue",     // one
		"tear down the old branch": "gh__delete_branch", // a verb of two words
		"remaining branches":       "gh__list_branches",
	} {
		if got := ix.Search(q, 1); len(got) != 1 || got[0].ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, got, want)
		}
	}
}

// TestRequestForms: a shell command stands for what it does, and a
// '#' word of a request is a chat channel.
func TestRequestForms(t *testing.T) {
	ix := New()
	ix.Upsert(
		Doc{ID: "fs__create_directory", Name: "fs__create_directory", Description: "Create a directory"},
		Doc{ID: "fs__list_directory", Name: "fs__list_directory", Description: "List a directory's logs and files"},
		Doc{ID: "chat__get_channel_history", Name: "chat__get_channel_history", Description: "Recent messages of a channel"},
		Doc{ID: "ops__list_alerts", Name: "ops__list_alerts", Description: "Recent incidents and alerts"},
	)
	for q, want := range map[string]string{
		"mkdir logs":                         "fs__create_directory",
		"what was said in #incidents lately": "chat__get_channel_history",
	} {
		if got := ix.Search(q, 1); len(got) != 1 || got[0].ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, got, want)
		}
	}
}

// FuzzSearch: any query returns at most k distinct live tools, best first,
// with positive scores.
func FuzzSearch(f *testing.F) {
	for _, q := range []string{"mkdir logs", "post in #general", "colocation", "tear down the old deployment", "#", "# #a", "DM the lead", "ßẞ issues"} {
		f.Add(q, 5)
	}
	docs, _ := loadDevSet(f)
	ix := New()
	ix.Upsert(docs...)
	f.Fuzz(func(t *testing.T, q string, k int) {
		k = k%50 + 1
		if k <= 0 {
			k += 50
		}
		hits := ix.Search(q, k)
		if len(hits) > k {
			t.Fatalf("%d hits for k=%d", len(hits), k)
		}
		seen := map[string]bool{}
		for i, h := range hits {
			if seen[h.ID] || h.Score <= 0 || math.IsNaN(h.Score) || (i > 0 && worse(hits[i-1], h)) {
				t.Fatalf("Search(%q, %d) = %v", q, k, hits)
			}
			seen[h.ID] = true
		}
	})
}

// TestNamedInRequest: a tool named exactly in a request ranks first,
// whether by its model-facing name or by its tool part written as an
// identifier, and answers the whole request (Coverage 1); a plain word
// that happens to be a tool's name is only a word.
func TestNamedInRequest(t *testing.T) {
	ix := New()
	ix.Upsert(
		Doc{ID: "gh__create_issue", Name: "gh__create_issue", Description: "Create an issue in a repository"},
		Doc{ID: "gh__search", Name: "gh__search", Description: "Search code"},
		Doc{ID: "jira__create_ticket", Name: "jira__create_ticket", Description: "File a new bug report or ticket in a project"},
		Doc{ID: "web__fetch", Name: "web__fetch", Description: "Fetch a URL and search the page for a bug report"},
	)
	for q, want := range map[string]string{
		"use `gh__create_issue` to file the bug report": "gh__create_issue",
		"file the bug report with create_issue please":  "gh__create_issue",
		"gh__create_issue":                        "gh__create_issue",
		"file a bug report (jira__create_ticket)": "jira__create_ticket",
		"search for a bug report":                 "web__fetch",
	} {
		hits := ix.Search(q, 3)
		if len(hits) == 0 || hits[0].ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, hits, want)
			continue
		}
		if strings.Contains(q, want) || strings.Contains(q, "create_issue") {
			if hits[0].Coverage != 1 {
				t.Errorf("Search(%q): the named tool's coverage %v, want 1", q, hits[0].Coverage)
			}
		}
	}
	if hits := ix.Search("zebra bug", 4); len(hits) == 0 || hits[0].Coverage <= 0 || hits[0].Coverage >= 1 {
		t.Errorf("a request half answered: %v, want a coverage between 0 and 1", hits)
	}
}

// TestEmptyDescription: a tool without a description (some servers give
// none) is found by its name, and scores a finite number, lexically and
// in the trigram fill.
func TestEmptyDescription(t *testing.T) {
	ix := New()
	ix.Upsert(
		Doc{ID: "shop__update-product", Name: "shop__update-product"},
		Doc{ID: "shop__get-orders", Name: "shop__get-orders"},
		Doc{ID: "gh__list_issues", Name: "gh__list_issues", Description: "List the issues of a repository, oldest first"},
	)
	if hits := ix.Search("update a product", 3); len(hits) == 0 || hits[0].ID != "shop__update-product" {
		t.Errorf("Search(update a product) = %v, want shop__update-product first", hits)
	}
	for _, q := range []string{"update a product", "oldest orders", "produc"} {
		for _, h := range ix.Search(q, 3) {
			if math.IsNaN(h.Score) || h.Score <= 0 {
				t.Errorf("Search(%q): %v", q, h)
			}
		}
	}
}
