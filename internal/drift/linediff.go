package drift

import (
	"fmt"
	"strings"
)

// Limits on the line diff. Tool definitions are small; these only stop a
// hostile server from making a diff take seconds or gigabytes.
const (
	// maxDiffLines is the most lines either side may have for a line
	// diff; longer ones are shown whole.
	maxDiffLines = 2000
	// maxEdits is the most lines a line diff may add and remove in all:
	// the Myers search keeps one row of its table per edit, so its memory
	// grows with the square of this. Beyond it both sides are shown whole,
	// which for so different texts is hardly less readable.
	maxEdits = 1000
	// contextLines is how many unchanged lines are shown around a change.
	contextLines = 3
)

type opKind uint8

const (
	opEqual opKind = iota
	opDelete
	opInsert
)

// op is one step of a line diff: a line of a kept (opEqual), a line of a
// removed (opDelete) or a line of b added (opInsert). ai and bi are the
// numbers of lines of a and of b before the step.
type op struct {
	kind   opKind
	ai, bi int
}

// myers returns a shortest edit script from a to b, with equal deciding
// which lines match, or false if it needs more than maxEdits edits. It is
// the greedy algorithm of E. W. Myers, "An O(ND) Difference Algorithm and
// Its Variations" (1986), keeping each round's furthest points to walk
// the path back.
func myers(a, b []string, equal func(x, y string) bool) ([]op, bool) {
	n, m := len(a), len(b)
	// trace[d][k+d] is the furthest x reached on diagonal k = x-y with d
	// edits.
	var trace [][]int
	var prev []int
	for d := 0; ; d++ {
		if d > maxEdits {
			return nil, false
		}
		v := make([]int, 2*d+1)
		done := false
		for k := -d; k <= d; k += 2 {
			var x int
			switch {
			case d == 0:
				x = 0
			case k == -d || k != d && prev[k-1+d-1] < prev[k+1+d-1]:
				x = prev[k+1+d-1] // down: insert b[y-1]
			default:
				x = prev[k-1+d-1] + 1 // right: delete a[x-1]
			}
			y := x - k
			for x < n && y < m && equal(a[x], b[y]) {
				x, y = x+1, y+1
			}
			v[k+d] = x
			if x >= n && y >= m {
				done = true
				break
			}
		}
		trace = append(trace, v)
		prev = v
		if done {
			break
		}
	}

	// Walk back from (n, m), collecting the steps in reverse.
	var rev []op
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		p := trace[d-1]
		k := x - y
		var pk int
		if k == -d || k != d && p[k-1+d-1] < p[k+1+d-1] {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := p[pk+d-1]
		py := px - pk
		// The edit led from (px, py) to (mx, my); a snake of equal lines
		// led on to (x, y).
		mx, my := px+1, py
		if pk == k+1 {
			mx, my = px, py+1
		}
		for x > mx && y > my {
			x, y = x-1, y-1
			rev = append(rev, op{opEqual, x, y})
		}
		if pk == k+1 {
			rev = append(rev, op{opInsert, px, py})
		} else {
			rev = append(rev, op{opDelete, px, py})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, op{opEqual, x, y})
	}
	ops := make([]op, len(rev))
	for i, o := range rev {
		ops[len(rev)-1-i] = o
	}
	return ops, true
}

// writeLineDiff writes the lines of a and b that differ, prefixed "- " and
// "+ ", with up to contextLines unchanged lines around them prefixed "  ".
// When some unchanged lines are left out, each group of changes starts
// with a unified-diff header "@@ -start,count +start,count @@".
func writeLineDiff(w *strings.Builder, a, b []string, equal func(x, y string) bool) {
	var ops []op
	ok := len(a) <= maxDiffLines && len(b) <= maxDiffLines
	if ok {
		ops, ok = myers(a, b, equal)
	}
	if !ok {
		fmt.Fprintf(w, "@@ too different for a line diff (-%d +%d lines): both shown whole @@\n", len(a), len(b))
		for _, l := range a {
			writeLine(w, "- ", l)
		}
		for _, l := range b {
			writeLine(w, "+ ", l)
		}
		return
	}

	// Group the changes with their context; groups whose context meets
	// are merged.
	var hunks [][2]int
	for i, o := range ops {
		if o.kind == opEqual {
			continue
		}
		lo, hi := max(0, i-contextLines), min(len(ops), i+1+contextLines)
		if n := len(hunks); n > 0 && lo <= hunks[n-1][1] {
			hunks[n-1][1] = hi
		} else {
			hunks = append(hunks, [2]int{lo, hi})
		}
	}
	whole := len(hunks) == 1 && hunks[0] == [2]int{0, len(ops)}
	for _, h := range hunks {
		hops := ops[h[0]:h[1]]
		if !whole {
			writeHunkHeader(w, hops)
		}
		// Within each run of changes, removed lines come before added ones.
		for i := 0; i < len(hops); {
			if hops[i].kind == opEqual {
				writeLine(w, "  ", b[hops[i].bi])
				i++
				continue
			}
			j := i
			for j < len(hops) && hops[j].kind != opEqual {
				j++
			}
			for _, o := range hops[i:j] {
				if o.kind == opDelete {
					writeLine(w, "- ", a[o.ai])
				}
			}
			for _, o := range hops[i:j] {
				if o.kind == opInsert {
					writeLine(w, "+ ", b[o.bi])
				}
			}
			i = j
		}
	}
}

// writeHunkHeader writes the unified-diff header of a group of steps:
// line numbers count from 1, and a side with no lines names the line
// before the group.
func writeHunkHeader(w *strings.Builder, hops []op) {
	var na, nb int
	for _, o := range hops {
		if o.kind != opInsert {
			na++
		}
		if o.kind != opDelete {
			nb++
		}
	}
	sa, sb := hops[0].ai, hops[0].bi
	if na > 0 {
		sa++
	}
	if nb > 0 {
		sb++
	}
	fmt.Fprintf(w, "@@ -%d,%d +%d,%d @@\n", sa, na, sb, nb)
}

// writeLine writes prefix and line (already escaped), without trailing
// spaces when line is empty.
func writeLine(w *strings.Builder, prefix, line string) {
	if line == "" {
		prefix = strings.TrimRight(prefix, " ")
	}
	w.WriteString(prefix)
	w.WriteString(line)
	w.WriteByte('\n')
}
