package search

import (
	"math"
	"sort"
)

// Character trigrams are the evidence of last resort. When fewer than k
// tools answer a query's words, fill ranks the others by how much each
// query word looks like the words of their fields: words are compared as
// sets of trigrams of the word padded with a boundary mark ("^ge", "get",
// "et$"), by their Dice coefficient, and a word of the index that shares
// at least minDice with a query word counts for it, in proportion. This is
// what lets "colocation" find "location" beyond the stemmer's and the
// prefix match's reach, and what gives a request of few known words k
// candidates. A tool that shares nothing with the query, neither a word
// nor a word's likeness, is never returned: a removed or rewritten
// description must stop finding its tool.

const (
	minDice      = 0.5 // the least trigram likeness that counts
	minGramWord  = 3   // shorter query words have too few trigrams to compare
	maxGramTerms = 64  // index words counted per query word, the likest
)

// trigrams appends the padded trigrams of w to dst.
func trigrams(dst []string, w string) []string {
	p := "^" + w + "$"
	for i := 0; i+3 <= len(p); i++ {
		dst = append(dst, p[i:i+3])
	}
	return dst
}

// gramIndex returns the trigram index of d's vocabulary, building it once.
func (d *derived) gramIndex() map[string][]int32 {
	d.gramsOnce.Do(func() {
		g := map[string][]int32{}
		var buf []string
		for i, t := range d.vocab {
			buf = trigrams(buf[:0], t)
			for j, x := range buf {
				if !containsBefore(buf, j, x) {
					g[x] = append(g[x], int32(i))
				}
			}
		}
		d.grams = g
	})
	return d.grams
}

func containsBefore(s []string, j int, x string) bool {
	for _, y := range s[:j] {
		if y == x {
			return true
		}
	}
	return false
}

// fill offers to top the documents that the query's words did not reach,
// scored by trigram likeness and scaled below floor (the best lexical
// score, or any positive number when there was none) so that they rank
// after every lexical hit. mu must be held for reading; sc.touched holds
// the lexical hits, whose totals are already final.
func (ix *Index) fill(top *topK, sc *scratch, d *derived, toks []token, floor float64) {
	grams := d.gramIndex()
	lexical := map[int32]bool{}
	for _, doc := range sc.touched {
		lexical[doc] = true
	}
	// Lexical hits rank by their own scores; the least of them bounds
	// the fill from above.
	lo := floor
	for _, doc := range sc.touched {
		if s := sc.total[doc]; s > 0 && s < lo {
			lo = s
		}
	}
	n := float64(ix.live)
	extra := map[int32]float64{}
	seen := map[string]bool{}
	var qg []string
	for _, t := range toks {
		if t.joined || len(t.term) < minGramWord || seen[t.term] {
			continue
		}
		seen[t.term] = true
		qg = trigrams(qg[:0], t.term)
		shared := map[int32]int{}
		for j, x := range qg {
			if containsBefore(qg, j, x) {
				continue
			}
			for _, v := range grams[x] {
				shared[v]++
			}
		}
		type cand struct {
			v    int32
			dice float64
		}
		var cs []cand
		for v, c := range shared {
			dice := 2 * float64(c) / float64(len(qg)+len(d.vocab[v]))
			if dice >= minDice {
				cs = append(cs, cand{v, dice})
			}
		}
		sort.Slice(cs, func(a, b int) bool {
			if cs[a].dice != cs[b].dice {
				return cs[a].dice > cs[b].dice
			}
			return cs[a].v < cs[b].v
		})
		best := map[int32]float64{}
		for _, c := range cs[:min(len(cs), maxGramTerms)] {
			ps := ix.post[d.vocab[c.v]]
			df := float64(len(ps))
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			for _, p := range ps {
				if lexical[p.doc] {
					continue
				}
				norm := (*[nFields]float32)(d.norm[int(p.doc)*nFields:])
				var tf float32
				for f, x := range p.tf {
					tf += float32(x) * norm[f]
				}
				v := c.dice * idf * float64(tf) / (k1 + float64(tf))
				best[p.doc] = max(best[p.doc], v)
			}
		}
		for doc, v := range best {
			extra[doc] += v
		}
	}
	if len(lexical) == 0 && len(extra) == 0 {
		return // nothing in the query is like anything in the index
	}
	hi := 0.0
	for _, v := range extra {
		hi = max(hi, v)
	}
	if lo <= 0 {
		lo = 1
	}
	for doc, v := range extra {
		top.offer(doc, lo*(0.5+0.25*v/hi))
	}
}
