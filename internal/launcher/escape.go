//go:build unix

package launcher

import (
	"strings"
	"unicode/utf8"
)

// Escape makes text written by a server safe to print to a terminal or a
// log: it keeps printable text, '\n' and '\t', and escapes everything that
// could move the cursor, recolour or retitle a terminal, forge a log line or
// reorder what a reader sees:
//
//   - other C0 controls and DEL as \xNN (ESC becomes \x1b, CR \x0d);
//   - bytes that are not valid UTF-8 as \xNN;
//   - C1 controls (U+0080–U+009F), the line and paragraph separators
//     U+2028/U+2029 and the bidirectional formatting controls (U+061C,
//     U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) as \uNNNN.
//
// A backslash is left alone, so the result is for display, not reversible;
// in exchange Escape is idempotent and JSON-ish stderr stays readable. The
// result is valid UTF-8 and at most four times as long as s.
func Escape(s string) string {
	i := firstUnsafe(s)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII(c) {
				b.WriteByte(c)
			} else {
				writeHex(&b, `\x`, uint32(c), 2)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeHex(&b, `\x`, uint32(c), 2)
		case unsafeRune(r):
			writeHex(&b, `\u`, uint32(r), 4)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnsafe returns the index of the first byte Escape must change, or len(s).
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !safeASCII(c) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return len(s)
}

func safeASCII(c byte) bool {
	return (c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t'
}

// unsafeRune reports whether a valid non-ASCII rune must be escaped.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls, e.g. U+009B CSI
		return true
	case r == 0x2028 || r == 0x2029: // line / paragraph separator
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f, // bidi marks
		r >= 0x202a && r <= 0x202e, // bidi embeddings and overrides
		r >= 0x2066 && r <= 0x2069: // bidi isolates
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

func writeHex(b *strings.Builder, prefix string, v uint32, width int) {
	b.WriteString(prefix)
	for shift := 4 * (width - 1); shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(v>>shift)&0xf])
	}
}
