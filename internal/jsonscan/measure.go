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
// stops at the first figure that exceeds its limit in max (checked in the
// order objects, depth, size at each byte). It returns the figures so far,
// which limit was exceeded, and the index of the byte that exceeded it; at
// is -1 when over is Within. When it stops, the exceeded figure is its
// limit plus one.
//
// Measure does not validate: it only needs to know where strings are. It
// reads d by this rule, which is also the rule of go-sdk's depth check: a
// '"' outside a string starts one; inside, '\' escapes the next byte,
// whatever it is, and an unescaped '"' ends it; '{' and '[' outside strings
// open a level; '}' and ']' close one but never take the depth below zero,
// and nothing checks that they match. On valid JSON the figures are exact
// (FuzzMeasure holds them to encoding/json); on anything else they are
// bounded, and the depth is still the one that rule gives.
func Measure(d []byte, max Stats) (st Stats, over Over, at int) {
	depth := 0
	for i := 0; i < len(d); i++ {
		c := d[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			st.Size++
			if st.Size > max.Size {
				return st, OverSize, i
			}
			// Jump from quote to quote: strings are most of the bytes of
			// a document. A quote is escaped exactly when an odd run of
			// backslashes precedes it: the byte before the run is the
			// opening quote or a byte that is not a backslash, so the run
			// starts unescaped and its backslashes pair up. Each run is
			// counted once, so the scan stays linear.
			end := len(d) - 1 // an unterminated string runs to the end
			for j := i + 1; ; {
				q := bytes.IndexByte(d[j:], '"')
				if q < 0 {
					break
				}
				q += j
				k := q - 1
				for d[k] == '\\' { // stops at the opening quote at the latest
					k--
				}
				if (q-1-k)%2 == 0 {
					end = q
					break
				}
				j = q + 1
			}
			st.Size += end - i
			if st.Size > max.Size {
				at = end - (st.Size - max.Size - 1)
				st.Size = max.Size + 1
				return st, OverSize, at
			}
			i = end
			continue
		case '{', '[':
			st.Size++
			if c == '{' {
				st.Objects++
				if st.Objects > max.Objects {
					return st, OverObjects, i
				}
			}
			depth++
			if depth > st.Depth {
				st.Depth = depth
				if depth > max.Depth {
					return st, OverDepth, i
				}
			}
		case '}', ']':
			st.Size++
			if depth > 0 {
				depth--
			}
		default:
			st.Size++
		}
		if st.Size > max.Size {
			return st, OverSize, i
		}
	}
	return st, Within, -1
}
