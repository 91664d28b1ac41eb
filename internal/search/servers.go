package search

import "math"

// Servers are scored as well as tools. A request is usually about one
// service ("book a meeting tomorrow" is about a calendar), and a word it
// shares with one tool of an unrelated server (a "meeting" in a billing
// tool's description) should not pull that tool above the calendar's.
// Each server is one document made of all its tools' text (their names,
// titles, descriptions and parameters, as the tools' own fields weigh
// them) and its name; the request is scored against the servers with
// BM25 over those documents, and each tool's score is raised by its
// server's share of the best server's: s × (1 + serverPrior × share).
// A server with one tool gains nothing over its tool; a server whose many
// tools speak of the request's topic lifts them all.

// serverPrior is how much a tool's server's relevance raises it; 0 turns
// server scoring off. It was chosen on the dev set's tuning part alone
// (see docs/PERFORMANCE.md).
var serverPrior = 1.0

// serverFields are the fields of a tool that make its server's document.
var serverFields = [nFields]bool{fName: true, fTitle: true, fLead: true}

// serverB is BM25's length normalisation over server documents, whose
// lengths vary with the number of tools far more than a tool's fields.
const serverB = 0.75

// serverStats is the server documents' part of derived: built with it,
// for one generation of the index.
type serverStats struct {
	of   []int32                 // slot → server number, -1 for none
	post map[string][]serverPost // term → the servers that have it, with weighted frequencies
	norm []float64               // server → 1 / BM25 length normalisation
	n    int                     // servers
}

type serverPost struct {
	srv int32
	tf  float32
}

// buildServers aggregates the live slots' postings into server documents;
// mu must be held.
func (ix *Index) buildServers() serverStats {
	st := serverStats{of: make([]int32, len(ix.slots)), post: map[string][]serverPost{}}
	num := map[string]int32{}
	var lens []float64
	for s := range ix.slots {
		st.of[s] = -1
		if !ix.slots[s].live {
			continue
		}
		srv, _ := splitName(ix.slots[s].name)
		if srv == "" {
			continue
		}
		i, ok := num[srv]
		if !ok {
			i = int32(len(lens))
			num[srv] = i
			lens = append(lens, 0)
		}
		st.of[s] = i
		for f, n := range ix.slots[s].lens {
			if serverFields[f] {
				lens[i] += weight[f] * float64(n)
			}
		}
	}
	st.n = len(lens)
	if st.n < 2 {
		return st
	}
	// The server's name counts once, as a name field, not once per tool.
	for srv, i := range num {
		for _, t := range analyze(nil, srv) {
			st.post[t.term] = addServerTF(st.post[t.term], i, float32(weight[fName]))
			lens[i] += weight[fName]
		}
	}
	for term, ps := range ix.post {
		for _, p := range ps {
			i := st.of[p.doc]
			if i < 0 {
				continue
			}
			var tf float32
			for f, x := range p.tf {
				if serverFields[f] {
					tf += float32(x) * float32(weight[f])
				}
			}
			if tf > 0 {
				st.post[term] = addServerTF(st.post[term], i, tf)
			}
		}
	}
	var avg float64
	for _, l := range lens {
		avg += l
	}
	avg /= float64(st.n)
	st.norm = make([]float64, st.n)
	for i, l := range lens {
		st.norm[i] = 1
		if avg > 0 {
			st.norm[i] = 1 / (1 - serverB + serverB*l/avg)
		}
	}
	return st
}

// addServerTF adds tf to server i's entry of a term's list, which is
// built in slot order, so one server's entries need not be adjacent.
func addServerTF(ps []serverPost, i int32, tf float32) []serverPost {
	for j := len(ps) - 1; j >= 0; j-- {
		if ps[j].srv == i {
			ps[j].tf += tf
			return ps
		}
	}
	return append(ps, serverPost{srv: i, tf: tf})
}

// shares scores the servers for a request's groups and returns each
// server's score as a share of the best one's, nil when server scoring is
// off, the index has fewer than two servers, or no server scores. The
// slice is sc's, valid until sc goes back to the pool.
func (st *serverStats) shares(groups []group, sc *scratch) []float64 {
	if serverPrior == 0 || st.n < 2 {
		return nil
	}
	if cap(sc.srvTotal) < st.n {
		sc.srvTotal, sc.srvBest = make([]float64, st.n), make([]float64, st.n)
	}
	total, best := sc.srvTotal[:st.n], sc.srvBest[:st.n]
	clear(total)
	n := float64(st.n)
	offer := func(t string, w float64) {
		for _, p := range st.post[t] {
			tf := float64(p.tf) * st.norm[p.srv]
			best[p.srv] = max(best[p.srv], w*tf/(k1+tf))
		}
	}
	for _, g := range groups {
		var common []serverPost
		for _, a := range g.alts {
			if ps := st.post[a.term]; a.phrase == nil && len(ps) > len(common) {
				common = ps
			}
		}
		df := float64(len(common))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		clear(best)
		for _, a := range g.alts {
			if a.phrase == nil {
				offer(a.term, a.w*idf)
				continue
			}
			for _, t := range a.phrase {
				offer(t, a.w*idf)
			}
		}
		for i, v := range best {
			total[i] += v
		}
	}
	top := 0.0
	for _, v := range total {
		top = max(top, v)
	}
	if top == 0 {
		return nil
	}
	for i := range total {
		total[i] /= top
	}
	return total
}
