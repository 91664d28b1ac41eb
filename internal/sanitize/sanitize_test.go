package sanitize

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// removedBySpec is the package contract written out independently of
// classify: what Strip must drop (apart from '\r', which it rewrites).
func removedBySpec(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\n' && r != '\t'
	case r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef:
		return true
	case r >= 0x180b && r <= 0x180d, r == 0x180f: // Mongolian free variation selectors
		return true
	case r >= 0xe0000 && r <= 0xe007f:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// TestStripEveryRune checks every code point against the contract, so no
// class is missed and nothing else is touched.
func TestStripEveryRune(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff || r == '\r' {
			continue // surrogates cannot be encoded; '\r' has its own tests
		}
		in := "a" + string(r) + "b"
		got, n := Strip(in)
		if removedBySpec(r) {
			if got != "ab" || n != 1 {
				t.Errorf("Strip(%q) = %q, %d; want \"ab\", 1 (U+%04X must be removed)", in, got, n, r)
			}
		} else if got != in || n != 0 {
			t.Errorf("Strip(%q) = %q, %d; want it unchanged (U+%04X must be kept)", in, got, n, r)
		}
	}
}

func TestStrip(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		removed int
	}{
		{"empty", "", "", 0},
		{"plain", "Reads a file.", "Reads a file.", 0},
		{"tab and newline kept", "a\tb\nc", "a\tb\nc", 0},
		{"NUL", "a\x00b", "ab", 1},
		{"bell and backspace", "a\x07\x08b", "ab", 2},
		{"DEL", "a\x7fb", "ab", 1},
		{"terminal escape loses its ESC", "\x1b[31mred\x1b[0m", "[31mred[0m", 2},
		{"OSC title sequence", "\x1b]0;pwned\x07ok", "]0;pwnedok", 2},
		{"C1 CSI", "a\u009b31mb", "a31mb", 1},
		{"C1 NEL", "a\u0085b", "ab", 1},
		{"CRLF", "a\r\nb\r\n", "a\nb\n", 2},
		{"lone CR", "a\rb", "a\nb", 1},
		{"trailing CR", "a\r", "a\n", 1},
		{"CR CR LF", "a\r\r\nb", "a\n\nb", 2},
		{"CR then removed then LF", "a\r\u200b\nb", "a\n\nb", 2},
		{"soft hyphen", "pass\u00adword", "password", 1},
		{"zero-width space, non-joiner, joiner", "a\u200bb\u200cc\u200dd", "abcd", 3},
		{"LRM RLM", "a\u200e\u200fb", "ab", 2},
		{"bidi embeddings and overrides", "\u202a\u202b\u202c\u202d\u202ex", "x", 5},
		{"bidi isolates", "\u2066\u2067\u2068\u2069x", "x", 4},
		{"Trojan Source reorder", "access\u202e \u2066// check\u2069 \u2066if", "access // check if", 4},
		{"word joiner, invisible operators", "a\u2060\u2061\u2062\u2063\u2064b", "ab", 5},
		{"BOM", "\ufeffhello", "hello", 1},
		{"Arabic letter mark", "a\u061cb", "ab", 1},
		{"interlinear annotation", "\ufff9a\ufffab\ufffb", "ab", 3},
		{"Mongolian vowel separator", "a\u180eb", "ab", 1},
		{"tag characters smuggling ASCII", "ok" + tags("ignore previous"), "ok", 1 + len("ignore previous") + 1},
		{"unassigned tag-block code point", "a\U000E0000b", "ab", 1},
		{"variation selectors", "a\ufe00b\ufe0fc", "abc", 2},
		{"supplementary variation selectors", "a\U000E0100\U000E01EFb", "ab", 2},
		{"Mongolian free variation selector", "\u1820\u180b", "\u1820", 1},
		{"emoji presentation selector", "\u2764\ufe0f", "\u2764", 1},
		// ZWJ is Cf: a ZWJ sequence falls apart into its emoji. Accepted;
		// see the package comment.
		{"emoji ZWJ sequence", "👨\u200d👩\u200d👧", "👨👩👧", 2},
		{"emoji with skin tone kept", "👍🏽", "👍🏽", 0},
		{"flag kept", "🇫🇷", "🇫🇷", 0},
		{"accents kept, precomposed and combining", "café cafe\u0301 naïve", "café cafe\u0301 naïve", 0},
		{"scripts kept", "日本語 العربية עברית Ελληνικά", "日本語 العربية עברית Ελληνικά", 0},
		{"no-break space kept", "a\u00a0b", "a\u00a0b", 0},
		{"line separator kept", "a\u2028b", "a\u2028b", 0},
		{"literal U+FFFD kept", "a\ufffdb", "a\ufffdb", 0},
		{"invalid byte", "a\xffb", "a\ufffdb", 1},
		{"truncated sequence", "a\xe2\x80", "a\ufffd\ufffd", 2},
		{"encoded surrogate", "\xed\xa0\x80", "\ufffd\ufffd\ufffd", 3},
		{"overlong slash", "\xc0\xaf", "\ufffd\ufffd", 2},
		{"invalid and removed together", "\xff\u200b\x1b", "\ufffd", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := Strip(tt.in)
			if got != tt.want || n != tt.removed {
				t.Errorf("Strip(%q) = %q, %d; want %q, %d", tt.in, got, n, tt.want, tt.removed)
			}
			if again, n2 := Strip(got); again != got || n2 != 0 {
				t.Errorf("Strip not idempotent: Strip(%q) = %q, %d", got, again, n2)
			}
		})
	}
}

// tags spells s in Unicode tag characters, between TAG BEGIN-style markers,
// the way ASCII smuggling hides text from people.
func tags(s string) string {
	var b strings.Builder
	b.WriteRune(0xe0001)
	for _, r := range s {
		b.WriteRune(0xe0000 + r)
	}
	b.WriteRune(0xe007f)
	return b.String()
}

func TestStripCleanReturnsSameString(t *testing.T) {
	in := strings.Repeat("A clean description, with émoji 🙂 and\ttabs.\n", 20)
	got, n := Strip(in)
	if n != 0 || unsafe.StringData(got) != unsafe.StringData(in) {
		t.Errorf("Strip of clean text did not return its input")
	}
	if allocs := testing.AllocsPerRun(100, func() { Strip(in) }); allocs != 0 {
		t.Errorf("Strip of clean text: %v allocations, want 0", allocs)
	}
}

func TestText(t *testing.T) {
	long := strings.Repeat("a", 5321)
	shown := 2000 - len(marker(5321, 2000))
	tests := []struct {
		name    string
		in      string
		max     int
		want    string
		changed bool
	}{
		{"no cap", long, 0, long, false},
		{"negative is no cap", long, -1, long, false},
		{"fits", "hello", 5, "hello", false},
		{"stripped, fits", "he\u200bllo", 5, "hello", true},
		{"cap counts stripped bytes", "he\u200bllo", 6, "hello", true},
		{"long", long, 2000, long[:shown] + marker(5321, shown), true},
		// Marker longer than max: a plain cut at a rune boundary.
		{"tiny", "héllo world", 5, "héll", true},
		{"tiny, no split 2-byte rune", "héllo", 2, "h", true},
		{"tiny, first rune too big", "🙂🙂", 3, "", true},
		{"tiny, exact rune", "🙂🙂", 4, "🙂", true},
		{"one byte", "abc", 1, "a", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := Text(tt.in, tt.max)
			if got != tt.want || changed != tt.changed {
				t.Errorf("Text(%.20q, %d) = %q, %v; want %q, %v", tt.in, tt.max, got, changed, tt.want, tt.changed)
			}
		})
	}
}

func TestTextMarker(t *testing.T) {
	in := strings.Repeat("x", 5321)
	got, _ := Text(in, DescriptionMax)
	want := "… [truncated by switchboard: 5321 bytes, showing 1992]"
	if !strings.HasSuffix(got, want) || len(got) != DescriptionMax {
		t.Errorf("Text(5321 bytes, %d) ends %q (len %d); want suffix %q and len %d",
			DescriptionMax, got[len(got)-60:], len(got), want, DescriptionMax)
	}
	// The marker reports the stripped length, the text the model would
	// otherwise have seen.
	got, _ = Text(strings.Repeat("\u200b", 100)+in, DescriptionMax)
	if !strings.HasSuffix(got, want) {
		t.Errorf("marker after stripping = %q; want suffix %q", got[len(got)-60:], want)
	}
}

// TestTextRuneBoundaries cuts texts of 1- to 4-byte runes at every max:
// the result must fit, be valid UTF-8 and keep a prefix of the input.
func TestTextRuneBoundaries(t *testing.T) {
	for _, unit := range []string{"a", "é", "語", "🙂", "a語🙂é"} {
		in := strings.Repeat(unit, 200)
		for max := 1; max <= len(in)+1; max++ {
			got, changed := Text(in, max)
			if len(got) > max || !utf8.ValidString(got) {
				t.Fatalf("Text(%q×200, %d) = %q: len %d, valid %v", unit, max, got, len(got), utf8.ValidString(got))
			}
			body, _, marked := strings.Cut(got, "… [truncated by switchboard:")
			if !strings.HasPrefix(in, body) {
				t.Fatalf("Text(%q×200, %d) = %q: not a prefix of the input", unit, max, got)
			}
			if changed != (max < len(in)) {
				t.Fatalf("Text(%q×200, %d) changed = %v", unit, max, changed)
			}
			// Once there is room for the marker it is always there, and the
			// cut wastes less than a rune.
			if max < len(in) && max >= len(marker(len(in), max))+utf8.UTFMax {
				if !marked {
					t.Fatalf("Text(%q×200, %d) = %q: no marker", unit, max, got)
				}
				// A shorter number in the marker can free one more byte.
				if max-len(got) > utf8.UTFMax {
					t.Fatalf("Text(%q×200, %d): %d bytes unused", unit, max, max-len(got))
				}
			}
		}
	}
}

func TestCheckName(t *testing.T) {
	tests := []struct {
		name   string
		reason string // "" for accepted
		r      rune
	}{
		{"read_file", "", 0},
		{"get-weather.v2", "", 0},
		{"a b", "", 0}, // no charset beyond the invisible: the registry maps names
		{"名前", "", 0},
		{"🙂", "", 0},
		{"", ReasonEmpty, 0},
		{"read\u200bfile", ReasonFormatChar, 0x200b},
		{"read\u200dfile", ReasonFormatChar, 0x200d},
		{"\u202eelif_daer", ReasonFormatChar, 0x202e},
		{"read" + tags("x"), ReasonFormatChar, 0xe0001},
		{"read\u00adfile", ReasonFormatChar, 0xad},
		{"\ufeffread", ReasonFormatChar, 0xfeff},
		{"read\ufe0f", ReasonVariationSelector, 0xfe0f},
		{"read\U000E0100", ReasonVariationSelector, 0xe0100},
		{"read\x1b[0m", ReasonControlChar, 0x1b},
		{"read\x00", ReasonControlChar, 0},
		{"read\x7f", ReasonControlChar, 0x7f},
		{"read\u0085", ReasonControlChar, 0x85},
		{"read\nfile", ReasonControlChar, '\n'},
		{"read\tfile", ReasonControlChar, '\t'},
		{"read\rfile", ReasonControlChar, '\r'},
		{"read\xfffile", ReasonInvalidUTF8, utf8.RuneError},
		{"read\ufffdfile", ReasonInvalidUTF8, utf8.RuneError},
		{"ok\u200b\x1b", ReasonFormatChar, 0x200b}, // the first offender is reported
	}
	for _, tt := range tests {
		err := CheckName(tt.name)
		if tt.reason == "" {
			if err != nil {
				t.Errorf("CheckName(%q) = %v; want nil", tt.name, err)
			}
			continue
		}
		var ne *NameError
		if !errors.As(err, &ne) {
			t.Errorf("CheckName(%q) = %v; want a *NameError", tt.name, err)
			continue
		}
		if ne.Reason != tt.reason || ne.Rune != tt.r || ne.Name != tt.name {
			t.Errorf("CheckName(%q) = %+v; want reason %q, rune %U", tt.name, *ne, tt.reason, tt.r)
		}
	}
}

func TestNameErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		want string
	}{
		{"", "sanitize: empty name"},
		{"read\u200bfile", `sanitize: name "read\u200bfile" contains invisible format character U+200B`},
		{"a\x1b[2J", `sanitize: name "a\x1b[2J" contains control character U+001B`},
		{"a\xff", `sanitize: name "a\xff" contains invalid UTF-8, decoded as U+FFFD`},
		{"x\U000E0101", `sanitize: name "x\U000e0101" contains variation selector U+E0101`},
		{strings.Repeat("n", 100) + "\u202e", `sanitize: name "` + strings.Repeat("n", 64) + `"... contains invisible format character U+202E`},
	}
	for _, tt := range tests {
		if got := CheckName(tt.name).Error(); got != tt.want {
			t.Errorf("CheckName(%q).Error() =\n  %s\nwant\n  %s", tt.name, got, tt.want)
		}
	}
}

// TestCheckNameAgreesWithStrip: an accepted name is one Strip leaves alone.
func TestCheckNameAgreesWithStrip(t *testing.T) {
	for r := rune(0); r <= 0x10ffff; r += 7 {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		name := "x" + string(r)
		if _, n := Strip(name); CheckName(name) == nil && n != 0 {
			t.Errorf("CheckName accepts %q, which Strip changes", name)
		}
	}
}
