package drift

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// escapeText makes a line of a server's text (a description, a title,
// instructions) safe and unambiguous on a terminal: every rune that
// [invisible] reports becomes an escape, each byte of invalid UTF-8 becomes
// \xHH, and a backslash becomes \\, so that a description that contains
// the four characters \x1b cannot pass for one that contains an ESC.
// Nothing is removed: a person reviewing a change must see all of it.
func escapeText(s string) string { return escape(s, true) }

// escapeJSON is escapeText for a line of JSON, whose backslashes already
// begin JSON escapes and are left alone. (encoding/json has escaped the
// C0 controls already; DEL, C1 controls and format characters remain.)
func escapeJSON(s string) string { return escape(s, false) }

func escape(s string, backslash bool) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || invisible(r) || backslash && r == '\\' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' && backslash:
			b.WriteString(`\\`)
		case !invisible(r):
			b.WriteString(s[i : i+size])
		case r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += size
	}
	return b.String()
}

// invisible reports whether r is shown as an escape rather than as itself:
// C0 and C1 control characters and DEL (a terminal acts on them: escape
// sequences, carriage returns that overwrite a line), including tab;
// format characters (zero-width characters, bidi controls that reorder what
// is shown, and the tag characters U+E0000–E007F that spell out ASCII no
// font shows); variation selectors (which can carry hidden bytes); spaces
// other than U+0020 (a no-break space looks like a space but is not one);
// line and paragraph separators, private-use, surrogate and unassigned code
// points. These are the characters internal/sanitize removes, and a little
// more, since here they are shown, not removed.
func invisible(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r < utf8.RuneSelf:
		return false
	case r >= 0xe0000 && r <= 0xe007f:
		return true
	case unicode.Is(unicode.Variation_Selector, r), unicode.Is(unicode.Zs, r):
		return true
	}
	return !unicode.IsGraphic(r) // Cc, Cf, Co, Cs, Cn, Zl, Zp
}
