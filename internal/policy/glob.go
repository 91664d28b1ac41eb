package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Glob is a compiled pattern over canonical tool IDs. The syntax is that of
// [path.Match] except that nothing is a separator: '*' matches any run of
// bytes including ':' and '/', because server names may contain ':' and
// resource URIs contain '/', and an ID is matched as an opaque string.
//
//	'*'          any run of characters, possibly empty
//	'?'          one character (one byte if the ID is not valid UTF-8)
//	'[' ['^'] { c | lo '-' hi } ']'
//	             one character in (or, with '^', not in) the class
//	'\\' c       c itself; use it for a literal '*', '?', '[' or '\\'
//	c            c itself
//
// Inside a class, '-', ']' and '\\' must be escaped unless they delimit a
// range or the class. One deliberate difference from [path.Match]: a
// reversed range such as "[z-a]" is rejected rather than matching nothing,
// because a deny rule that silently matches nothing is a hole.
//
// The zero Glob matches only the empty string.
type Glob struct {
	pattern string
	// chunks are the star-separated pieces of the pattern, in order.
	chunks []chunk
}

// chunk is a run of single-character elements, preceded by a star if star
// is set. A trailing star is a chunk with star set and no elements.
type chunk struct {
	star  bool
	elems []elem
}

type elemKind uint8

const (
	elemLit   elemKind = iota // lit, byte for byte
	elemAny                   // '?'
	elemClass                 // '[...]'
)

type elem struct {
	kind   elemKind
	negate bool
	lit    string
	ranges []runeRange
}

type runeRange struct{ lo, hi rune }

// PatternError reports a malformed glob.
type PatternError struct {
	Pattern string
	Offset  int    // byte offset of the problem in Pattern
	Problem string // what is wrong, e.g. "unterminated character class"
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("malformed pattern %q: %s at offset %d", e.Pattern, e.Problem, e.Offset)
}

// CompileGlob parses pattern. Every malformed pattern is rejected here, so
// Match never meets a syntax error.
func CompileGlob(pattern string) (Glob, error) {
	g := Glob{pattern: pattern}
	cur := chunk{}
	var lit []byte // pending literal bytes, flushed into one element
	flush := func() {
		if len(lit) > 0 {
			cur.elems = append(cur.elems, elem{kind: elemLit, lit: string(lit)})
			lit = lit[:0]
		}
	}
	bad := func(off int, problem string) (Glob, error) {
		return Glob{}, &PatternError{Pattern: pattern, Offset: off, Problem: problem}
	}
	for i := 0; i < len(pattern); {
		switch c := pattern[i]; c {
		case '*':
			flush()
			if len(cur.elems) > 0 {
				g.chunks = append(g.chunks, cur)
				cur = chunk{}
			}
			cur.star = true // consecutive stars collapse into one
			i++
		case '?':
			flush()
			cur.elems = append(cur.elems, elem{kind: elemAny})
			i++
		case '[':
			flush()
			e, next, off, problem := parseClass(pattern, i)
			if problem != "" {
				return bad(off, problem)
			}
			cur.elems = append(cur.elems, e)
			i = next
		case '\\':
			if i+1 == len(pattern) {
				return bad(i, "trailing backslash")
			}
			// Escaping the first byte of a multi-byte rune leaves the rest
			// literal, which is the same as escaping the rune.
			lit = append(lit, pattern[i+1])
			i += 2
		default:
			lit = append(lit, c)
			i++
		}
	}
	flush()
	if cur.star || len(cur.elems) > 0 {
		g.chunks = append(g.chunks, cur)
	}
	return g, nil
}

// parseClass parses the class whose '[' is at p[start]. It returns the
// element and the offset just past the closing ']', or a problem and where.
func parseClass(p string, start int) (e elem, next, off int, problem string) {
	e.kind = elemClass
	i := start + 1
	if i < len(p) && p[i] == '^' {
		e.negate = true
		i++
	}
	for {
		if i < len(p) && p[i] == ']' && len(e.ranges) > 0 {
			return e, i + 1, 0, ""
		}
		lo, n, problem := classChar(p, i, len(e.ranges) == 0)
		if problem != "" {
			return elem{}, 0, i, problem
		}
		i += n
		hi := lo
		if i < len(p) && p[i] == '-' {
			i++
			if hi, n, problem = classChar(p, i, false); problem != "" {
				return elem{}, 0, i, problem
			}
			i += n
			if hi < lo {
				return elem{}, 0, i - n, fmt.Sprintf("reversed range %q-%q", lo, hi)
			}
		}
		e.ranges = append(e.ranges, runeRange{lo, hi})
	}
}

// classChar decodes one possibly escaped character of a class at p[i] and
// returns it with the number of bytes it took. As in path.Match, a class
// must be followed by more pattern (at least its ']').
func classChar(p string, i int, first bool) (r rune, n int, problem string) {
	if i >= len(p) {
		return 0, 0, "unterminated character class"
	}
	switch p[i] {
	case '-':
		return 0, 0, `unescaped '-' in character class (write \-)`
	case ']':
		if first {
			return 0, 0, "empty character class"
		}
		return 0, 0, "range without an upper bound"
	case '\\':
		n = 1
	}
	if i+n >= len(p) {
		return 0, 0, "unterminated character class"
	}
	r, w := utf8.DecodeRuneInString(p[i+n:])
	if r == utf8.RuneError && w == 1 {
		return 0, 0, "invalid UTF-8 in character class"
	}
	n += w
	if i+n >= len(p) {
		return 0, 0, "unterminated character class"
	}
	return r, n, ""
}

// MustCompileGlob is CompileGlob for patterns known to be valid, such as
// those in tests; it panics on a malformed pattern.
func MustCompileGlob(pattern string) Glob {
	g, err := CompileGlob(pattern)
	if err != nil {
		panic(err)
	}
	return g
}

// String returns the pattern the Glob was compiled from.
func (g Glob) String() string { return g.pattern }

// Match reports whether g matches all of id. It does not allocate.
//
// The search is path.Match's: each chunk after a star takes the leftmost
// place it fits, and only the last chunk must also end the ID. Leftmost is
// enough because stars between chunks absorb anything, so an earlier fit
// never leaves less room for what follows.
func (g Glob) Match(id string) bool {
	for i := range g.chunks {
		c := &g.chunks[i]
		last := i == len(g.chunks)-1
		if c.star && len(c.elems) == 0 {
			return true // trailing star
		}
		if rest, ok := c.matchHere(id); ok && (len(rest) == 0 || !last) {
			id = rest
			continue
		}
		if !c.star {
			return false
		}
		rest, ok := c.matchLater(id, last)
		if !ok {
			return false
		}
		id = rest
	}
	return len(id) == 0
}

// matchHere matches c's elements at the start of s and returns the rest.
func (c *chunk) matchHere(s string) (rest string, ok bool) {
	for i := range c.elems {
		e := &c.elems[i]
		switch e.kind {
		case elemLit:
			if !strings.HasPrefix(s, e.lit) {
				return "", false
			}
			s = s[len(e.lit):]
		case elemAny:
			if len(s) == 0 {
				return "", false
			}
			_, n := utf8.DecodeRuneInString(s)
			s = s[n:]
		case elemClass:
			if len(s) == 0 {
				return "", false
			}
			r, n := utf8.DecodeRuneInString(s)
			s = s[n:]
			in := false
			for _, rr := range e.ranges {
				if rr.lo <= r && r <= rr.hi {
					in = true
					break
				}
			}
			if in == e.negate {
				return "", false
			}
		}
	}
	return s, true
}

// matchLater finds c, which follows a star, somewhere after the start of s
// (matchHere has already tried the start). If last, the match must end s.
func (c *chunk) matchLater(s string, last bool) (rest string, ok bool) {
	if len(c.elems) == 1 && c.elems[0].kind == elemLit {
		// The common shapes "*_delete" and "*:write*": a plain substring
		// search finds the same leftmost fit faster.
		lit := c.elems[0].lit
		if last {
			return "", strings.HasSuffix(s, lit)
		}
		if j := strings.Index(s, lit); j >= 0 {
			return s[j+len(lit):], true
		}
		return "", false
	}
	// A chunk that opens with a literal can only fit where that literal
	// occurs, so jump between occurrences instead of trying every byte.
	lead := ""
	if c.elems[0].kind == elemLit {
		lead = c.elems[0].lit
	}
	for j := 1; j <= len(s); j++ {
		if lead != "" {
			k := strings.Index(s[j:], lead)
			if k < 0 {
				return "", false
			}
			j += k
		}
		if rest, ok := c.matchHere(s[j:]); ok && (!last || len(rest) == 0) {
			return rest, true
		}
	}
	return "", false
}

// QuoteGlob returns a pattern that matches exactly s, for writing a rule
// about one tool whose ID may contain metacharacters.
func QuoteGlob(s string) string {
	if !strings.ContainsAny(s, `*?[\`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
