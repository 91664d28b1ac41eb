package approval

import (
	"path"
	"strings"
)

// A preset labels the tools of a well-known server by their upstream
// names (globs as in path.Match). The first entry that matches decides; a
// tool none matches falls back to the defaults.
type presetEntry struct {
	names  []string
	labels Set
}

var (
	private          = Set{Private: true}
	untrusted        = Set{Untrusted: true}
	privateUntrusted = Set{Private: true, Untrusted: true}
	untrustedOutward = Set{Untrusted: true, Outward: true}
	outward          = Set{Outward: true}
	none             = Set{}
)

// presets are the built-in labels. On GitHub, issues, pull requests,
// comments and reviews are content anyone may have written (untrusted);
// files, code, commits and branches are the repository's (private: the
// guard cannot tell a public repository from a private one); another read
// is both; what creates or changes something is outward, since it can
// publish what it is given. A fetch or a search sends
// its URL or query out and brings back a stranger's page.
var presets = map[string][]presetEntry{
	"github": {
		{[]string{"create_*", "update_*", "push_*", "merge_*", "fork_*", "add_*", "delete_*", "request_*", "submit_*", "assign_*", "dismiss_*", "mark_*", "manage_*", "rerun_*", "run_*", "cancel_*"}, outward},
		{[]string{"get_me"}, none},
		{[]string{"*issue*", "*pull_request*", "*comment*", "*discussion*", "*notification*", "*review*"}, untrusted},
		{[]string{"get_file_contents", "search_code", "*commit*", "*branch*", "*tag*", "*release*", "get_repository*", "list_repositories*", "search_repositories"}, private},
		{[]string{"get_*", "list_*", "search_*", "download_*"}, privateUntrusted},
	},
	"gitlab": {
		{[]string{"create_*", "update_*", "push_*", "merge_*", "fork_*", "delete_*"}, outward},
		{[]string{"get_*", "list_*", "search_*"}, privateUntrusted},
	},
	"filesystem": {
		{[]string{"read_*", "list_*", "search_*", "get_*", "directory_tree"}, private},
		{[]string{"*"}, none},
	},
	"git": {
		{[]string{"git_log", "git_show", "git_diff*", "git_status", "git_branch"}, private},
		{[]string{"*"}, none},
	},
	"fetch": {
		{[]string{"*"}, untrustedOutward},
	},
	"search": {
		{[]string{"*"}, untrustedOutward},
	},
	"browser": {
		{[]string{"*navigate*", "*goto*", "*fetch*", "*open*"}, untrustedOutward},
		{[]string{"*"}, untrusted},
	},
	"slack": {
		{[]string{"*post*", "*reply*", "*send*", "*add_reaction*", "*create*", "*update*"}, outward},
		{[]string{"*"}, privateUntrusted},
	},
	"mail": {
		{[]string{"*send*", "*reply*", "*forward*", "*draft*"}, outward},
		{[]string{"*"}, privateUntrusted},
	},
	"database": {
		{[]string{"*"}, privateUntrusted},
	},
	"memory": {
		{[]string{"*"}, private},
	},
}

// presetLabels returns the labels preset gives the tool called name.
func presetLabels(preset, name string) (Set, bool) {
	for _, e := range presets[preset] {
		for _, g := range e.names {
			if ok, _ := path.Match(g, name); ok {
				return e.labels, true
			}
		}
	}
	return Set{}, false
}

// presetReads returns what the reads of preset carry: every label its
// tools carry but outward (a resource or a prompt is read, never sent).
func presetReads(preset string) (Set, bool) {
	entries, ok := presets[preset]
	if !ok {
		return Set{}, false
	}
	var s Set
	for _, e := range entries {
		s.Private = s.Private || e.labels.Private
		s.Untrusted = s.Untrusted || e.labels.Untrusted
	}
	return s, true
}

// presetWords recognise a well-known server in its configured name, its
// command and arguments (a package name) or its URL, in this order of
// precedence: the first preset any word of which occurs wins.
var presetWords = []struct {
	preset string
	words  []string
}{
	{"github", []string{"github"}},
	{"gitlab", []string{"gitlab"}},
	{"filesystem", []string{"server-filesystem", "filesystem"}},
	{"git", []string{"mcp-server-git"}},
	{"fetch", []string{"mcp-server-fetch", "server-fetch", "fetch"}},
	{"search", []string{"brave-search", "tavily", "exa-mcp", "perplexity", "web-search", "duckduckgo"}},
	{"browser", []string{"puppeteer", "playwright", "browser"}},
	{"slack", []string{"slack"}},
	{"mail", []string{"gmail", "outlook", "imap", "email"}},
	{"database", []string{"postgres", "supabase", "sqlite", "mysql", "mongodb", "redis"}},
	{"memory", []string{"server-memory"}},
}

// PresetOf names the well-known server that a server of this name and
// launch (command and arguments, or URL) is, "" for none.
func PresetOf(name string, launch ...string) string {
	hay := strings.ToLower(name + " " + strings.Join(launch, " "))
	for _, p := range presetWords {
		for _, w := range p.words {
			if strings.Contains(hay, w) {
				return p.preset
			}
		}
	}
	return ""
}

// Presets lists the built-in presets' names, for docs and tests.
func Presets() []string {
	out := make([]string, 0, len(presetWords))
	for _, p := range presetWords {
		out = append(out, p.preset)
	}
	return out
}
