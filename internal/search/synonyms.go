package search

import (
	"slices"
	"strings"
)

// The lexicon: words that people use for one another when they ask for a
// tool. A query term is expanded to the rest of its groups with weight
// synonymWeight (query.go); documents are never expanded, so a wrong entry
// only costs a little rank. It was built from the vocabulary of real
// servers' tool definitions (code hosting, chat, docs, browsers, web
// search, maps, CRM, databases, Kubernetes, CI, error tracking, shells),
// read for what their tools are called and what a request would call
// them instead, never from a set of requests.
//
// actionGroups are the verbs: each group is one action, and the action
// of a request is weighed on its own against the topic (query.go). An
// entry of several words ("pull request") matches a document that has the
// words (a phrase alternative) or the compound ("pull_request"); a query
// that writes it as words finds it through the query's compounds.
var actionGroups = [][]string{
	{"create", "add", "new", "make", "insert", "open", "generate", "init", "initialize", "spawn", "register", "raise", "start"},
	{"delete", "remove", "erase", "rm", "destroy", "drop", "purge", "trash", "discard", "tear down", "teardown", "wipe", "uninstall", "unlink", "deregister"},
	{"list", "enumerate", "show", "ls", "display", "browse", "exist", "available"},
	{"get", "fetch", "read", "retrieve", "obtain", "load", "view", "show", "see", "inspect", "cat", "look at", "details", "describe"},
	{"update", "edit", "modify", "change", "patch", "alter", "amend", "set", "adjust", "tweak", "replace", "rewrite", "bump", "close", "reopen", "resolve"},
	{"search", "find", "query", "lookup", "look up", "locate", "grep", "seek", "discover", "filter", "look for", "google"},
	{"run", "execute", "exec", "invoke", "launch", "evaluate", "eval", "call", "trigger"},
	{"move", "rename", "mv", "relocate", "transfer", "reparent", "transition"},
	{"copy", "duplicate", "cp", "clone", "fork", "replicate"},
	{"send", "post", "publish", "notify", "announce", "tell", "broadcast", "dm", "message"},
	{"write", "save", "store", "put", "persist", "dump"},
	{"close", "resolve", "finish", "complete", "done", "dismiss", "ignore", "archive", "check off", "tick off", "cross off", "mark done", "wrap up"},
	{"start", "begin", "trigger", "kick off", "kickoff", "launch", "spin up", "boot"},
	{"stop", "cancel", "abort", "terminate", "kill", "halt", "interrupt", "quit"},
	{"upload", "attach"},
	{"download", "export", "pull down"},
	{"compress", "zip", "gzip", "archive"},
	{"sum", "add", "total", "plus"},
	{"merge", "squash", "land", "combine", "integrate"},
	{"review", "approve", "request changes", "lgtm"},
	{"comment", "reply", "respond", "annotate", "remark", "answer"},
	{"navigate", "go", "visit", "goto", "browse", "open", "load"},
	{"back", "previous", "return", "history"},
	{"click", "press", "tap", "hit", "push"},
	{"type", "fill", "enter", "input", "key in", "populate", "complete"},
	{"hover", "mouse over", "mouseover", "point at"},
	{"select", "choose", "pick", "option", "dropdown"},
	{"drag", "drag and drop", "dragdrop"},
	{"screenshot", "capture", "snapshot", "screen capture", "screengrab", "snap"},
	{"scrape", "extract", "pull", "parse", "harvest", "read"},
	{"crawl", "spider", "traverse", "walk"},
	{"install", "deploy", "setup", "set up", "provision"},
	{"upgrade", "update", "bump"},
	{"rollback", "roll back", "revert", "undo", "restore", "downgrade"},
	{"rollout", "roll out", "deploy", "release", "ship", "restart", "redeploy"},
	{"scale", "replicas", "resize", "autoscale"},
	{"rerun", "retry", "restart", "re run", "rebuild", "redo", "reboot", "bounce", "relaunch"},
	{"connect", "login", "log in", "sign in", "authenticate", "attach", "link"},
	{"disconnect", "logout", "log out", "sign out", "detach"},
	{"count", "tally", "how many", "many"},
	{"validate", "lint", "check", "verify", "test"},
	{"assert", "expect", "verify", "ensure", "confirm"},
	{"unarchive", "restore", "reopen", "undelete", "bring back", "uncomplete"},
	{"rotate", "regenerate", "renew", "reissue"},
	{"prune", "clean", "cleanup", "clean up", "tidy", "unused", "dangling"},
	{"upsert", "insert", "ingest"},
	{"import", "ingest", "load", "bulk insert", "seed"},
	{"rerank", "rank", "reorder", "reranking", "relevance"},
	{"subscribe", "follow", "unsubscribe", "unfollow"},
	{"apply", "deploy", "roll out"},
	{"grant", "allow", "authorize", "give access", "revoke"},
	{"blame", "who wrote", "who changed", "authored"},
	{"cherry pick", "cherrypick", "backport"},
	{"analyze", "analyse", "diagnose", "debug", "investigate", "troubleshoot", "root cause", "why"},
	{"monitor", "watch", "track", "observe", "alert"},
	{"wait", "await", "until", "appear", "sleep"},
	{"explain", "plan", "profile", "optimize", "slow"},
	{"explain", "mean", "meaning", "definition", "define", "document"},
	{"forward", "tunnel", "proxy", "expose"},
	{"drain", "cordon", "uncordon", "evict", "maintenance"},
	{"emulate", "simulate", "mock", "fake"},
	{"react", "reaction", "emoji"},
	{"research", "investigate", "study"},
	{"summarize", "summarise", "summary", "digest", "tldr"},
	{"translate", "convert", "transform", "render"},
	{"map", "sitemap", "discover"},
	{"link", "associate", "relate", "connect", "attach"},
	{"assign", "reassign", "delegate", "allocate", "give", "hand", "hand over", "hand off", "handoff"},
	{"log", "record", "track"},
	{"switch", "checkout", "check out", "change to"},
	{"mute", "silence", "snooze", "quiet"},
	{"schedule", "book", "reserve", "plan"},
	{"cron", "schedule", "recurring", "periodic", "periodically", "hourly", "daily", "nightly", "weekly", "every hour", "every day"},
	{"stash", "shelve", "set aside"},
}

// nounGroups are the nouns that every second server renames, and the
// abbreviations of the tool-use world.
var nounGroups = [][]string{
	{"file", "document", "doc", "readme", "changelog", "license", "dockerfile", "makefile"},
	{"directory", "folder", "dir"},
	{"issue", "ticket", "bug", "defect", "bug report"},
	{"message", "mail", "email", "msg", "dm", "direct message", "chat", "note", "post"},
	{"repo", "repository", "codebase"},
	{"pull request", "pr", "merge request", "mr", "change request"},
	{"user", "member", "person", "people", "account", "profile", "teammate", "colleague"},
	{"comment", "reply", "feedback", "note", "remark", "discussion", "discuss"},
	{"label", "tag", "category"},
	{"tag", "version", "semver", "release tag"},
	{"image", "picture", "photo", "img", "icon", "png", "svg", "jpg", "asset"},
	{"config", "configuration", "settings", "setting", "preferences", "options", "cfg", "conf"},
	{"environment", "env"},
	{"database", "db", "data source", "datasource", "datastore"},
	{"metadata", "info", "details", "stat", "stats", "properties", "attributes", "opening hours", "phone number"},
	{"size", "bytes", "big", "large", "storage", "disk"},
	{"tree", "hierarchy", "recursive", "nested"},
	{"recent", "latest", "newest", "lately", "last"},
	{"permission", "access", "role", "scope", "privilege", "privileges", "grant"},
	{"dependency", "dependencies", "depend", "depends", "blocked", "blocker", "blocking", "prerequisite", "waiting on"},
	{"status update", "project update", "progress update", "status report", "check in"},
	{"connection", "connections", "session", "sessions", "active"},
	{"bucket", "object storage", "blob", "s3", "r2"},
	{"queue", "message queue", "job queue"},
	{"batch", "bulk", "multiple", "several"},
	{"memory", "remember", "recall", "memorize", "memorise"},
	{"channel", "room", "conversation", "group"},
	{"relation", "relationship", "link", "edge", "association"},
	{"entity", "node"},
	{"observation", "fact"},
	{"page", "doc", "webpage", "web page", "tab", "site", "screen"},
	{"website", "site", "web site", "domain", "url"},
	{"url", "link", "href", "uri", "address", "http", "https"},
	{"web", "internet", "online", "google", "news"},
	{"commit", "changeset", "revision", "history"},
	{"branch", "ref"},
	{"review", "approval"},
	{"check", "status", "ci", "passing", "green", "red", "failing", "health"},
	{"dialog", "popup", "pop up", "modal", "alert", "confirm", "prompt"},
	{"dropdown", "select", "combobox", "picker", "menu", "listbox"},
	{"input", "field", "textbox", "text box", "box", "form"},
	{"key", "keyboard", "keystroke", "keypress", "hotkey", "enter", "escape", "tab"},
	{"console", "devtools", "log"},
	{"network", "request", "xhr", "traffic", "http", "api call", "ajax"},
	{"dark mode", "darkmode", "color scheme", "colorscheme", "dark", "theme", "light mode", "media"},
	{"window", "viewport", "screen", "dimensions"},
	{"javascript", "js", "script", "code", "ecmascript"},
	{"code", "source", "snippet", "sourcecode"},
	{"accessibility", "a11y", "aria", "accessibility tree", "snapshot"},
	{"table", "collection", "sheet"},
	{"record", "row", "document", "entry", "item", "object", "entries", "rows"},
	{"field", "property", "attribute", "column", "properties"},
	{"schema", "structure", "shape", "fields", "columns", "types"},
	{"index", "indexes", "indices"},
	{"query", "select", "sql", "filter"},
	{"aggregate", "aggregation", "group by", "groupby", "pipeline", "rollup"},
	{"log", "logs", "output", "stdout", "stderr", "trace"},
	{"error", "exception", "crash", "failure", "fault", "problem", "incident", "stacktrace", "stack trace"},
	{"event", "occurrence"},
	{"pipeline", "build", "ci", "workflow", "job"},
	{"test", "tests", "spec", "suite"},
	{"flaky", "intermittent", "unstable", "nondeterministic"},
	{"artifact", "artifacts", "build output", "binary", "bundle"},
	{"deployment", "deploy", "release", "rollout", "app"},
	{"pod", "container", "workload"},
	{"cluster", "kube", "k8s", "kubernetes", "kubectl"},
	{"namespace", "ns"},
	{"context", "kubeconfig", "cluster"},
	{"chart", "helm", "helm chart", "release"},
	{"manifest", "yaml", "yml", "spec"},
	{"port", "local port"},
	{"replica", "replicas", "instances"},
	{"process", "pid", "task", "program", "job"},
	{"terminal", "shell", "command line", "cli", "bash", "repl", "console", "session"},
	{"command", "cmd"},
	{"cpu", "memory", "ram", "load", "usage"},
	{"credit", "credits", "usage", "quota", "billing", "balance", "spend", "cost"},
	{"paper", "papers", "article", "publication", "study", "preprint", "arxiv", "pubmed"},
	{"cite", "citation", "citations", "reference", "references", "related"},
	{"documentation", "docs", "doc", "reference", "manual", "guide", "api reference"},
	{"library", "package", "framework", "sdk", "module", "lib", "dependency", "pkg"},
	{"location", "place", "address", "spot", "venue", "business", "restaurant", "shop", "store", "cafe", "poi"},
	{"coordinates", "latitude", "longitude", "lat", "lng", "geocode", "gps", "geolocation"},
	{"directions", "route", "navigation", "turn by turn", "itinerary", "drive", "driving", "commute"},
	{"distance", "travel time", "far", "duration", "eta", "drive"},
	{"elevation", "altitude", "height", "high", "sea level"},
	{"nearby", "near", "local", "around"},
	{"contact", "lead", "customer", "prospect", "client"},
	{"deal", "opportunity", "sale"},
	{"company", "organization", "org", "account", "business"},
	{"crm", "hubspot", "salesforce"},
	{"engagement", "activity", "call", "meeting", "note", "task", "email"},
	{"workflow", "automation", "flow", "sequence"},
	{"design", "figma", "mockup", "frame", "layout", "component", "ui"},
	{"emoji", "reaction", "thumbs up", "thumbsup"},
	{"thread", "replies", "conversation", "forum post", "topic"},
	{"workspace", "team", "org", "organization"},
	{"token", "key", "secret", "credential", "credentials", "api key", "password"},
	{"statistics", "stats", "metrics", "usage", "analytics"},
	{"metrics", "timeseries", "time series", "latency", "throughput", "percentile", "p50", "p90", "p95", "p99", "response time", "error rate", "apm"},
	{"host", "machine", "vm", "hostname", "virtual machine"},
	{"downtime", "maintenance window", "maintenance", "outage"},
	{"cycle", "sprint", "iteration"},
	{"subtask", "sub issue", "sub task", "child issue", "subissue"},
	{"priority", "urgent", "urgency", "severity", "importance"},
	{"rental", "stay", "accommodation", "lodging", "hotel", "vacation rental"},
	{"notification", "notifications", "inbox", "unread", "mention", "mentions"},
	{"viewer", "current user", "whoami", "logged in user", "authenticated user", "signed in user"},
	{"webhook", "hook", "callback"},
	{"plan", "explain", "query plan", "execution plan", "performance", "slow"},
	{"monitor", "monitors", "watcher", "watch", "alert"},
	{"research", "deep research", "report"},
	{"markdown", "md", "text", "plain text"},
	{"pdf", "portable document"},
	{"edit", "block", "diff", "snippet"},
	{"title", "heading", "name"},
	{"id", "identifier", "slug", "key"},
	{"template", "templates", "blueprint", "boilerplate"},
	{"content", "contents", "text", "body"},
	{"block", "paragraph", "section", "content"},
}

// shellGroups are the shell's commands, each the phrase of what it does:
// "mkdir logs" asks for a tool that creates a directory.
var shellGroups = [][]string{
	{"mkdir", "create directory", "make directory", "create folder"},
	{"rmdir", "remove directory", "delete directory"},
	{"touch", "create file"},
	{"ps", "list processes", "process list"},
	{"pwd", "current directory", "working directory"},
	{"du", "disk usage", "file size"},
	{"tail", "last lines", "follow logs"},
	{"curl", "wget", "http request", "fetch url"},
	{"git clone", "clone repository"},
	{"kubectl", "kubernetes"},
	{"psql", "postgres", "sql"},
}

// synonymGroups are all groups of the lexicon.
var synonymGroups = append(append(append([][]string{}, actionGroups...), nounGroups...), shellGroups...)

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
			e := entry{term: entryTerm(w)}
			e.alts = append(e.alts, synonym{e.term})
			if ws := entryWords(w); len(ws) > 1 && distinct(ws) {
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

// entryWords returns the words of a lexicon entry as analysis keeps them:
// without stop words ("turn by turn" → "turn", "turn"), unless that would
// leave one word of several ("look at", "log in"), which the entry does
// not mean alone.
func entryWords(w string) []string {
	ws := strings.Fields(w)
	var kept []string
	for _, x := range ws {
		if !stopWords[x] {
			kept = append(kept, x)
		}
	}
	if len(kept) < 2 {
		return ws
	}
	return kept
}

// distinct reports whether the words of an entry differ from one another:
// a phrase of one word repeated ("turn by turn" without its stop word) is
// no phrase, and would match any document with that word.
func distinct(ws []string) bool {
	for i, w := range ws {
		if slices.Contains(ws[i+1:], w) {
			return false
		}
	}
	return true
}

// entryTerm returns the term of a lexicon entry: its words joined and
// stemmed, as analysis joins the parts of "turn-by-turn" and a query's
// adjacent words.
func entryTerm(w string) string {
	return stem(strings.Join(entryWords(w), ""))
}

func containsSyn(s []synonym, v synonym) bool {
	for _, x := range s {
		if strings.Join(x, " ") == strings.Join(v, " ") {
			return true
		}
	}
	return false
}

// actions is a set of actions: bit i is actionGroups[i].
type actions [2]uint64

// maxActions is how many groups actions can hold.
const maxActions = len(actions{}) * 64

func (a actions) or(b actions) actions { return actions{a[0] | b[0], a[1] | b[1]} }
func (a actions) meets(b actions) bool { return a[0]&b[0]|a[1]&b[1] != 0 }
func (a actions) empty() bool          { return a == actions{} }
func actionBit(i int) (a actions)      { a[i/64] = 1 << (i % 64); return a }

// actionBits maps a term to the actions that it names.
var actionBits = func() map[string]actions {
	if len(actionGroups) > maxActions {
		panic("search: more action groups than actions holds")
	}
	m := map[string]actions{}
	for i, g := range actionGroups {
		for _, w := range g {
			t := entryTerm(w)
			m[t] = m[t].or(actionBit(i))
		}
	}
	return m
}()

// leadVerbs are nouns of the tool-use world that a request leading with
// them uses as a verb, for the action given: "file a bug", "book a
// meeting room", "ping the on-call engineer". As the first word of a
// request they are that action and no longer a topic.
var leadVerbs = map[string]string{"file": "create", "book": "schedule", "ping": "send", "text": "send"}

// selfNames are requests' ways of naming the caller that are made of
// stop words alone ("who am I", "logged in as"), which analysis would
// drop: selfPhrases writes them as "whoami", an entry of the lexicon.
var selfNames = []string{"who am i", "logged in as", "signed in as", "logged in user", "signed in user"}

// selfPhrases returns query with each of selfNames, as whole words in any
// case, written as "whoami".
func selfPhrases(query string) string {
	if len(query) < len("who am i") || !strings.Contains(lowerASCII(query), " i") && !strings.Contains(lowerASCII(query), "in ") {
		// Most requests: no allocation.
		return query
	}
	b := []byte(query) // ASCII letters lower-cased: same byte offsets as query
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	low := string(b)
	for _, p := range selfNames {
		for from := 0; ; {
			i := strings.Index(low[from:], p)
			if i < 0 {
				break
			}
			i += from
			j := i + len(p)
			if (i > 0 && classify(rune(low[i-1])) >= lower) || (j < len(low) && classify(rune(low[j])) >= lower) {
				from = j
				continue
			}
			query = query[:i] + "whoami" + query[j:]
			low = low[:i] + "whoami" + low[j:]
			from = i + len("whoami")
		}
	}
	return query
}

// questionWords lead a question, which asks to read what it names unless
// it names another action ("what can I delete").
var questionWords = map[string]bool{"what": true, "which": true, "who": true, "whose": true, "where": true, "when": true, "how": true, "is": true, "are": true, "does": true, "do": true}

// readActions are the actions that read: get, list and search.
var readActions = actionBits[stem("get")].or(actionBits[stem("list")]).or(actionBits[stem("search")])

// nameNouns are words of requests that name an action ("DM the lead",
// "message the team", "why is it slow") but in tool names and
// descriptions name a thing or a quality ("open_dm", "post_message", a
// tool called "slow").
var nameNouns = map[string]bool{"dm": true, stem("message"): true, "slow": true}

// actionsOf returns the actions named by toks: all of them for a tool's
// name ("create_or_update_file" creates and updates).
func actionsOf(toks []token) actions {
	var a actions
	for _, t := range toks {
		if !nameNouns[t.term] {
			a = a.or(actionBits[t.term])
		}
	}
	return a
}

// Descriptions say what a tool does in their first words, in the verb
// that names its action: "Search and retrieve logs", "Creates a new
// record", "Notion | Get users". leadActions returns the actions of the
// verbs that lead the first sentence of a description: the first word
// that names an action, if it is among the first maxLead words, and the
// verbs that follow it directly ("Search and retrieve"). A description
// that leads with "manage" ("Manage branches: list, create, delete or
// rename them") does every action its first sentence names.
func leadActions(desc string) actions {
	toks := analyze(nil, lead(desc))
	var a actions
	i := -1 // words seen, fillers left out
	for j, t := range toks {
		if t.joined || a.empty() && leadFiller[t.term] {
			continue
		}
		i++
		if t.term == leadManage {
			for _, u := range toks[j+1 : min(len(toks), j+1+maxManaged)] {
				if !u.joined && !nameNouns[u.term] {
					a = a.or(actionBits[u.term])
				}
			}
			return a
		}
		b := actionBits[t.term]
		if nameNouns[t.term] {
			b = actions{}
		}
		switch {
		case a.empty() && i >= maxLead:
			return actions{}
		case !b.empty():
			a = a.or(b)
		case !a.empty():
			return a
		}
	}
	return a
}

const (
	maxLead    = 2  // words of a description's first sentence searched for its verb
	maxManaged = 24 // words after "manage" searched for the actions it lists
)

var leadManage = stem("manage")

// leadFiller are verbs that lead descriptions without saying what the tool
// does: "Returns the list of users" lists, "Allows you to create" creates.
var leadFiller = map[string]bool{stem("returns"): true, stem("allows"): true, stem("lets"): true, stem("helps"): true, stem("enables"): true, stem("provides"): true}

// queryAction returns the action of a request, that of its first word
// that names one, since a request leads with what it wants done ("close
// the bug and add a label" closes), and all the actions its words name.
func queryAction(toks []token) (first, all actions) {
	for i, t := range toks {
		if inflected(t.raw) {
			// "opening hours", "deals closing this month", "issues
			// assigned to me": a request says its action in the base
			// form; the -ing and -ed forms describe the objects.
			continue
		}
		if stateAdjective(toks, i) {
			continue
		}
		a := actionBits[t.term]
		if i+1 < len(toks) && t.plain && toks[i+1].plain {
			// A verb of two words: "tear down", "look up", "roll back".
			a = a.or(actionBits[stem(t.raw+toks[i+1].raw)])
		}
		if first.empty() {
			first = a
		}
		all = all.or(a)
	}
	return first, all
}

// stateAdjective reports whether toks[i] is a state before a plural noun
// that does not lead the request: "show the open issues", "list new
// messages". It is then an adjective, neither the action nor a synonym of
// one, and matches as itself ("state": "open").
func stateAdjective(toks []token, i int) bool {
	return i > 0 && i+1 < len(toks) && stateWords[toks[i].raw] && plural(toks[i+1].raw) &&
		(actionBits[toks[i+1].term].empty() || nameNouns[toks[i+1].term])
}

// stateWords are verbs of the lexicon that also name the state of things
// ("open issues", "new messages", "done tasks").
var stateWords = map[string]bool{"open": true, "new": true, "closed": true, "done": true, "complete": true, "active": true, "pending": true, "live": true, "draft": true}

// inflected reports whether w ends in -ing or -ed.
func inflected(w string) bool {
	return len(w) > 4 && (strings.HasSuffix(w, "ing") || strings.HasSuffix(w, "ed"))
}
