package search

import (
	"strings"
	"testing"
)

func TestSelfPhrases(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"who am I logged in as", "whoami whoami"},
		{"Who Am I", "whoami"},
		{"which account am I signed in as?", "which account am I whoami?"},
		{"who am interested", "who am interested"}, // not the whole word "i"
		{"blogged in asia", "blogged in asia"},     // not whole words
		{"getViewer who am i", "getViewer whoami"}, // the rest keeps its case
		{"ÄÖ who am i ÜÖ", "ÄÖ whoami ÜÖ"},         // offsets kept past non-ASCII
		{"short", "short"},
	} {
		if got := selfPhrases(tt.in); got != tt.want {
			t.Errorf("selfPhrases(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestVersionLike(t *testing.T) {
	for w, want := range map[string]bool{
		"v1.2.0": true, "2.15.3": true, "V10.0": true, "1.2.3.4": true,
		"1": false, "v1": false, "1.2.3.4.5": false, "1..2": false, "v1.2a": false,
		"README.md": false, "3.": false, "": false,
	} {
		if got := versionLike(w); got != want {
			t.Errorf("versionLike(%q) = %v, want %v", w, got, want)
		}
	}
}

func TestStateAdjective(t *testing.T) {
	for _, tt := range []struct {
		q    string
		want []string // the words that are states, not actions
	}{
		{"show the open issues", []string{"open"}},
		{"list new messages in the channel", []string{"new"}},
		{"open a ticket", nil},       // leads: the action
		{"open issues", nil},         // leads: the action
		{"show the open issue", nil}, // one thing: open it
		{"show open and close", nil}, // no noun after it
	} {
		toks := analyze(nil, tt.q)
		var got []string
		for i := range toks {
			if stateAdjective(toks, i) {
				got = append(got, toks[i].raw)
			}
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%q: states %q, want %q", tt.q, got, tt.want)
		}
	}
}

// TestVocabulary: requests in the words people use find the tool whose
// definition says it in its own (shapes taken from real servers' tools).
func TestVocabulary(t *testing.T) {
	ix := New()
	ix.Upsert(
		Doc{ID: "pm__get_viewer", Name: "pm__get_viewer", Description: "Get information about the currently authenticated user"},
		Doc{ID: "obs__get_logs", Name: "obs__get_logs", Description: "Search and retrieve logs"},
		Doc{ID: "pm__assign_issue", Name: "pm__assign_issue", Description: "Assign an issue to a user"},
		Doc{ID: "pm__archive_issue", Name: "pm__archive_issue", Description: "Archive an issue"},
		Doc{ID: "shell__give_feedback", Name: "shell__give_feedback", Description: "Open a feedback form"},
		Doc{ID: "obs__query_metrics", Name: "obs__query_metrics", Description: "Query timeseries points of metrics"},
		Doc{ID: "ci__get_usage", Name: "ci__get_usage", Description: "Usage of the API for the last day"},
		Doc{ID: "vcs__tag", Name: "vcs__tag", Description: "Manage tags: list, create or delete a tag"},
		Doc{ID: "vcs__commit", Name: "vcs__commit", Description: "Record changes to the repository"},
		Doc{ID: "gh__add_issue_comment", Name: "gh__add_issue_comment", Description: "Add a comment to an existing issue"},
		Doc{ID: "gh__list_issues", Name: "gh__list_issues", Description: "List issues in a repository", Params: []Param{{Name: "state", Description: "open, closed or all"}}},
	)
	for q, want := range map[string]string{
		"who am I logged in as":               "pm__get_viewer",     // stop words that name the caller
		"give this ticket to Maria":           "pm__assign_issue",   // give … to: assign
		"what's the p95 of checkout":          "obs__query_metrics", // percentiles and latency are metrics
		"mark it as v1.2.0":                   "vcs__tag",           // a version number
		"show the open issues assigned to me": "gh__list_issues",    // "open" is their state
	} {
		if got := ix.Search(q, 1); len(got) != 1 || got[0].ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, ix.Search(q, 3), want)
		}
	}
}

// TestCompoundSynonyms: a word joined by hyphens that is an entry of the
// lexicon ("kick-off", "turn-by-turn") is expanded to its synonyms.
func TestCompoundSynonyms(t *testing.T) {
	ix := New()
	ix.Upsert(
		Doc{ID: "ci__trigger_pipeline", Name: "ci__trigger_pipeline", Description: "Trigger a pipeline"},
		Doc{ID: "maps__directions", Name: "maps__directions", Description: "Get directions between two points"},
	)
	for q, want := range map[string]string{"kick-off": stem("trigger"), "turn-by-turn": stem("directions")} {
		toks := analyze(nil, q)
		ix.mu.RLock()
		groups := ix.expand(q, toks, ix.derive())
		ix.mu.RUnlock()
		found := false
		for _, g := range groups {
			for _, a := range g.alts {
				found = found || a.term == want
			}
		}
		if !found {
			t.Errorf("expand(%q) = %v, want the synonym %q", q, groups, want)
		}
	}
}

// TestExpandNoise: half of a compound that the lexicon knows is not
// corrected for typos ("tear down" is not "team down"), and a finished
// word whose stem differs from it is not extended as if being typed
// ("firing" is not "first").
func TestExpandNoise(t *testing.T) {
	ix := New()
	ix.Upsert(
		Doc{ID: "k8s__delete", Name: "k8s__delete", Description: "Delete a deployment"},
		Doc{ID: "org__list_teams", Name: "org__list_teams", Description: "List each team of the year"},
		Doc{ID: "ops__get_monitors", Name: "ops__get_monitors", Description: "Get monitors status and alerts"},
		Doc{ID: "web__first_page", Name: "web__first_page", Description: "Open the first page"},
		Doc{ID: "notes__save", Name: "notes__save", Description: "Save a note"},
	)
	// A last word that the stemmer did not shorten may still be being
	// typed ("say" → "sai"): it is extended by prefix.
	ix.mu.RLock()
	groups := ix.expand("parrot what I say", analyze(nil, "parrot what I say"), ix.derive())
	ix.mu.RUnlock()
	if len(groups) == 0 || groups[len(groups)-1].alts[0].term != "save" {
		t.Errorf("expand(%q) = %v, want the last word extended to \"save\"", "parrot what I say", groups)
	}
	for q, bad := range map[string][]string{
		"tear down the old deployment": {"team", "year"},
		"which alerts are firing":      {"first"},
	} {
		toks := analyze(nil, q)
		ix.mu.RLock()
		groups := ix.expand(q, toks, ix.derive())
		ix.mu.RUnlock()
		for _, g := range groups {
			for _, a := range g.alts {
				for _, b := range bad {
					if a.term == b {
						t.Errorf("expand(%q) has %q: %v", q, b, groups)
					}
				}
			}
		}
	}
}
