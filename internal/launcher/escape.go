//go:build unix

package launcher

import (
	"strings"
	"unicode"
	"unicode/utf16"
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
//     U+2028/U+2029 and every format character (Unicode category Cf:
//     the bidirectional controls U+061C, U+200E, U+200F, U+202A–U+202E and
//     U+2066–U+2069, the zero-width characters U+200B–U+200D, U+2060–U+2064
//     and U+FEFF, the soft hyphen, …) as \uNNNN;
//   - the tag characters U+E0000–U+E007F, which spell ASCII that no font
//     shows but a model reads, as \u{e0041} (any escaped character above
//     U+FFFF is written this way).
//
// A backslash is left alone, so the result is for display, not reversible;
// in exchange Escape is idempotent and JSON-ish stderr stays readable. The
// result is valid UTF-8 and at most four times as long as s. Text whose
// characters are all printable (unicode.IsPrint), newlines or tabs is
// returned unchanged. EscapeJSON escapes the same characters in JSON.
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
		case unsafeRune(r) && r > 0xffff:
			writeBraced(&b, uint32(r))
		case unsafeRune(r):
			writeHex(&b, `\u`, uint32(r), 4)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// EscapeJSON is Escape for JSON text such as encoding/json writes: the
// characters Escape escapes that encoding/json leaves as they are (DEL, C1
// controls, format characters such as bidi controls, zero-width and tag
// characters, U+2028/U+2029) become JSON escapes, \uNNNN or above U+FFFF a
// UTF-16 pair of them, and bytes that are not UTF-8 become \ufffd. Outside
// ASCII, such characters can stand only inside JSON strings, so valid JSON
// stays valid and decodes to the same values. Other ASCII is left alone:
// encoding/json has escaped the C0 controls inside strings, and outside
// them '\n' and '\t' are layout. b itself is returned when nothing needs
// escaping.
func EscapeJSON(b []byte) []byte {
	i := firstUnsafeJSON(b)
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, b[:i]...)
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				out = append(out, `\u007f`...)
			} else {
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case unsafeRune(r) && r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			out = appendJSONEscape(appendJSONEscape(out, hi), lo)
		case unsafeRune(r):
			out = appendJSONEscape(out, r)
		default:
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

func firstUnsafeJSON(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return len(b)
}

func appendJSONEscape(out []byte, r rune) []byte {
	out = append(out, '\\', 'u')
	for shift := 12; shift >= 0; shift -= 4 {
		out = append(out, hexDigits[(r>>shift)&0xf])
	}
	return out
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
	case r < 0xad: // below the first format character, U+00AD
		return false
	case r == 0x2028 || r == 0x2029: // line / paragraph separator
		return true
	case r >= 0xe0000 && r <= 0xe007f: // tag characters, assigned or not
		return true
	}
	// Format characters: bidi controls, zero-width characters, the BOM,
	// the assigned tag characters, …
	return unicode.Is(unicode.Cf, r)
}

const hexDigits = "0123456789abcdef"

// writeBraced writes v as \u{hex}, the form for code points above U+FFFF.
func writeBraced(b *strings.Builder, v uint32) {
	width := 5
	if v > 0xfffff {
		width = 6
	}
	writeHex(b, `\u{`, v, width)
	b.WriteByte('}')
}

func writeHex(b *strings.Builder, prefix string, v uint32, width int) {
	b.WriteString(prefix)
	for shift := 4 * (width - 1); shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(v>>shift)&0xf])
	}
}
