package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// Rankings compared side by side in one run, on the same index and
// requests: a plain BM25 over name and description (the floor any tool
// search should beat) and this package's ranking. Each part reports
// recall@1, recall@5 and nDCG@10 (binary relevance: any of a request's IDs
// is right), and the two-sided p-values of a paired test of the ranking
// against the floor: an exact sign test (McNemar) on recall@1 and
// recall@5, and a paired randomisation test (sign flips, 20,000 draws,
// fixed seed) on nDCG@10. A candidate change is measured the same way,
// as a third system beside these two (see the devset README for which
// parts it may be tuned on).
//
//	go test -run TestCompareRankings -v ./internal/search/
//
// DEVSET_PARTS limits the parts as for TestDevSet.

// ranker returns a ranked list of IDs for a request.
type ranker func(query string, k int) []string

// perQuery is one system's scores of each request of a part.
type perQuery struct {
	at1, at5 []bool
	ndcg     []float64
}

func scoreRanker(r ranker, qs []devQuery) perQuery {
	var p perQuery
	for _, q := range qs {
		ids := r(q.Query, 10)
		rel := map[string]bool{}
		for _, id := range q.Relevant {
			rel[id] = true
		}
		first := 0
		for i, id := range ids {
			if rel[id] {
				first = i + 1
				break
			}
		}
		p.at1 = append(p.at1, first == 1)
		p.at5 = append(p.at5, first >= 1 && first <= 5)
		// nDCG@10 with binary gains: the ideal ranking puts all relevant
		// IDs (up to 10) first.
		var dcg, ideal float64
		for i, id := range ids {
			if rel[id] {
				dcg += 1 / math.Log2(float64(i+2))
			}
		}
		for i := 0; i < min(len(rel), 10); i++ {
			ideal += 1 / math.Log2(float64(i+2))
		}
		p.ndcg = append(p.ndcg, dcg/ideal)
	}
	return p
}

func meanBool(b []bool) float64 {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return float64(n) / float64(len(b))
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// signTest is the exact two-sided McNemar test of paired binary outcomes:
// the requests where exactly one system is right, under the null that
// each is as likely to be the one.
func signTest(a, b []bool) float64 {
	var wins, losses int
	for i := range a {
		switch {
		case a[i] && !b[i]:
			wins++
		case b[i] && !a[i]:
			losses++
		}
	}
	n := wins + losses
	if n == 0 {
		return 1
	}
	k := min(wins, losses)
	// P(X <= k) for X ~ Binomial(n, 1/2), doubled.
	p := 0.0
	for i := 0; i <= k; i++ {
		p += math.Exp(lchoose(n, i) - float64(n)*math.Ln2)
	}
	return min(1, 2*p)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// randomisationTest is the two-sided paired randomisation test of the
// mean difference of x and y: each pair's difference flips sign at
// random, and the p-value is the share of draws at least as far from 0 as
// the observed mean.
func randomisationTest(x, y []float64) float64 {
	d := make([]float64, len(x))
	obs := 0.0
	for i := range x {
		d[i] = x[i] - y[i]
		obs += d[i]
	}
	obs = math.Abs(obs)
	const draws = 20000
	rng := rand.New(rand.NewPCG(1, 2))
	extreme := 0
	for range draws {
		s := 0.0
		for _, v := range d {
			if rng.IntN(2) == 0 {
				s += v
			} else {
				s -= v
			}
		}
		if math.Abs(s) >= obs-1e-12 {
			extreme++
		}
	}
	return float64(extreme+1) / float64(draws+1)
}

// bm25 is a plain BM25 (k1 1.2, b 0.75) over each tool's name and
// description: words split at non-alphanumerics and camel-case humps,
// lower-cased, nothing stemmed or dropped, no lexicon.
type bm25 struct {
	ids  []string
	tf   []map[string]int
	lens []float64
	df   map[string]int
	avg  float64
}

func plainWords(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]) {
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

func newBM25(docs []Doc) *bm25 {
	b := &bm25{df: map[string]int{}}
	for _, d := range docs {
		tf := map[string]int{}
		ws := plainWords(d.Name + " " + d.Description)
		for _, w := range ws {
			tf[w]++
		}
		for w := range tf {
			b.df[w]++
		}
		b.ids = append(b.ids, d.ID)
		b.tf = append(b.tf, tf)
		b.lens = append(b.lens, float64(len(ws)))
		b.avg += float64(len(ws))
	}
	b.avg /= float64(len(docs))
	return b
}

func (b *bm25) search(query string, k int) []string {
	n := float64(len(b.ids))
	type hit struct {
		i int
		s float64
	}
	var hits []hit
	// Each distinct word once, in a fixed order, so that equal scores
	// add up alike run after run.
	qs := plainWords(query)
	sort.Strings(qs)
	qs = slices.Compact(qs)
	for i, tf := range b.tf {
		s := 0.0
		for _, w := range qs {
			f := float64(tf[w])
			if f == 0 {
				continue
			}
			df := float64(b.df[w])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			s += idf * f * 2.2 / (f + 1.2*(0.25+0.75*b.lens[i]/b.avg))
		}
		if s > 0 {
			hits = append(hits, hit{i, s})
		}
	}
	sort.Slice(hits, func(x, y int) bool {
		if hits[x].s != hits[y].s {
			return hits[x].s > hits[y].s
		}
		return b.ids[hits[x].i] < b.ids[hits[y].i]
	})
	var out []string
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, b.ids[h.i])
	}
	return out
}

func TestCompareRankings(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("a report of figures: run with -v")
	}
	docs, _ := loadDevSet(t)
	ix := New()
	ix.Upsert(docs...)
	base := newBM25(docs)
	lexical := func(q string, k int) []string {
		var out []string
		for _, h := range ix.Search(q, k) {
			out = append(out, h.ID)
		}
		return out
	}
	systems := []struct {
		name string
		r    ranker
	}{
		{"bm25", base.search},
		{"ranking", lexical},
	}
	parts := []string{"tuning", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6"}
	if only := os.Getenv("DEVSET_PARTS"); only != "" {
		parts = strings.Split(only, ",")
	}
	// The parts whose requests have been seen are also reported as one.
	seen := map[string]bool{"tuning": true, "heldout": true, "heldout2": true, "heldout3": true}
	pooled := make([]perQuery, len(systems))
	report := func(part string, scores []perQuery) {
		for i, s := range systems {
			t.Logf("%-9s %-8s n=%d  R@1 %.3f  R@5 %.3f  nDCG@10 %.3f", part, s.name, len(scores[i].at1),
				meanBool(scores[i].at1), meanBool(scores[i].at5), mean(scores[i].ndcg))
		}
		nw := scores[len(scores)-1]
		for i, s := range systems[:len(systems)-1] {
			t.Logf("%-9s %s vs %-8s p(R@1) %.3f  p(R@5) %.3f  p(nDCG@10) %.3f", part, systems[len(systems)-1].name, s.name,
				signTest(nw.at1, scores[i].at1), signTest(nw.at5, scores[i].at5), randomisationTest(nw.ndcg, scores[i].ndcg))
		}
	}
	pooledParts := 0
	for _, part := range parts {
		qs := loadDevQueries(t, part)
		scores := make([]perQuery, len(systems))
		for i, s := range systems {
			scores[i] = scoreRanker(s.r, qs)
			if seen[part] {
				pooled[i].at1 = append(pooled[i].at1, scores[i].at1...)
				pooled[i].at5 = append(pooled[i].at5, scores[i].at5...)
				pooled[i].ndcg = append(pooled[i].ndcg, scores[i].ndcg...)
			}
		}
		if seen[part] {
			pooledParts++
		}
		report(part, scores)
	}
	if pooledParts > 1 {
		report("seen", pooled)
	}
}

// TestSignificance: the tests' arithmetic on cases worked by hand.
func TestSignificance(t *testing.T) {
	// 9 wins, 1 loss: 2 × P(X ≤ 1 | n=10) = 2 × 11/1024.
	a := []bool{true, true, true, true, true, true, true, true, true, false, true}
	b := []bool{false, false, false, false, false, false, false, false, false, true, true}
	if got, want := signTest(a, b), 22.0/1024; math.Abs(got-want) > 1e-9 {
		t.Errorf("signTest = %v, want %v", got, want)
	}
	if got := signTest(a, a); got != 1 {
		t.Errorf("signTest of equal systems = %v, want 1", got)
	}
	x := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	y := make([]float64, len(x))
	if p := randomisationTest(x, y); p > 0.001 {
		t.Errorf("randomisation p of twelve equal wins = %v, want about 2/4096", p)
	}
	if p := randomisationTest(x, x); p != 1 {
		t.Errorf("randomisation p of equal systems = %v, want 1", p)
	}
	if got := fmt.Sprint(plainWords("getFileInfo owner/repo_name")); got != "[get file info owner repo name]" {
		t.Errorf("plainWords = %s", got)
	}
}

// TestCoverageCalibration prints, for the seen parts of the dev set,
// how often the right tool is in the top 5 by the best hit's Coverage: a
// low coverage should mean a poor answer, so that an answer can say so.
//
//	go test -run TestCoverageCalibration -v ./internal/search/
func TestCoverageCalibration(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("a report of figures: run with -v")
	}
	docs, _ := loadDevSet(t)
	ix := New()
	ix.Upsert(docs...)
	parts := []string{"tuning", "heldout", "heldout2", "heldout3"}
	if only := os.Getenv("DEVSET_PARTS"); only != "" {
		parts = strings.Split(only, ",")
	}
	edges := []float64{0, 0.2, 0.35, 0.5, 0.65, 0.8, 1.01}
	n := make([]int, len(edges)-1)
	right := make([]int, len(edges)-1)
	for _, part := range parts {
		for _, q := range loadDevQueries(t, part) {
			hits := ix.Search(q.Query, 5)
			if len(hits) == 0 {
				continue
			}
			ok := false
			for _, h := range hits {
				for _, id := range q.Relevant {
					ok = ok || h.ID == id
				}
			}
			for b := range n {
				if hits[0].Coverage >= edges[b] && hits[0].Coverage < edges[b+1] {
					n[b]++
					if ok {
						right[b]++
					}
				}
			}
		}
	}
	for b := range n {
		if n[b] > 0 {
			t.Logf("best coverage [%.2f, %.2f): %3d requests, right tool in the top 5 for %.3f", edges[b], min(1, edges[b+1]), n[b], float64(right[b])/float64(n[b]))
		}
	}
}

// TestCoverageUnanswerable compares the best hit's Coverage of requests
// that have an answer (the full index) with the same requests once their
// server is gone (an index without it, requests no other server answers):
// what a threshold on coverage would flag of each.
//
//	go test -run TestCoverageUnanswerable -v ./internal/search/
func TestCoverageUnanswerable(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("a report of figures: run with -v")
	}
	docs, _ := loadDevSet(t)
	full := New()
	full.Upsert(docs...)
	parts := []string{"tuning", "heldout", "heldout2", "heldout3"}
	if only := os.Getenv("DEVSET_PARTS"); only != "" {
		parts = strings.Split(only, ",")
	}
	byServer := map[string][]devQuery{}
	for _, part := range parts {
		for _, q := range loadDevQueries(t, part) {
			byServer[q.Server] = append(byServer[q.Server], q)
		}
	}
	var answerable, unanswerable []float64
	for srv, qs := range byServer {
		without := New()
		for _, d := range docs {
			if !strings.HasPrefix(d.ID, srv+"__") {
				without.Upsert(d)
			}
		}
		for _, q := range qs {
			if h := full.Search(q.Query, 5); len(h) > 0 {
				answerable = append(answerable, h[0].Coverage)
			} else {
				answerable = append(answerable, 0)
			}
			only := true
			for _, id := range q.Relevant {
				only = only && strings.HasPrefix(id, srv+"__")
			}
			if !only {
				continue
			}
			if h := without.Search(q.Query, 5); len(h) > 0 {
				unanswerable = append(unanswerable, h[0].Coverage)
			} else {
				unanswerable = append(unanswerable, 0)
			}
		}
	}
	below := func(xs []float64, c float64) float64 {
		n := 0
		for _, x := range xs {
			if x < c {
				n++
			}
		}
		return float64(n) / float64(len(xs))
	}
	for _, c := range []float64{0.2, 0.3, 0.4, 0.5, 0.6} {
		t.Logf("coverage < %.1f: flags %.3f of %d answerable and %.3f of %d unanswerable requests",
			c, below(answerable, c), len(answerable), below(unanswerable, c), len(unanswerable))
	}
}
