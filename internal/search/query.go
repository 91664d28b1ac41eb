package search

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// A group is one query term with its alternatives: the term itself,
// synonyms, prefix extensions or typo corrections. A document scores the
// best of a group's alternatives, never their sum, so that expansion can
// only find documents, not inflate those that already match.
type group struct {
	alts []alt
	word string // the query term the group stands for; "" for a compound of several words
}

// An alt is one alternative of a group: a term, or a phrase of terms that
// a document must all have (from a synonym such as "pr" → "pull request"),
// weighted by w.
type alt struct {
	term   string
	phrase []string // when set, term is unused
	w      float64
}

// scratch is per-Search working memory, pooled: dense per-slot arrays are
// faster than maps at every corpus size this index is meant for.
type scratch struct {
	best, total []float64
	cover       []float64 // the idf of the query terms the doc answers
	count       []uint8
	named       []bool // the doc's server prefix is a word of the query
	gt, touched []int32
}

// Search returns the k best documents for query, best first; k <= 0 means
// 5. Equal scores are ordered by ID, so results are deterministic. A query
// with no indexable words, or none that the index knows, returns nil.
//
// Each query term also matches its synonyms (synonyms.go); a term the
// index does not know matches the words it begins (three letters or more,
// or two for the last word of a query that does not end in a space, for
// type-ahead) and failing that the words one typo away. Adjacent query
// words also match as a compound ("pull request" → "pull_request").
// Queries are cut at 1 KiB, and only the 16 most informative terms count.
func (ix *Index) Search(query string, k int) []Hit {
	if k <= 0 {
		k = defaultK
	}
	if len(query) > maxQueryBytes {
		query = query[:maxQueryBytes]
	}
	toks := analyze(nil, selfPhrases(query))
	if f := strings.Fields(query); len(toks) > 1 && toks[0].plain && strings.ToLower(f[0]) == toks[0].raw {
		// A request that leads with a verb (leadVerbs) asks for its action.
		if v, ok := leadVerbs[toks[0].raw]; ok {
			toks[0] = token{raw: v, term: stem(v), plain: true}
		}
	}
	// A model-facing name in the query ("github__create_issue") also
	// yields the compound of its tool part, as Index does for documents
	// (splitName), so that asking for a tool by name finds it first.
	version := false
	for _, w := range strings.Fields(query) {
		// "v1.2.0", "2.15.3": in a request, a version number asks about
		// a version (a tag, a release).
		if !version && versionLike(strings.TrimRight(w, ",;:!?)")) {
			version = true
			toks = append(toks, token{raw: "version", term: stem("version"), plain: true})
		}
		if _, tool := splitName(w); tool != w {
			for _, t := range analyze(nil, tool) {
				if t.joined {
					toks = append(toks, t)
				}
			}
		}
	}
	// "#general", "#incidents": in a request, a word after '#' is a
	// chat channel.
	for _, w := range strings.Fields(query) {
		if len(w) > 1 && w[0] == '#' && classify(rune(w[1])) >= lower {
			toks = append(toks, token{raw: "channel", term: stem("channel"), plain: true})
			break
		}
	}
	if len(toks) == 0 {
		return nil
	}
	toks = toks[:min(len(toks), maxQueryTokens)]
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.live == 0 {
		return nil
	}
	d := ix.derive()
	groups := ix.expand(query, toks, d) // none: only trigrams can answer

	sc, _ := ix.pool.Get().(*scratch)
	if sc == nil || len(sc.best) < len(ix.slots) {
		n := len(ix.slots) + len(ix.slots)/4
		sc = &scratch{best: make([]float64, n), total: make([]float64, n), cover: make([]float64, n), count: make([]uint8, n), named: make([]bool, n)}
	}

	n := float64(ix.live)
	idf := func(ps []posting) float64 {
		df := float64(len(ps))
		return math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	// score is a term's BM25F score in the document of posting p, given the
	// term's weighted idf c.
	score := func(p posting, c float64) float64 {
		norm := (*[nFields]float32)(d.norm[int(p.doc)*nFields:])
		var tf float32
		for f, x := range p.tf { // branch-free: most fields are 0
			tf += float32(x) * norm[f]
		}
		return c * float64(tf) / (k1 + float64(tf))
	}
	offer := func(doc int32, v float64) {
		if v > sc.best[doc] {
			if sc.best[doc] == 0 {
				sc.gt = append(sc.gt, doc)
			}
			sc.best[doc] = v
		}
	}
	named := false  // some query word is a server's prefix
	queryIDF := 0.0 // the idf of all groups, for Hit.Coverage
	for _, g := range groups {
		// The alternatives of a group share the idf of the most common
		// one, as if they were one term (Lucene's SynonymQuery does the
		// same): otherwise a rare synonym, prefix completion or typo
		// correction would outscore the word that was asked for.
		var common []posting
		for _, a := range g.alts {
			if ps := ix.post[a.term]; a.phrase == nil && len(ps) > len(common) {
				common = ps
			}
		}
		gidf := idf(common)
		cidf := gidf // the group's idf, for coverage
		if common == nil {
			// Phrases only: the rarest first term of one.
			cidf = 0
			for _, a := range g.alts {
				if a.phrase != nil {
					cidf = max(cidf, idf(ix.post[a.phrase[0]]))
				}
			}
		}
		queryIDF += cidf
		for _, a := range g.alts {
			if a.phrase == nil {
				ps := ix.post[a.term]
				c := a.w * gidf
				for _, p := range ps {
					offer(p.doc, score(p, c))
					if a.w == 1 && p.tf[fServer] > 0 {
						sc.named[p.doc], named = true, true
					}
				}
				continue
			}
			// A phrase scores the sum of its terms, in documents that
			// have them all: walk the first term's postings and find the
			// others by binary search.
			lists := make([][]posting, len(a.phrase))
			cs := make([]float64, len(a.phrase))
			for i, t := range a.phrase {
				lists[i] = ix.post[t]
				cs[i] = a.w * idf(lists[i])
			}
		docs:
			for _, p := range lists[0] {
				v := score(p, cs[0])
				for i, ps := range lists[1:] {
					j := sort.Search(len(ps), func(j int) bool { return ps[j].doc >= p.doc })
					if j == len(ps) || ps[j].doc != p.doc {
						continue docs
					}
					v += score(ps[j], cs[i+1])
				}
				offer(p.doc, v)
			}
		}
		for _, doc := range sc.gt {
			if sc.total[doc] == 0 {
				sc.touched = append(sc.touched, doc)
			}
			sc.total[doc] += sc.best[doc]
			sc.cover[doc] += cidf
			sc.count[doc]++
			sc.best[doc] = 0
		}
		sc.gt = sc.gt[:0]
	}

	// A word of the request that no tool has, nor anything like it,
	// counts against every tool's coverage as the rarest word would:
	// "order a pizza" is not answered by a tool that orders.
	for i, t := range toks {
		if t.joined || len(ix.post[t.term]) > 0 || slices.ContainsFunc(toks[:i], func(u token) bool { return u.term == t.term }) ||
			slices.ContainsFunc(groups, func(g group) bool { return g.word == t.term }) {
			continue
		}
		queryIDF += idf(nil)
	}

	// Coordination (as in classic Lucene): a document that answers more of
	// the query's terms ranks higher than its sum alone would put it. The
	// square root keeps it a tie-breaker rather than a filter.
	//
	// A query that is a tool's name ("notion__notion-get-users") ranks that
	// tool first, ahead of neighbours that stem alike ("...-get-user"): its
	// score is raised by the best score of all.
	//
	// A request that names a server ("in Notion", "on GitLab") wants that
	// server's tools: they are raised above others on the same topic.
	//
	// The action of the request counts on its own against the topic: a
	// tool whose name does what the request asks ranks above one on the
	// same topic that does something else ("comment on the PR" is not
	// "update the PR"). Tools whose names name no action are left as they
	// are.
	exact := ix.named(query)
	act, acts := queryAction(toks)
	if f := strings.Fields(query); act.empty() && len(f) > 0 && questionWords[strings.ToLower(f[0])] {
		// A question that names no action asks to read: "which alerts
		// are firing", "who is on call".
		act, acts = readActions, readActions
	}
	// A request about several things ("the open issues", "people in the
	// workspace") prefers the tool whose name is plural, one about one
	// thing the singular: list_issues against get_issue.
	many := false
	for _, t := range toks {
		if !t.joined && actionBits[t.term].empty() && plural(t.raw) {
			many = true
		}
	}
	top := topK{k: k, id: func(doc int32) string { return ix.slots[doc].id }}
	best := 0.0
	for _, doc := range sc.touched {
		s := sc.total[doc] * math.Sqrt(float64(sc.count[doc])/float64(len(groups)))
		if named && sc.named[doc] {
			s *= 1 + serverBoost
		}
		if ix.slots[doc].many == many {
			s *= 1 + numberBonus
		}
		if da := ix.slots[doc].act; !act.empty() && !da.empty() {
			switch {
			case da.meets(act):
				s *= 1 + actionBonus
			case !da.meets(acts):
				s *= 1 - actionPenalty
			}
		}
		sc.total[doc], sc.count[doc] = s, 0
		best = max(best, s)
		if !slices.Contains(exact, doc) {
			top.offer(doc, s)
		}
	}
	if len(sc.touched) < k {
		// Too few tools answer the query's words: the rest of the k are
		// ranked by what evidence there is, the character trigrams that
		// the query's words share with the index's (ngram.go), below
		// every tool that answers a word.
		ix.fill(&top, sc, d, toks, best)
	}
	for _, doc := range exact {
		top.offer(doc, best+1+sc.total[doc])
	}
	hits := top.sorted()
	for i := range hits {
		doc := ix.byID[hits[i].ID]
		switch {
		case slices.Contains(exact, doc):
			hits[i].Coverage = 1
		case queryIDF > 0:
			hits[i].Coverage = min(1, sc.cover[doc]/queryIDF)
		}
	}
	for _, doc := range sc.touched {
		sc.total[doc], sc.cover[doc], sc.named[doc] = 0, 0, false
	}
	sc.touched = sc.touched[:0]
	ix.pool.Put(sc) // clean again: best, total, cover and count are all zero
	return hits
}

// named returns the tools a request names exactly: the whole request is
// a tool's model-facing name or its tool part, or one of its words
// (quotes, backticks and punctuation around it aside) is a model-facing
// name, or an identifier (with '_', '-' or '.' inside, or a camel-case
// hump) that is a tool part. A plain word ("search") names no tool: it is
// a word of the request. mu must be held.
func (ix *Index) named(query string) []int32 {
	var out []int32
	add := func(key string) {
		for _, s := range ix.byName[key] {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	add(strings.ToLower(strings.TrimSpace(query)))
	for w := range strings.FieldsSeq(query) {
		w = strings.Trim(w, "`'\"()[]{}<>,;:!?.")
		if w == "" {
			continue
		}
		if _, tool := splitName(w); tool != w || identifier(w) {
			add(strings.ToLower(w))
		}
	}
	return out
}

// identifier reports whether a word of a request is written as an
// identifier: '_', '-' or '.' between letters or digits, or a lower-case
// letter followed by an upper-case one.
func identifier(w string) bool {
	for i := 1; i+1 < len(w); i++ {
		if (w[i] == '_' || w[i] == '-' || w[i] == '.') && w[i-1] != w[i] && isAlnum(w[i-1]) && isAlnum(w[i+1]) {
			return true
		}
	}
	for i := 1; i < len(w); i++ {
		if w[i-1] >= 'a' && w[i-1] <= 'z' && w[i] >= 'A' && w[i] <= 'Z' {
			return true
		}
	}
	return false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// expand turns query tokens into scoring groups; mu must be held.
func (ix *Index) expand(query string, toks []token, d *derived) []group {
	var groups []group
	seen := map[string]bool{} // terms that have a group
	// used holds every term that is already an alternative somewhere, and
	// all of the query's own terms: a document term answers one query term
	// at most. Otherwise "what do 12 plus 30 make" would credit every
	// "add_*" tool twice, as a synonym of "plus" and of "make".
	used := map[string]bool{}
	for _, t := range toks {
		used[t.term] = true
	}
	has := func(t string) bool { _, ok := ix.post[t]; return ok }
	// The last word may still be being typed (a CLI prompt): it is
	// extended by prefix from two letters on, unless the query ends in a
	// space or punctuation.
	r, _ := utf8.DecodeLastRuneInString(query)
	typing := classify(r) >= lower
	last := -1
	for i, t := range toks {
		if !t.joined {
			last = i
		}
	}
	for i, t := range toks {
		if seen[t.term] || len(groups) == 2*maxGroups {
			continue
		}
		seen[t.term] = true
		var g group
		if has(t.term) {
			g.alts = append(g.alts, alt{term: t.term, w: 1})
		}
		if t.joined {
			// A compound is worth its exact match, and its synonyms when
			// it is an entry of the lexicon ("turn-by-turn", "sign-in");
			// its parts are groups of their own.
			g.alts = ix.appendSynonyms(g.alts, t.term, false, used)
			if len(g.alts) > 0 {
				groups = append(groups, g)
			}
			continue
		}
		if !stateAdjective(toks, i) {
			g.alts = ix.appendSynonyms(g.alts, t.term, true, used)
		}
		if !has(t.term) && !inCompound(toks, i) {
			// A word the index does not know: perhaps an abbreviation
			// ("repo", "env") or a typo; not when it is half of a
			// compound that the lexicon knows ("tear down").
			//
			// A last word that the stemmer shortened ("firing" → "fire")
			// is a finished word, not one being typed.
			typed := i == last && typing && len(t.term) >= len(t.raw)
			minLen := minPrefix
			if typed {
				minLen = 2
			}
			if p := commonPrefix(t.raw, t.term); len(p) >= minLen {
				for _, v := range prefixed(d.vocab, p, maxPrefix) {
					// A finished word stands for a longer one only when it
					// is more than half of it ("config", "postgres"), not
					// for any word it happens to begin ("sea", "search"),
					// and one that it begins itself: "firing" (stem "fire")
					// is not "first".
					if typed || 2*len(p) > len(v) && (strings.HasPrefix(v, t.term) || strings.HasPrefix(v, t.raw)) {
						g.alts = append(g.alts, alt{term: v, w: prefixWeight})
					}
				}
			}
			if len(g.alts) == 0 && len(t.term) >= minTypo {
				for _, v := range d.vocab {
					if oneEdit(t.term, v) {
						g.alts = append(g.alts, alt{term: v, w: typoWeight})
					}
				}
			}
		}
		if len(g.alts) > 0 {
			g.word = t.term
			groups = append(groups, g)
		}
	}
	// Compounds written as separate words: "file system", "pull request",
	// "read text file" match "filesystem", "pull_request", "read_text_file".
	// Runs of up to three plain words, stop words skipped as in documents.
	for i := range toks {
		raw := ""
		for j := i; j < len(toks) && j < i+3; j++ {
			t := toks[j]
			if !t.plain || t.joined {
				break
			}
			raw += t.raw
			if j == i || len(groups) == 2*maxGroups {
				continue
			}
			c := stem(raw)
			if seen[c] {
				continue
			}
			seen[c] = true
			var g group
			if has(c) {
				g.alts = append(g.alts, alt{term: c, w: 1})
			}
			// Not phrase synonyms: the compound's words are groups
			// already, and "pull request" must not count twice.
			g.alts = ix.appendSynonyms(g.alts, c, false, used)
			if len(g.alts) > 0 {
				groups = append(groups, g)
			}
		}
	}
	return ix.informative(groups)
}

// informative returns the maxGroups groups of a long query that say most,
// those whose commonest alternative is rarest, in query order. It bounds
// the work of a Search whatever the query, and drops what matters least:
// in a request of forty words, "get" and "list" add little to "invoice".
func (ix *Index) informative(groups []group) []group {
	if len(groups) <= maxGroups {
		return groups
	}
	df := make([]int, len(groups))
	for i, g := range groups {
		for _, a := range g.alts {
			if a.phrase == nil {
				df[i] = max(df[i], len(ix.post[a.term]))
			}
		}
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return df[order[a]] < df[order[b]] })
	order = order[:maxGroups]
	sort.Ints(order)
	kept := make([]group, 0, maxGroups)
	for _, i := range order {
		kept = append(kept, groups[i])
	}
	return kept
}

// appendSynonyms appends the synonyms of term that occur in the index and
// are not in used, and adds them to used; mu must be held.
func (ix *Index) appendSynonyms(alts []alt, term string, phrases bool, used map[string]bool) []alt {
	for _, s := range synonyms[term] {
		key := strings.Join(s, " ")
		ok := (len(s) == 1 || phrases) && !used[key]
		used[key] = true
		for _, t := range s {
			_, in := ix.post[t]
			ok = ok && in
		}
		switch {
		case !ok:
		case len(s) == 1:
			alts = append(alts, alt{term: s[0], w: synonymWeight})
		default:
			alts = append(alts, alt{phrase: s, w: synonymWeight})
		}
	}
	return alts
}

// commonPrefix returns the longest common prefix of a and b.
func commonPrefix(a, b string) string {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return a[:i]
		}
	}
	return a[:n]
}

// prefixed returns up to max terms of sorted vocab that begin with p.
func prefixed(vocab []string, p string, max int) []string {
	i := sort.SearchStrings(vocab, p)
	j := i
	for j < len(vocab) && j-i < max && strings.HasPrefix(vocab[j], p) {
		j++
	}
	return vocab[i:j]
}

// oneEdit reports whether a and b differ by exactly one insertion,
// deletion, substitution or transposition of adjacent bytes.
func oneEdit(a, b string) bool {
	if a == b {
		return false
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if len(a) == len(b) {
		if a[i+1:] == b[i+1:] {
			return true // substitution
		}
		return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
	}
	return a[i:] == b[i+1:] // insertion
}

// topK keeps the k best hits seen, as a min-heap on (score, reversed ID).
// A document's ID is looked up only when it enters the heap or ties.
type topK struct {
	k  int
	id func(doc int32) string
	h  []Hit
}

// worse reports whether a ranks below b.
func worse(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.ID > b.ID
}

func (t *topK) offer(doc int32, score float64) {
	if len(t.h) < t.k {
		t.h = append(t.h, Hit{ID: t.id(doc), Score: score})
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(t.h[i], t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if score < t.h[0].Score {
		return
	}
	x := Hit{ID: t.id(doc), Score: score}
	if !worse(t.h[0], x) {
		return
	}
	t.h[0] = x
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.h) && worse(t.h[l], t.h[m]) {
			m = l
		}
		if r < len(t.h) && worse(t.h[r], t.h[m]) {
			m = r
		}
		if m == i {
			break
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

func (t *topK) sorted() []Hit {
	sort.Slice(t.h, func(i, j int) bool { return worse(t.h[j], t.h[i]) })
	return t.h
}

// versionLike reports whether w is a version number: digits in two to four
// dot-separated parts, after an optional "v" ("v1.2.0", "2.15").
func versionLike(w string) bool {
	if len(w) > 0 && (w[0] == 'v' || w[0] == 'V') {
		w = w[1:]
	}
	parts, digits := 1, 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case '0' <= c && c <= '9':
			digits++
		case c == '.' && digits > 0:
			parts, digits = parts+1, 0
		default:
			return false
		}
	}
	return digits > 0 && parts >= 2 && parts <= 4
}

// inCompound reports whether toks[i] and a word next to it make a compound
// that the lexicon knows ("tear down", "look up", "turn by turn").
func inCompound(toks []token, i int) bool {
	for j := max(i-1, 0); j <= i && j+1 < len(toks); j++ {
		if toks[j].plain && toks[j+1].plain && !toks[j].joined && !toks[j+1].joined {
			if _, ok := synonyms[stem(toks[j].raw+toks[j+1].raw)]; ok {
				return true
			}
		}
	}
	return false
}
