package search

import "strings"

// synonymGroups are words that people use for one another when they ask
// for a tool. A query term is expanded to the rest of its groups with
// weight synonymWeight (query.go); documents are never expanded, so the
// table can stay small and a wrong entry only costs a little rank.
//
// Only general vocabulary of tool APIs belongs here: verbs of CRUD and of
// running things, and the nouns that every second server renames. An entry
// of several words ("pull request") matches a document that has the words
// (a phrase alternative) or the compound ("pull_request").
var synonymGroups = [][]string{
	// verbs
	{"create", "add", "new", "make", "insert"},
	{"delete", "remove", "erase", "rm", "destroy", "drop", "purge", "trash"},
	{"list", "enumerate", "show", "ls", "display"},
	{"get", "fetch", "read", "retrieve", "obtain", "load", "view"},
	{"update", "edit", "modify", "change", "patch", "alter", "amend"},
	{"search", "find", "query", "lookup", "look up", "locate", "grep"},
	{"run", "execute", "exec", "invoke", "launch"},
	{"move", "rename", "mv", "relocate"},
	{"copy", "duplicate", "cp", "clone"},
	{"send", "post", "publish"},
	{"write", "save", "store", "put"},
	{"close", "resolve", "finish"},
	{"start", "begin", "trigger", "kick off"},
	{"stop", "cancel", "abort", "terminate", "kill"},
	{"upload", "attach"},
	{"download", "export"},
	{"compress", "zip", "gzip", "archive"},
	{"sum", "add", "total", "plus"},
	// nouns
	{"file", "document", "doc"},
	{"directory", "folder", "dir"},
	{"issue", "ticket", "bug"},
	{"message", "mail", "email", "msg"},
	{"repo", "repository"},
	{"pull request", "pr", "merge request"},
	{"user", "member", "person", "people", "account"},
	{"comment", "reply"},
	{"label", "tag"},
	{"image", "picture", "photo", "img"},
	{"config", "configuration", "settings"},
	{"environment", "env"},
	{"database", "db"},
	{"metadata", "info", "details", "stat", "properties"},
	{"size", "bytes", "big", "large"},
	{"tree", "hierarchy", "recursive", "nested"},
	{"recent", "latest", "newest", "lately"},
	{"permission", "access"},
	{"memory", "remember", "recall", "memorize", "memorise"},
	{"channel", "room", "conversation"},
	{"relation", "relationship", "link", "edge"},
	{"entity", "node"},
	{"observation", "fact"},
	{"page", "doc"},
}

// synonymWeight scales the score of a synonym of a query term.
const synonymWeight = 0.7

// A synonym is one alternative for a query term: a single term, or a
// phrase of several that a document must all have.
type synonym []string

// synonyms maps a term to its synonyms, built once from synonymGroups with
// the same analysis as documents. A word in several groups ("add") is
// expanded to all of them. A phrase entry yields two synonyms, the joined
// term and the phrase.
var synonyms = func() map[string][]synonym {
	m := map[string][]synonym{}
	for _, g := range synonymGroups {
		type entry struct {
			term string    // the word, or the phrase joined
			alts []synonym // how a document may say it
		}
		var es []entry
		for _, w := range g {
			e := entry{term: stem(strings.ReplaceAll(w, " ", ""))}
			e.alts = append(e.alts, synonym{e.term})
			if ws := strings.Fields(w); len(ws) > 1 {
				var p synonym
				for _, x := range ws {
					p = append(p, stem(x))
				}
				e.alts = append(e.alts, p)
			}
			es = append(es, e)
		}
		for _, e := range es {
			for _, f := range es {
				if f.term == e.term {
					continue
				}
				for _, a := range f.alts {
					if !containsSyn(m[e.term], a) {
						m[e.term] = append(m[e.term], a)
					}
				}
			}
		}
	}
	return m
}()

func containsSyn(s []synonym, v synonym) bool {
	for _, x := range s {
		if strings.Join(x, " ") == strings.Join(v, " ") {
			return true
		}
	}
	return false
}
