package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Analysis turns text into terms, the same way for documents and queries:
//
//  1. Words are runs of letters and digits, joined by '_', '-', '.', '/' and
//     ':', so that "github__create_issue", "get-file", "path.to" and
//     "owner/repo" are one word each. Anything else separates words.
//  2. A word splits into parts at those joiners, at camelCase humps
//     ("getFileInfo", "HTTPServer" → "HTTP", "Server") and between letters
//     and digits ("base64" → "base", "64").
//  3. Parts are lower-cased and stemmed (stem.go); parts of one character,
//     stop words, numbers, parts longer than maxPart and hash-like hex
//     runs (the suffix that internal/names appends to long names) are
//     dropped.
//  4. A word of two to maxJoin parts also yields its parts, stop words
//     left out, concatenated and stemmed ("create_issue" → "createissu"),
//     so that the exact identifier, and a query that spells a compound as
//     one word or two ("filesystem", "file system"), match strongly. Search
//     builds the cross-word compounds of a query itself (query.go).

const (
	maxPart        = 40 // longer parts are blobs (base64, hashes), not words
	maxJoin        = 4  // longer words are URLs or sentences, not identifiers
	maxQueryTokens = 64 // a query's tokens beyond this are ignored
)

// A token is one term produced by analysis.
type token struct {
	raw    string // the lower-cased part as written (for prefix matching)
	term   string // the stemmed part, or the stemmed compound when joined
	joined bool   // a concatenation of the parts of one word
	plain  bool   // the word had exactly one part (a candidate for compounds)
}

// stopWords are dropped from documents and queries alike: function words,
// and the filler of requests to an assistant ("please", "want", "tool").
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a an the and or nor but of to in on at by for from with without into onto
		about as is are was were be been being am it its this that these those
		i me my mine we our ours us you your yours he him his she her they them
		their there here what which who whom whose how when where why
		do does did done can could would should will shall may might must
		please want wanna need needs like just also then than so if else
		let lets let's im i'm id i'd hey hi thanks thank some any every
		something anything thing things stuff tool tools via using use`) {
		m[w] = true
	}
	return m
}()

// runeClass classifies a rune for word splitting.
type runeClass uint8

const (
	sep    runeClass = iota // separates words
	joiner                  // joins parts of a word: _ - . / :
	lower                   // a letter that is not upper-case (includes uncased scripts)
	upper
	digit
)

func classify(r rune) runeClass {
	switch {
	case r < utf8.RuneSelf:
		switch {
		case 'a' <= r && r <= 'z':
			return lower
		case 'A' <= r && r <= 'Z':
			return upper
		case '0' <= r && r <= '9':
			return digit
		case r == '_' || r == '-' || r == '.' || r == '/' || r == ':':
			return joiner
		}
		return sep
	case unicode.IsUpper(r) && unicode.ToLower(r) != r:
		// An upper-case letter without a lower-case form (ϓ) reads the
		// same after lower-casing: it cannot mark a camelCase boundary,
		// or the words of a lower-cased text would differ.
		return upper
	case unicode.IsLetter(r), unicode.Is(unicode.Mn, r), unicode.Is(unicode.Mc, r):
		// Combining marks belong to the letter before them ("x\u0301");
		// lower-casing "İ" makes one.
		return lower
	case unicode.IsDigit(r):
		return digit
	}
	return sep
}

// words splits s into words and each word into parts, calling fn once per
// word with its raw (not yet lower-cased) parts; fn must not keep parts.
// A joiner-delimited segment that looks like a hash is dropped whole,
// before the letter-digit split would scatter it into junk parts.
func words(s string, fn func(parts []string)) {
	var parts []string
	seg := -1 // start of the current segment, or -1
	endSeg := func(end int) {
		if seg >= 0 {
			if !hashLike(s[seg:end]) {
				parts = splitSegment(parts, s[seg:end])
			}
			seg = -1
		}
	}
	for i, r := range s {
		switch classify(r) {
		case sep:
			endSeg(i)
			if len(parts) > 0 {
				fn(parts)
				parts = parts[:0]
			}
		case joiner:
			endSeg(i)
		default:
			if seg < 0 {
				seg = i
			}
		}
	}
	endSeg(len(s))
	if len(parts) > 0 {
		fn(parts)
	}
}

// splitSegment appends the parts of seg, a run of letters and digits, split
// at camelCase humps and letter-digit changes.
func splitSegment(parts []string, seg string) []string {
	start := 0
	prev := sep
	for i, r := range seg {
		c := classify(r)
		if i > 0 && boundary(seg, i, prev, c) {
			parts = append(parts, seg[start:i])
			start = i
		}
		prev = c
	}
	return append(parts, seg[start:])
}

// boundary reports whether a new part starts at s[i], a letter or digit of
// class c that follows a letter or digit of class prev.
func boundary(s string, i int, prev, c runeClass) bool {
	switch {
	case (prev == digit) != (c == digit):
		return true
	case prev == lower && c == upper:
		return true
	case prev == upper && c == upper:
		// "HTTPServer": a new part starts at the last capital of a run
		// when a lower-case letter follows it, except for the plural of
		// an acronym ("PRs", "URLsFound").
		_, n := utf8.DecodeRuneInString(s[i:])
		if i+n < len(s) {
			next, m := utf8.DecodeRuneInString(s[i+n:])
			if next == 's' {
				after, _ := utf8.DecodeRuneInString(s[i+n+m:])
				if i+n+m == len(s) || classify(after) != lower {
					return false
				}
			}
			return classify(next) == lower
		}
	}
	return false
}

// analyze appends the tokens of s to dst and returns it.
func analyze(dst []token, s string) []token {
	lowered := make([]string, 0, 8)
	words(s, func(parts []string) {
		lowered = lowered[:0]
		letters := false
		for _, p := range parts {
			lp := lowerASCII(p)
			lowered = append(lowered, lp)
			for _, r := range lp {
				if classify(r) == lower {
					letters = true
					break
				}
			}
		}
		for _, lp := range lowered {
			if len(lp) < 2 || len(lp) > maxPart || utf8.RuneCountInString(lp) < 2 || stopWords[lp] || number(lp) {
				continue
			}
			dst = append(dst, token{raw: lp, term: stem(lp), plain: len(lowered) == 1})
		}
		if n := len(lowered); n >= 2 && n <= maxJoin && letters {
			// Stop words are left out of the compound as they are left out
			// of a query, so "list directory with sizes" can find
			// "list_directory_with_sizes" (query.go compounds).
			var j strings.Builder
			kept := 0
			for _, lp := range lowered {
				if !stopWords[lp] {
					j.WriteString(lp)
					kept++
				}
			}
			if kept >= 2 && j.Len() <= maxPart && !stopWords[j.String()] {
				dst = append(dst, token{raw: j.String(), term: stem(j.String()), joined: true})
			}
		}
	})
	return dst
}

// number reports whether p is all digits. Numbers are dropped as terms:
// in a request they are arguments ("issue 42", "the last 20 lines"), and in
// a description limits ("max 100"), neither saying what a tool does. They
// survive inside compounds ("base64", "s3", "oauth2").
func number(p string) bool {
	for _, r := range p {
		if classify(r) != digit {
			return false
		}
	}
	return true
}

// lowerASCII lower-cases s, without allocating when it is already
// lower-case ASCII.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// hashLike reports whether seg looks like the hash suffix of a long
// model-facing name (internal/names appends ten hex digits): ten or more
// lower-case hex digits, at least one of them a decimal digit, so that no
// English word is ever taken for one.
func hashLike(seg string) bool {
	if len(seg) < 10 {
		return false
	}
	digits := false
	for i := 0; i < len(seg); i++ {
		switch c := seg[i]; {
		case '0' <= c && c <= '9':
			digits = true
		case 'a' <= c && c <= 'f':
		default:
			return false
		}
	}
	return digits
}

// plural reports whether w, a lower-cased word, is an English plural:
// "issues", "repos", "people", not "status", "class" or "analysis".
func plural(w string) bool {
	switch w {
	case "people", "children", "data", "media", "indices":
		return true
	}
	n := len(w)
	return n > 3 && w[n-1] == 's' && w[n-2] != 's' && w[n-2] != 'u' && w[n-2] != 'i'
}

// lastPlural reports whether the last word of a name is a plural.
func lastPlural(toks []token) bool {
	for i := len(toks) - 1; i >= 0; i-- {
		if !toks[i].joined {
			return plural(toks[i].raw)
		}
	}
	return false
}
