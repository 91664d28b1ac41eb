package search

import (
	"math"
	"slices"
	"strings"
)

// RRFK is the constant of reciprocal rank fusion: the k of Cormack, Clarke
// and Büttcher (2009), who found 60 good across collections. It damps the
// lead of the first few ranks, so that a tool two rankings both place
// well beats one that a single ranking places first.
const RRFK = 60

// Fuse merges rankings, each best first, by reciprocal rank fusion: a
// tool's score is the sum, over the rankings that hold it, of
// 1/(RRFK + its rank there), ranks counted from 1; a tool listed twice in
// one ranking counts at its better rank. It returns the k best (k <= 0
// means 5), best first. Ties go to the tool with the better rank in any
// one ranking, then to the earlier ranking, then by ID, so that the order
// is fixed.
func Fuse(k int, rankings ...[]Hit) []Hit {
	if k <= 0 {
		k = defaultK
	}
	type fused struct {
		score float64
		best  int // best rank in any ranking, from 1
		first int // the first ranking placing it at best
	}
	byID := map[string]*fused{}
	var ids []string
	for r, ranking := range rankings {
		seen := make(map[string]bool, len(ranking))
		for i, h := range ranking {
			if seen[h.ID] {
				continue
			}
			seen[h.ID] = true
			rank := i + 1
			f := byID[h.ID]
			if f == nil {
				f = &fused{best: rank, first: r}
				byID[h.ID] = f
				ids = append(ids, h.ID)
			} else if rank < f.best {
				f.best, f.first = rank, r
			}
			f.score += 1 / float64(RRFK+rank)
		}
	}
	for _, f := range byID {
		// The same ranks summed in another order may differ in the last
		// bit: round, so that they tie.
		f.score = math.Round(f.score*1e12) / 1e12
	}
	slices.SortFunc(ids, func(a, b string) int {
		fa, fb := byID[a], byID[b]
		switch {
		case fa.score != fb.score:
			if fa.score > fb.score {
				return -1
			}
			return 1
		case fa.best != fb.best:
			return fa.best - fb.best
		case fa.first != fb.first:
			return fa.first - fb.first
		}
		return strings.Compare(a, b)
	})
	out := make([]Hit, 0, min(k, len(ids)))
	for _, id := range ids[:min(k, len(ids))] {
		out = append(out, Hit{ID: id, Score: byID[id].score})
	}
	return out
}
