// Package sanitize cleans the metadata text that untrusted MCP servers send
// (tool, prompt and resource descriptions and titles, prompt texts, server
// instructions) before it reaches a model's context or a person's terminal,
// and flags the prompt-injection patterns known from tool-poisoning attacks.
//
// Cleaning ([Strip], [Text]) removes what a reader cannot see but a model or
// a terminal acts on: Unicode format characters (zero-width characters, bidi
// controls, tag characters that smuggle ASCII invisibly), variation
// selectors (which can carry hidden bytes, one per selector) and C0/C1
// control characters (terminal escape sequences). It also caps the length,
// so one server cannot fill a model's context window.
//
// The removal is deliberately blunt: it does not try to keep emoji ZWJ
// sequences or emoji presentation selectors intact, because U+200D ZERO
// WIDTH JOINER is itself category Cf and U+FE0F is a variation selector.
// The technologist emoji U+1F469 U+200D U+1F4BB becomes a woman and a
// laptop side by side: still readable, and a tool description loses nothing
// that matters. Letters and marks of every script are kept, even
// the few that render as nothing (Hangul fillers, U+034F), since removing
// them would damage ordinary text in those scripts.
//
// Scanning ([Scan], [Scanner]) looks for patterns in already cleaned text.
// It is a tripwire for the known, copy-pasted attacks, not a defence
// against an adaptive attacker, who can paraphrase or use homoglyphs. Its
// flags are warnings: some are expected on honest text (a password-reset
// tool mentions passwords). Whether a flag blocks anything is the caller's
// policy (strict mode), not this package's.
//
// This package is a leaf: it imports nothing from Switchboard, only the
// standard library, and does no I/O.
package sanitize

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Default caps, in bytes.
const (
	// DescriptionMax caps descriptions and titles of tools, prompts and
	// resources: a few paragraphs are plenty to choose a tool by.
	DescriptionMax = 2048
	// InstructionsMax caps a server's instructions, which may legitimately
	// explain a whole workflow but must not crowd out the conversation.
	InstructionsMax = 16 << 10
)

// class says why a rune is removed; keep means it is not.
type class uint8

const (
	keep class = iota
	control
	format
	variation
)

// classify reports what Strip does with r, apart from the special cases of
// '\r' (turned into '\n') and U+FFFD from invalid UTF-8, which the callers
// handle because they depend on the bytes around r.
func classify(r rune) class {
	switch {
	case r == '\n' || r == '\t':
		return keep
	case r < 0x20 || (r >= 0x7f && r <= 0x9f):
		return control
	case r < 0xad:
		// Fast path for ASCII and Latin-1: U+00AD SOFT HYPHEN is the first
		// format character.
		return keep
	case r >= 0xe0000 && r <= 0xe007f:
		// The whole tag block, including its unassigned code points: tag
		// characters spell out ASCII that no font shows.
		return format
	case unicode.Is(unicode.Cf, r):
		return format
	case unicode.Is(unicode.Variation_Selector, r):
		// Unicode's Variation_Selector property: U+FE00–FE0F,
		// U+E0100–E01EF and the Mongolian free variation selectors
		// U+180B–180D, U+180F. Long runs of them can encode arbitrary
		// bytes after an innocent-looking character.
		return variation
	}
	return keep
}

// Strip removes Unicode format characters (category Cf: zero-width
// characters, bidi controls U+202A–202E and U+2066–2069, tag characters
// U+E0000–E007F, soft hyphen, U+FEFF, etc.), variation selectors
// (U+FE00–FE0F, U+E0100–E01EF, U+180B–180D, U+180F) and C0/C1 control
// characters except '\n' and '\t' (so U+0000–U+001F minus '\n' and '\t',
// U+007F, U+0080–U+009F). "\r\n" becomes "\n"; a lone '\r' becomes '\n'.
// Each invalid UTF-8 byte becomes U+FFFD.
//
// It returns s itself, without allocating, when there is nothing to remove,
// and reports how many runes (or invalid bytes) were removed or replaced.
// Strip is idempotent: its output contains nothing it would change.
func Strip(s string) (clean string, removed int) {
	var b strings.Builder
	last := 0 // start of the run of s not yet copied to b
	// cut copies the pending run up to i, then replacement.
	cut := func(i int, replacement string) {
		if b.Cap() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:i])
		b.WriteString(replacement)
		removed++
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\r' && i+1 < len(s) && s[i+1] == '\n':
				cut(i, "")
			case c == '\r':
				cut(i, "\n")
			case classify(rune(c)) != keep:
				cut(i, "")
			default:
				i++
				continue
			}
			i++
			last = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			cut(i, string(utf8.RuneError))
		case classify(r) != keep:
			cut(i, "")
		default:
			i += size
			continue
		}
		i += size
		last = i
	}
	if removed == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), removed
}

// Text strips s and then caps it at max bytes (max <= 0 means no cap). A
// longer text is cut at a rune boundary and ends with a marker such as
// "… [truncated by switchboard: 5321 bytes, showing 2000]", where the first
// number is the stripped length, so that len(out) <= max. When even the
// marker does not fit in max, the text is cut to max bytes with no marker.
// changed reports whether anything was stripped or cut.
func Text(s string, max int) (out string, changed bool) {
	clean, removed := Strip(s)
	if max <= 0 || len(clean) <= max {
		return clean, removed > 0
	}
	return capText(clean, max), true
}

// capText cuts the valid UTF-8 text s, longer than max, to at most max
// bytes including the marker.
func capText(s string, max int) string {
	// The marker's length depends on the number it shows; the one for max
	// is at least as long as any for a smaller number, so the text cut to
	// fit it leaves room for the real one.
	budget := max - len(marker(len(s), max))
	if budget <= 0 {
		return s[:runeCut(s, max)]
	}
	n := runeCut(s, budget)
	return s[:n] + marker(len(s), n)
}

func marker(total, shown int) string {
	return fmt.Sprintf("… [truncated by switchboard: %d bytes, showing %d]", total, shown)
}

// runeCut returns the largest i <= n, n <= len(s), at which s can be cut
// without splitting a rune.
func runeCut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	// Stop after utf8.UTFMax bytes so invalid input cannot make this walk
	// far; valid input always finds a start within that.
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	if n < utf8.UTFMax {
		return 0
	}
	return n
}

// Reasons a name is rejected, for NameError.Reason.
const (
	ReasonEmpty             = "empty"
	ReasonFormatChar        = "format_char"
	ReasonControlChar       = "control_char"
	ReasonVariationSelector = "variation_selector"
	ReasonInvalidUTF8       = "invalid_utf8"
)

// NameError says why a name was rejected.
type NameError struct {
	Name   string // the name as received
	Reason string // one of the Reason constants; stable, for programs
	Rune   rune   // the first offending code point; 0 for ReasonEmpty
}

// nameQuoteMax is how much of a name an error message shows: names come
// from untrusted servers, and one could be megabytes long.
const nameQuoteMax = 64

func (e *NameError) Error() string {
	if e.Reason == ReasonEmpty {
		return "sanitize: empty name"
	}
	name := e.Name
	more := ""
	if len(name) > nameQuoteMax {
		name, more = name[:runeCut(name, nameQuoteMax)], "..."
	}
	what := e.Reason
	switch e.Reason {
	case ReasonFormatChar:
		what = "invisible format character"
	case ReasonControlChar:
		what = "control character"
	case ReasonVariationSelector:
		what = "variation selector"
	case ReasonInvalidUTF8:
		what = "invalid UTF-8, decoded as"
	}
	return fmt.Sprintf("sanitize: name %s%s contains %s U+%04X", quote(name), more, what, e.Rune)
}

// quote is strconv.Quote, except that it also escapes the variation
// selectors, which strconv counts as printable (they are marks) although
// they show nothing.
func quote(s string) string {
	q := strconv.Quote(s)
	if !strings.ContainsFunc(q, func(r rune) bool { return classify(r) != keep }) {
		return q
	}
	var b strings.Builder
	for _, r := range q {
		switch {
		case classify(r) == keep:
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	return b.String()
}

// CheckName reports whether a name (of a tool, prompt or argument) is
// acceptable. It returns a *NameError if the name is empty or contains a
// character that Strip would remove or change, or U+FFFD. It enforces no
// charset beyond that: the registry maps names to ^[a-zA-Z0-9_-]{1,64}$
// for models.
//
// Two cases are stricter than Strip. Names are single tokens, so '\n',
// '\t' and '\r', which Strip keeps or normalises in prose, are control
// characters here. And a literal U+FFFD counts as invalid UTF-8: by the time
// a name has gone through a JSON decoder, invalid bytes have already become
// U+FFFD, and that is the only trace left of them.
func CheckName(name string) error {
	if name == "" {
		return &NameError{Name: name, Reason: ReasonEmpty}
	}
	for _, r := range name {
		reason := ""
		switch {
		case r == utf8.RuneError:
			// Either an invalid byte (range yields RuneError with width 1) or
			// a literal U+FFFD; see above.
			reason = ReasonInvalidUTF8
		case r == '\n' || r == '\t' || r == '\r':
			reason = ReasonControlChar
		default:
			switch classify(r) {
			case control:
				reason = ReasonControlChar
			case format:
				reason = ReasonFormatChar
			case variation:
				reason = ReasonVariationSelector
			}
		}
		if reason != "" {
			return &NameError{Name: name, Reason: reason, Rune: r}
		}
	}
	return nil
}
