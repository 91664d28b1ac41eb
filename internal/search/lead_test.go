package search

import (
	"strings"
	"testing"
)

func TestLead(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Search and retrieve logs from Datadog", "Search and retrieve logs from Datadog"},
		{"Create a record. Supports up to 10 fields.", "Create a record"},
		{"Create a record.", "Create a record"},
		{"Get a page\nReturns JSON.", "Get a page"},
		{"\nGet a page. More.", "\nGet a page"}, // a leading line break is not an end
		{"Run document.title in the page, e.g. an expression.", "Run document.title in the page, e.g"},
		{"Read v1.2.3 notes", "Read v1.2.3 notes"},
		{"", ""},
		{".", ""},
	}
	for _, tt := range tests {
		if got := lead(tt.in); got != tt.want {
			t.Errorf("lead(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzLead: the lead is a prefix of the description that holds no end of
// a sentence, and a description without one is its own lead.
func FuzzLead(f *testing.F) {
	for _, s := range []string{"Create a record. More.", "a\nb", "\n\n", "x.y. z", ". ", "é. ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := lead(s)
		if !strings.HasPrefix(s, l) {
			t.Fatalf("lead(%q) = %q, not a prefix", s, l)
		}
		if i := strings.IndexByte(l[min(1, len(l)):], '\n'); i >= 0 {
			t.Fatalf("lead(%q) = %q holds a line break", s, l)
		}
		if strings.Contains(l, ". ") || strings.Contains(l, ".\n") {
			t.Fatalf("lead(%q) = %q holds a full stop that ends a sentence", s, l)
		}
		if l != s && s[len(l)] != '.' && s[len(l)] != '\n' {
			t.Fatalf("lead(%q) = %q ends elsewhere than at a full stop or a line break", s, l)
		}
		if l != s && !strings.ContainsAny(s, ".\n") {
			t.Fatalf("lead(%q) = %q, want all of it", s, l)
		}
	})
}

func TestLeadActions(t *testing.T) {
	bits := func(ws ...string) actions {
		var a actions
		for _, w := range ws {
			a = a.or(actionBits[stem(w)])
		}
		return a
	}
	tests := []struct {
		desc string
		want actions
	}{
		{"Search and retrieve logs from Datadog", bits("search", "retrieve", "log")},
		{"Creates a new text channel in a Discord server", bits("create")},
		{"Notion | Get users", bits("get")},
		// "Returns" says what comes back, not what the tool does.
		{"Returns the list of users", bits("list")},
		{"Allows you to create a page", bits("create")},
		{"Returns, helps, manages tags: list or delete them", bits("list", "delete")},
		{"Get or list Kubernetes resources", bits("get", "list")},
		// The verb must lead: "restore" is the fifth word.
		{"Branches and working tree files: restore them", actions{}},
		{"Manage branches: list all branches, create a new branch, delete a branch, or rename a branch.", bits("list", "create", "delete", "rename")},
		// Only the first sentence counts.
		{"Manage tags. Delete old ones first.", actions{}},
		// "message" names a thing in a tool, not the action of sending.
		{"Message of the day for a channel", actions{}},
		{"", actions{}},
	}
	for _, tt := range tests {
		if got := leadActions(tt.desc); got != tt.want {
			t.Errorf("leadActions(%q) = %b, want %b", tt.desc, got, tt.want)
		}
	}
}

// TestLeadSearch: the first sentence of a description weighs more than
// the rest, a tool's action is also its description's leading verb, and a
// request that leads with a noun used as a verb asks for that action.
func TestLeadSearch(t *testing.T) {
	ix := New()
	ix.Upsert(
		Doc{ID: "ops__get_logs", Name: "ops__get_logs", Description: "Search and retrieve logs"},
		Doc{ID: "ops__logs", Name: "ops__logs", Description: "Logs of the api and of the workers"},
		Doc{ID: "pm__one", Name: "pm__one", Description: "Budget of a project, by month."},
		Doc{ID: "pm__two", Name: "pm__two", Description: "Owner of a project. Budget, budget."},
		Doc{ID: "gh__create_issue", Name: "gh__create_issue", Description: "Create a new issue"},
		Doc{ID: "gh__get_file", Name: "gh__get_file", Description: "Get a file"},
		Doc{ID: "gh__list_commits", Name: "gh__list_commits", Description: "List commits"},
		Doc{ID: "gh__list_branches", Name: "gh__list_branches", Description: "List branches"},
	)
	for q, want := range map[string]string{
		"find the logs of the api": "ops__get_logs",
		"budget of the project":    "pm__one",
		"file a bug":               "gh__create_issue",
		"what does the file say":   "gh__get_file", // "file" leads no request here
	} {
		if got := ix.Search(q, 1); len(got) != 1 || got[0].ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, got, want)
		}
	}
}

// TestQuestion: a question that names no action asks to read.
func TestQuestion(t *testing.T) {
	ix := New()
	ix.Upsert(
		Doc{ID: "billing__create_invoice", Name: "billing__create_invoice", Description: "Create an invoice"},
		Doc{ID: "billing__get_invoice_state", Name: "billing__get_invoice_state", Description: "The state of an invoice"},
		Doc{ID: "ops__list_hosts", Name: "ops__list_hosts", Description: "List hosts"},
	)
	for q, want := range map[string]string{
		"which invoices are overdue": "billing__get_invoice_state",
		"invoices for the customer":  "billing__create_invoice", // no question: the topic decides
		"what invoice should I add":  "billing__create_invoice", // a question that names its action
	} {
		if got := ix.Search(q, 1); len(got) != 1 || got[0].ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, got, want)
		}
	}
}

func TestEntryTerm(t *testing.T) {
	tests := []struct{ entry, want string }{
		{"issue", "issu"},
		{"pull request", "pullrequest"},
		{"turn by turn", "turnturn"}, // as "turn-by-turn" and "turn by turn" analyse
		{"drag and drop", "dragdrop"},
		{"look at", "lookat"}, // one word would be left: the entry stays whole
		{"log in", "login"},
	}
	for _, tt := range tests {
		if got := entryTerm(tt.entry); got != tt.want {
			t.Errorf("entryTerm(%q) = %q, want %q", tt.entry, got, tt.want)
		}
	}
	// The lexicon reaches a compound that analysis builds.
	for _, tok := range analyze(nil, "turn-by-turn") {
		if tok.joined && len(synonyms[tok.term]) == 0 {
			t.Errorf("no synonyms for %q, the compound of turn-by-turn", tok.term)
		}
	}
}

// TestNameQuality: a quality in a tool's name ("slow") is no action of the
// tool, so a tool that leads with a verb of the request's action does not
// outrank the one whose description the request paraphrases.
func TestNameQuality(t *testing.T) {
	ix := New()
	ix.Upsert(
		Doc{ID: "s__slow", Name: "s__slow", Description: "Report progress, then finish."},
		Doc{ID: "s__stubborn", Name: "s__stubborn", Description: "Ignores cancellation: reports progress every 20 ms for delay_ms."},
		Doc{ID: "s__echo", Name: "s__echo", Description: "Echoes its input."},
		Doc{ID: "s__crash", Name: "s__crash", Description: "Exits the server mid-call."},
	)
	if got := ix.Search("report progress then finish", 1); len(got) != 1 || got[0].ID != "s__slow" {
		t.Errorf("Search = %v, want s__slow first", got)
	}
}

// TestActionBits: every action group has an action of its own, which each
// of its words names.
func TestActionBits(t *testing.T) {
	seen := map[actions]int{}
	for i, g := range actionGroups {
		bit := actionBit(i)
		if j, dup := seen[bit]; dup {
			t.Fatalf("action groups %d and %d share an action", j, i)
		}
		seen[bit] = i
		for _, w := range g {
			if !actionBits[entryTerm(w)].meets(bit) {
				t.Errorf("%q of action group %d (%q…) does not name its action", w, i, g[0])
			}
		}
	}
}
