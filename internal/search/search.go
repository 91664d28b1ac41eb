// Package search is an offline index over tool definitions that ranks
// them for a natural-language request, for tool_search and deferred
// tools. It does no I/O and needs no network: ranking is BM25F over
// the tool's server prefix, name, title, description (and its first
// sentence again, on its own) and parameters, with
// analysis built for identifiers (snake_case, camelCase, kebab-case,
// dotted, digits), a light English stemmer, stop words, a lexicon of the
// tool-use world's verbs, nouns and abbreviations (synonyms.go), prefix
// and one-typo matching for words the index does not know, and character
// trigrams as the evidence of last resort (ngram.go). The action a
// request asks for (against the actions of a tool's name and its
// description's leading verb), a server it names and the number of its
// object weigh on their own against the words it shares with a tool
// (query.go). A tool named in a request ranks first, and each hit says
// how much of the request it answers (Hit.Coverage).
package search

import (
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Doc is one tool as the index sees it.
type Doc struct {
	ID          string  // opaque; the host passes the model-facing tool name. Docs with an empty ID are ignored.
	Name        string  // model-facing tool name, e.g. "github__create_issue"; the part before the first "__" is the server prefix
	Title       string  // optional human title
	Description string  // tool description
	Params      []Param // from the input schema's top-level properties; see ParamsFromSchema
}

// Param is one top-level property of a tool's input schema.
type Param struct{ Name, Description string }

// Hit is one search result.
type Hit struct {
	ID    string
	Score float64 // BM25F score: higher is better; comparable only within one Search
	// Coverage is the share of the request's informative words (by
	// their idf) that the tool answers, from 0 (only trigrams, or
	// nothing) to 1 (all of them, or the request names the tool).
	Coverage float64
}

// The fields of a document. BM25F (Robertson, Zaragoza and Taylor, 2004)
// scores a term once per document, from its frequencies in all fields
// weighted and length-normalised field by field.
const (
	fServer    = iota // the model-facing name's prefix before "__": the server
	fName             // the rest of the model-facing name
	fTitle            // Doc.Title
	fDesc             // Doc.Description
	fLead             // the description's first sentence, again (lead)
	fParamName        // Param.Name, all params in one field
	fParamDesc        // Param.Description, likewise
	nFields
)

// weight is w_f, what a match in field f is worth: the name says what a
// tool is, the description's first sentence says it in more words, the
// rest of the description adds how to call it, caveats and examples (more
// noise: a term there counts half, and a long description is discounted
// in full), and parameter descriptions are mostly about values. lenNorm is
// b_f, how much a long field is discounted; 0 for the server prefix, which
// every tool of a server shares. A sweep over the dev set's tuning part
// (never the held-out parts) found recall@5 flat within ±0.02 over name
// 2–5, description 0.5–1, lead 0–2, b_desc 0.5–1, k1 0.9–2 and the
// synonym weight 0.5–0.9; the values are inside those plateaus, not at a
// peak of the set.
var (
	weight  = [nFields]float64{fServer: 1.5, fName: 3, fTitle: 2, fDesc: 0.5, fLead: 1, fParamName: 0.7, fParamDesc: 0.35}
	lenNorm = [nFields]float64{fServer: 0, fName: 0.5, fTitle: 0.5, fDesc: 1, fLead: 0.5, fParamName: 0.5, fParamDesc: 0.75}
)

const (
	k1 = 1.2 // BM25 term-frequency saturation

	defaultK = 5

	// maxFieldTokens bounds what one field of one document contributes, so
	// that a pathological description costs bounded memory.
	maxFieldTokens = 1024

	// Query expansion. Each query term is a group of alternatives scored
	// as the best of them, so that expansion never counts twice.
	prefixWeight = 0.7 // a vocabulary term that extends the query word ("repo" → "repositori")
	typoWeight   = 0.6 // a vocabulary term one edit away, for words the index does not know

	// The action of a request against the actions a tool's name and its
	// description's lead say it does.
	actionBonus   = 0.25 // a tool that does what the request asks
	actionPenalty = 0.25 // a tool that does something else
	serverBoost   = 0.5  // a tool of a server that the request names
	numberBonus   = 0.1  // a tool whose name's last noun agrees in number with the request's
	maxPrefix     = 32   // prefix expansions per query term
	minPrefix     = 3    // shortest query word expanded by prefix, except the last one
	minTypo       = 4    // shortest query word corrected for typos
	maxQueryBytes = 1024 // longer queries are cut
	maxGroups     = 16   // query terms scored, the most informative (informative)
)

// Index is a searchable set of tools. It is safe for concurrent use: any
// number of Search calls run in parallel, and Upsert and Remove exclude them
// while they change the index.
type Index struct {
	pool sync.Pool // *scratch, per-Search working memory

	mu     sync.RWMutex            // guards what follows; readers: Search, Len; writers: Upsert, Remove
	byID   map[string]int32        // ID → slot
	byName map[string][]int32      // lower-cased Name, and its tool part (after the server prefix) → slots, for tools named in a request
	slots  []slot                  // slot numbers are reused after Remove
	free   []int32                 // free slots, reused last-in first-out
	post   map[string][]posting    // term → postings sorted by slot
	words  map[string]int32        // term → docs where it is a word (posting.plain)
	sumLen [nFields]float64        // total field lengths of live docs
	live   int                     // number of live docs
	gen    uint64                  // bumped by every change
	cache  atomic.Pointer[derived] // derived from the above for one gen; written under mu.RLock and dmu
	dmu    sync.Mutex              // serialises rebuilding cache
}

type slot struct {
	id    string
	name  string // lower-cased Name
	live  bool
	lens  [nFields]uint16
	terms []string // distinct terms of the doc, to remove its postings
	act   actions  // the actions its name and its description's lead say it does (actionsOf, leadActions)
	many  bool     // its name ends in a plural ("list_issues", "get-users")
}

type posting struct {
	doc   int32
	tf    [nFields]uint8 // saturating term frequency per field
	plain bool           // the term occurs in the doc as a word, not only as a compound
}

// derived holds what depends on corpus statistics and is rebuilt lazily,
// by the first Search after a change, instead of on every Upsert: so a
// host that upserts tools one at a time still pays O(corpus) once.
type derived struct {
	gen   uint64
	norm  []float32 // norm[slot*nFields+f] = weight[f] / BM25 length normalisation
	vocab []string  // sorted terms that are words somewhere, for prefix and typo expansion

	gramsOnce sync.Once
	grams     map[string][]int32 // character trigram → indexes in vocab; built by the first fill (ngram.go)
}

// New returns an empty index.
func New() *Index {
	return &Index{byID: map[string]int32{}, byName: map[string][]int32{}, post: map[string][]posting{}, words: map[string]int32{}}
}

// Len returns the number of documents in the index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.live
}

// Upsert adds docs, replacing any document with the same ID. Within one
// call the last doc with an ID wins; docs with an empty ID are ignored.
// Analysis runs before the lock is taken, so searches wait only for the
// posting-list updates. The cost is in proportion to the docs given, plus
// one refresh of corpus statistics (O(corpus), about a millisecond at
// 10,000 tools) by the next Search, however many calls came before it.
func (ix *Index) Upsert(docs ...Doc) {
	type prepared struct {
		id    string
		name  string // lower-cased Name
		lens  [nFields]uint16
		terms []string
		act   actions
		many  bool
		posts []posting
	}
	prep := make([]prepared, 0, len(docs))
	for _, d := range docs {
		if d.ID == "" {
			continue
		}
		p := prepared{id: d.ID, name: strings.ToLower(d.Name)}
		p.lens, p.terms, p.posts = index(d)
		_, tool := splitName(d.Name)
		nt := analyze(nil, tool)
		p.act = actionsOf(nt).or(leadActions(d.Description))
		p.many = lastPlural(nt)
		prep = append(prep, p)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, p := range prep {
		s, ok := ix.byID[p.id]
		if ok {
			ix.unlink(s)
		} else if n := len(ix.free); n > 0 {
			s, ix.free = ix.free[n-1], ix.free[:n-1]
		} else {
			s = int32(len(ix.slots))
			ix.slots = append(ix.slots, slot{})
		}
		ix.byID[p.id] = s
		ix.slots[s] = slot{id: p.id, name: p.name, live: true, lens: p.lens, terms: p.terms, act: p.act, many: p.many}
		for _, n := range nameKeys(p.name) {
			ix.byName[n] = append(ix.byName[n], s)
		}
		for f, n := range p.lens {
			ix.sumLen[f] += float64(n)
		}
		ix.live++
		for i, t := range p.terms {
			po := p.posts[i]
			po.doc = s
			ix.post[t] = insertPosting(ix.post[t], po)
			if po.plain {
				ix.words[t]++
			}
		}
	}
	if len(prep) > 0 {
		ix.gen++
	}
}

// Remove deletes the documents with the given IDs; unknown IDs are
// ignored. Once it returns, no Search returns them.
func (ix *Index) Remove(ids ...string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	changed := false
	for _, id := range ids {
		s, ok := ix.byID[id]
		if !ok {
			continue
		}
		ix.unlink(s)
		delete(ix.byID, id)
		ix.slots[s] = slot{}
		ix.free = append(ix.free, s)
		changed = true
	}
	if changed {
		ix.gen++
	}
}

// unlink removes slot s's postings and statistics; mu must be held.
func (ix *Index) unlink(s int32) {
	sl := &ix.slots[s]
	for _, t := range sl.terms {
		ps := ix.post[t]
		i := sort.Search(len(ps), func(i int) bool { return ps[i].doc >= s })
		if i < len(ps) && ps[i].doc == s {
			if ps[i].plain {
				if ix.words[t]--; ix.words[t] == 0 {
					delete(ix.words, t)
				}
			}
			ps = append(ps[:i], ps[i+1:]...)
		}
		if len(ps) == 0 {
			delete(ix.post, t)
		} else {
			ix.post[t] = ps
		}
	}
	for f, n := range sl.lens {
		ix.sumLen[f] -= float64(n)
	}
	for _, n := range nameKeys(sl.name) {
		if same := slices.DeleteFunc(ix.byName[n], func(x int32) bool { return x == s }); len(same) > 0 {
			ix.byName[n] = same
		} else {
			delete(ix.byName, n)
		}
	}
	ix.live--
	sl.live = false
}

func insertPosting(ps []posting, p posting) []posting {
	i := sort.Search(len(ps), func(i int) bool { return ps[i].doc >= p.doc })
	ps = append(ps, posting{})
	copy(ps[i+1:], ps[i:])
	ps[i] = p
	return ps
}

// index analyses d into field lengths and its distinct terms, each with a
// posting (doc unset) of field frequencies.
func index(d Doc) (lens [nFields]uint16, terms []string, posts []posting) {
	at := map[string]int{}
	var toks []token
	add := func(f int, text string) {
		toks = analyze(toks[:0], text)
		for _, t := range toks {
			if lens[f] >= maxFieldTokens {
				return
			}
			lens[f]++
			i, ok := at[t.term]
			if !ok {
				i = len(terms)
				at[t.term] = i
				terms = append(terms, t.term)
				posts = append(posts, posting{})
			}
			if posts[i].tf[f] < math.MaxUint8 {
				posts[i].tf[f]++
			}
			posts[i].plain = posts[i].plain || !t.joined
		}
	}
	server, name := splitName(d.Name)
	add(fServer, server)
	add(fName, name)
	add(fTitle, d.Title)
	add(fDesc, d.Description)
	add(fLead, lead(d.Description))
	for _, p := range d.Params {
		add(fParamName, p.Name)
		add(fParamDesc, p.Description)
	}
	return lens, terms, posts
}

// lead returns the first sentence of a description: what the tool does,
// before how to call it, its caveats and its examples. The sentence ends at
// a full stop before a space or the end, or at a line break.
func lead(desc string) string {
	for i := 0; i < len(desc); i++ {
		switch desc[i] {
		case '\n':
			if i > 0 {
				return desc[:i]
			}
		case '.':
			if i+1 == len(desc) || desc[i+1] == ' ' || desc[i+1] == '\n' {
				return desc[:i]
			}
		}
	}
	return desc
}

// nameKeys are the keys of a lower-cased model-facing name in byName:
// the name, and its tool part when it has a server prefix.
func nameKeys(name string) []string {
	if _, tool := splitName(name); tool != name {
		return []string{name, tool}
	}
	return []string{name}
}

// splitName splits a model-facing name at its first "__" into the server
// prefix and the tool name (internal/names.Sep). A name without one is
// all tool name.
func splitName(name string) (server, tool string) {
	if i := strings.Index(name, "__"); i > 0 {
		return name[:i], name[i+2:]
	}
	return "", name
}

// derive returns the derived values for the current generation, building
// them if needed. mu must be held for reading.
func (ix *Index) derive() *derived {
	if d := ix.cache.Load(); d != nil && d.gen == ix.gen {
		return d
	}
	ix.dmu.Lock()
	defer ix.dmu.Unlock()
	if d := ix.cache.Load(); d != nil && d.gen == ix.gen {
		return d
	}
	d := &derived{gen: ix.gen, norm: make([]float32, len(ix.slots)*nFields)}
	var avg [nFields]float64
	for f := range avg {
		if ix.live > 0 {
			avg[f] = ix.sumLen[f] / float64(ix.live)
		}
	}
	for s := range ix.slots {
		if !ix.slots[s].live {
			continue
		}
		for f := 0; f < nFields; f++ {
			if ix.slots[s].lens[f] == 0 {
				// An empty field matches nothing; its norm would be
				// infinite where lenNorm is 1 (an empty description), and
				// 0 × ∞ is NaN in the scoring loop's sum.
				continue
			}
			b := 1.0
			if avg[f] > 0 {
				b = 1 - lenNorm[f] + lenNorm[f]*float64(ix.slots[s].lens[f])/avg[f]
			}
			d.norm[s*nFields+f] = float32(weight[f] / b)
		}
	}
	// Compounds are left out: "cre" should reach "create", not every
	// "create_*" identifier, whose rarity would outscore it.
	d.vocab = make([]string, 0, len(ix.words))
	for t := range ix.words {
		d.vocab = append(d.vocab, t)
	}
	sort.Strings(d.vocab)
	ix.cache.Store(d)
	return d
}
