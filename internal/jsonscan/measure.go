package jsonscan

import "bytes"

// Stats are what [Measure] counts in a document.
type Stats struct {
	Depth   int // deepest nesting of objects and arrays: {} is 1, a scalar 0
	Objects int // objects: every '{' outside a string
	Size    int // bytes of the compact form: all but whitespace outside strings
}

// Over names the figure at which [Measure] stopped.
type Over uint8

const (
	Within      Over = iota // no limit was exceeded
	OverDepth               // Depth exceeded its limit
	OverObjects             // Objects exceeded its limit
	OverSize                // Size exceeded its limit
)

// Measure measures d in one pass, with no recursion and no allocation, and
// stops at the first figure that exceeds its limit in lim (checked in the
// order objects, depth, size at each byte). It returns the figures so far,
// which limit was exceeded, and the index of the byte that exceeded it; at
// is -1 when over is Within. When it stops, the exceeded figure is its
// limit plus one (for limits of zero or more).
//
// Measure does not validate: it only needs to know where strings are. It
// reads d by this rule, which is also the rule of go-sdk's depth check: a
// '"' outside a string starts one; inside, '\' escapes the next byte,
// whatever it is, and an unescaped '"' ends it; '{' and '[' outside strings
// open a level; '}' and ']' close one but never take the depth below zero,
// and nothing checks that they match. On valid JSON the figures are exact
// (FuzzMeasure holds them to encoding/json); on anything else they are
// bounded, and the depth is still the one that rule gives.
func Measure(d []byte, lim Stats) (st Stats, over Over, at int) {
	// The compact size after byte i is i+1-ws, where ws counts the
	// whitespace outside strings so far: counting that, rather than the
	// size, leaves nothing to count inside strings. The size exceeds its
	// limit from byte lim.Size+ws on: stop is that byte, moved on with
	// each whitespace byte, and ws is stop-base. (base never exceeds
	// len(d), so stop cannot overflow.) With a limit of zero or more, a
	// byte before which the size did not exceed is at or before stop.
	base := min(lim.Size, len(d))
	stop, depth := base, 0
	for i := 0; i < len(d); i++ {
		switch c := d[i]; c {
		case ' ', '\t', '\n', '\r':
			stop++
			continue
		case '"':
			end := stringEnd(d, i)
			if end >= stop {
				at = max(i, stop)
				st.Size = at + 1 - (stop - base)
				return st, OverSize, at
			}
			i = end
			continue
		case '{', '[':
			if c == '{' {
				st.Objects++
				if st.Objects > lim.Objects {
					st.Size = i + 1 - (stop - base)
					return st, OverObjects, i
				}
			}
			depth++
			if depth > st.Depth {
				st.Depth = depth
				if depth > lim.Depth {
					st.Size = i + 1 - (stop - base)
					return st, OverDepth, i
				}
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
		if i >= stop {
			st.Size = i + 1 - (stop - base)
			return st, OverSize, i
		}
	}
	st.Size = len(d) - (stop - base)
	return st, Within, -1
}

// stringEnd returns the index of the quote that closes the string whose
// opening quote is d[i], by Measure's rule, or len(d)-1 if none does. It
// jumps from quote to quote: strings are most of the bytes of a document.
// A quote is escaped exactly when an odd run of backslashes precedes it:
// the byte before the run is the opening quote or a byte that is not a
// backslash, so the run starts unescaped and its backslashes pair up.
// Each run is counted once, so the scan stays linear.
func stringEnd(d []byte, i int) int {
	for j := i + 1; ; {
		q := bytes.IndexByte(d[j:], '"')
		if q < 0 {
			return len(d) - 1
		}
		q += j
		k := q - 1
		for d[k] == '\\' { // stops at the opening quote at the latest
			k--
		}
		if (q-1-k)%2 == 0 {
			return q
		}
		j = q + 1
	}
}

// DeeperThan reports whether d nests deeper than limit by Measure's rule:
// whether Measure(d, Stats{Depth: limit, Objects: math.MaxInt, Size:
// math.MaxInt}) stops at OverDepth. It counts nothing else, for a caller
// that checks every message of a connection.
func DeeperThan(d []byte, limit int) bool {
	depth := 0
	for i := 0; i < len(d); i++ {
		switch d[i] {
		case '"':
			// stringEnd, written out: this loop is the whole cost of
			// the check, and a call per string shows in it.
			for {
				j := bytes.IndexByte(d[i+1:], '"')
				if j < 0 {
					return false // unterminated: no bracket follows
				}
				i += 1 + j
				k := i - 1
				for d[k] == '\\' {
					k--
				}
				if (i-1-k)%2 == 0 {
					break
				}
			}
		case '{', '[':
			depth++
			if depth > limit {
				return true
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}
