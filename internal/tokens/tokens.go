package tokens

import (
	"unicode"
	"unicode/utf8"
)

// The parameters of the estimate, fitted on testdata/reference.json (see
// the package documentation). A word of up to wordFree letters costs one
// token; each further wordStep letters, or part of them, cost one more.
// A run of punctuation costs one token per punctStep bytes or part of
// them. Non-ASCII letters are costed by UTF-8 bytes: one token per
// wideStep bytes of a run in a script that BPE vocabularies cover
// thinly.
const (
	wordFree  = 9
	wordStep  = 5
	punctStep = 5
	wideStep  = 3
)

// Estimate returns an estimate of the number of tokens that b, UTF-8
// text (typically a JSON tool definition), takes in a model's context.
// Invalid UTF-8 counts one token per byte that does not decode. It never
// returns less than 1 for non-empty input, and 0 for empty input.
func Estimate(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		r, size := decodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			n++
			i++
		case r == '\n' || r == '\r':
			// a run of line breaks, and the blanks around it: one token
			i += size
			for i < len(b) && (b[i] == '\n' || b[i] == '\r' || b[i] == ' ' || b[i] == '\t') {
				i++
			}
			n++
		case r == ' ' || r == '\t':
			j := i + size
			for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
				j++
			}
			next, _ := decodeRune(b[j:])
			switch {
			case j == len(b) || next == '\n' || next == '\r':
				n++ // trailing blanks
				i = j
				continue
			case j-i > 1:
				n++ // all but the last blank; the last one joins what follows
			}
			i = j
			switch {
			case isLetter(next):
				// " word" is one piece: the loop scans the word next
			case isDigit(next):
				n++ // a blank before a digit is a token of its own
			default:
				// " ." is one piece: the blank joins the punctuation run
				p, c := punct(b, j)
				n += c
				i = p
			}
		case isLetter(r):
			w, c := word(b, i)
			n += c
			i = w
		case isDigit(r):
			// digits go in groups of up to three
			j, d := i, 0
			for j < len(b) {
				r2, s2 := decodeRune(b[j:])
				if !isDigit(r2) {
					break
				}
				j += s2
				d++
			}
			n += (d + 2) / 3
			i = j
		default:
			// one punctuation character directly before a letter joins
			// the word ("_files", ".org"); a longer run is its own piece
			next, s2 := decodeRune(b[i+size:])
			if s2 > 0 && isLetter(next) && r < utf8.RuneSelf {
				w, c := word(b, i+size)
				n += c
				i = w
				continue
			}
			p, c := punct(b, i)
			n += c
			i = p
		}
	}
	return n
}

// EstimateString is [Estimate] of a string.
func EstimateString(s string) int { return Estimate([]byte(s)) }

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r) || unicode.Is(unicode.M, r)
}

func isDigit(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsDigit(r)
}

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || '\t' <= r && r <= '\r'
	}
	return unicode.IsSpace(r)
}

// decodeRune is utf8.DecodeRune with a fast path for ASCII.
func decodeRune(b []byte) (rune, int) {
	if len(b) > 0 && b[0] < utf8.RuneSelf {
		return rune(b[0]), 1
	}
	return utf8.DecodeRune(b)
}

// word scans a word starting at i: upper-case letters, then lower-case
// ones (so "entityType" is two words, as BPE pre-tokenisers split it),
// and returns where it ends and what it costs.
func word(b []byte, i int) (end, cost int) {
	j := i
	narrow, wide := 0, 0
	sawLower := false
	for j < len(b) {
		r, s := decodeRune(b[j:])
		if !isLetter(r) {
			break
		}
		var upper bool
		if r < utf8.RuneSelf {
			upper = 'A' <= r && r <= 'Z'
		} else {
			upper = unicode.IsUpper(r) || unicode.IsTitle(r)
		}
		if upper && sawLower {
			break // camelCase boundary
		}
		if !upper {
			sawLower = true
		}
		if s <= 2 {
			narrow += s // ASCII, Latin, Greek, Cyrillic, ...: by bytes
		} else {
			wide++ // CJK and the like: about two tokens for three characters
		}
		j += s
	}
	if j == i {
		return i, 0
	}
	if narrow > 0 {
		cost = 1
		if narrow > wordFree {
			cost += (narrow - wordFree + wordStep - 1) / wordStep
		}
	}
	if wide > 0 {
		cost += (wide*2 + wideStep - 1) / wideStep
	}
	return j, cost
}

// punct scans a run of characters that are neither letters, digits nor
// blanks, and returns where it ends and what it costs.
func punct(b []byte, i int) (end, cost int) {
	j := i
	for j < len(b) {
		r, s := decodeRune(b[j:])
		if isLetter(r) || isDigit(r) || isSpace(r) || r == utf8.RuneError && s <= 1 {
			break
		}
		j += s
	}
	if j == i { // not reached: callers pass a punctuation character
		_, s := decodeRune(b[i:])
		return i + max(s, 1), 1
	}
	return j, (j - i + punctStep - 1) / punctStep
}
