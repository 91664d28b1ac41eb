//go:build unix

package launcher

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"plain text", "plain text"},
		{"keep\nnewlines\tand tabs\n", "keep\nnewlines\tand tabs\n"},
		{`back\slash and "quotes"`, `back\slash and "quotes"`},
		{"héllo, 世界 🙂", "héllo, 世界 🙂"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"\x1b]0;title\x07", `\x1b]0;title\x07`},
		{"cr\rlf", `cr\x0dlf`},
		{"nul\x00", `nul\x00`},
		{"del\x7f", `del\x7f`},
		{"\x01\x1f", `\x01\x1f`},
		{"c1 \u0085 \u009b", `c1 \u0085 \u009b`},
		{"raw c1 \x85", `raw c1 \x85`},
		{"bad utf8 \xff\xfe", `bad utf8 \xff\xfe`},
		{"truncated \xe4\xb8", `truncated \xe4\xb8`},
		{"surrogate \xed\xa0\x80", `surrogate \xed\xa0\x80`},
		{"overlong \xc0\xaf", `overlong \xc0\xaf`},
		{"valid replacement char \ufffd", "valid replacement char \ufffd"},
		{"bidi \u202eevil\u202c", `bidi \u202eevil\u202c`},
		{"isolate \u2066x\u2069", `isolate \u2066x\u2069`},
		{"marks \u200e\u200f\u061c", `marks \u200e\u200f\u061c`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"nbsp\u00a0ok", "nbsp\u00a0ok"},
		{"tags \U000E0041\U000E0001\U000E007F", `tags \u{e0041}\u{e0001}\u{e007f}`},
		{"unassigned tag \U000E0002", `unassigned tag \u{e0002}`},
		{"zero-width \u200b\u200c\u200d\u2060\u2064\ufeff", `zero-width \u200b\u200c\u200d\u2060\u2064\ufeff`},
		{"deprecated format \u206a\u206f", `deprecated format \u206a\u206f`},
		{"soft\u00adhyphen", `soft\u00adhyphen`},
		{"family \U0001F468\u200d\U0001F469", "family \U0001F468" + `\u200d` + "\U0001F469"},
		{"emoji and its selector \u2764\ufe0f", "emoji and its selector \u2764\ufe0f"},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEscapeSafeStringNotCopied(t *testing.T) {
	s := strings.Repeat("safe line\n", 100)
	if n := testing.AllocsPerRun(10, func() { _ = Escape(s) }); n != 0 {
		t.Errorf("Escape of safe text allocates %v times", n)
	}
}

// hidden reports whether a terminal would hide or obey r: C0 controls but
// newline and tab, DEL, C1 controls, tag characters, bidi controls,
// zero-width characters, the BOM, line and paragraph separators. The list
// is written out here, apart from unsafeRune, so the fuzz targets check
// Escape against it rather than against itself.
func hidden(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\n' && r != '\t'
	case r >= 0x7f && r <= 0x9f,
		r >= 0xe0000 && r <= 0xe007f,
		r == 0x061c,
		r >= 0x200b && r <= 0x200f,
		r >= 0x202a && r <= 0x202e,
		r >= 0x2060 && r <= 0x2064,
		r >= 0x2066 && r <= 0x2069,
		r == 0xfeff, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// printable reports whether s is valid UTF-8 of printable characters,
// newlines and tabs: text Escape must leave as it is.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != '\n' && r != '\t' {
			return false
		}
	}
	return true
}

// FuzzEscape checks the properties callers rely on: the result is valid
// UTF-8 with nothing a terminal would interpret, Escape is idempotent, text
// that needs no escaping is unchanged, and the growth is bounded.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J", "\xff", "\u0085", "\u202e", "a\nb\tc", "\xe4\xb8", `\x1b`,
		"\U000E0041\U000E0042", "a\u200bb\ufeff", "héllo, 世界 🙂", "\u2764\ufe0f", `\u{e0041}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Escape(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q: invalid UTF-8", s, got)
		}
		for _, r := range got {
			if hidden(r) || unsafeRune(r) {
				t.Fatalf("Escape(%q) = %q: contains %U", s, got, r)
			}
		}
		if printable(s) && got != s {
			t.Fatalf("Escape(%q) = %q: changed printable text", s, got)
		}
		if again := Escape(got); again != got {
			t.Fatalf("Escape not idempotent: %q -> %q -> %q", s, got, again)
		}
		if firstUnsafe(s) == len(s) && got != s {
			t.Fatalf("Escape(%q) = %q: changed safe text", s, got)
		}
		if len(got) > 4*len(s) {
			t.Fatalf("Escape(%q) grew from %d to %d bytes", s, len(s), len(got))
		}
		if n := strings.Count(got, "\n"); n != strings.Count(s, "\n") {
			t.Fatalf("Escape(%q) changed the number of lines", s)
		}
	})
}

func TestEscapeJSON(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`{"a": "plain", "b": [1, 2]}` + "\n", `{"a": "plain", "b": [1, 2]}` + "\n"},
		{`"\u001b[31m"`, `"\u001b[31m"`}, // escaped by encoding/json already
		{`"héllo 世界 🙂 \u2764\ufe0f"`, `"héllo 世界 🙂 \u2764\ufe0f"`},
		{"\"del\x7f\"", `"del\u007f"`},
		{"\"c1 \u0085\u009b\"", `"c1 \u0085\u009b"`},
		{"\"bidi \u202eevil\u202c \u2066x\u2069\"", `"bidi \u202eevil\u202c \u2066x\u2069"`},
		{"\"zw \u200b\u200d\u2060\ufeff\"", `"zw \u200b\u200d\u2060\ufeff"`},
		{"\"tag \U000E0041\U000E007F\"", `"tag \udb40\udc41\udb40\udc7f"`},
		{"\"bad \xff\"", `"bad \ufffd"`},
		{"{\"key\u200b\": 1}", `{"key\u200b": 1}`},
	}
	for _, tt := range tests {
		if got := string(EscapeJSON([]byte(tt.in))); got != tt.want {
			t.Errorf("EscapeJSON(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzEscapeJSON checks that EscapeJSON keeps valid JSON valid and its
// meaning unchanged, and leaves no hidden character in it; f's inputs are
// both JSON texts and strings that encoding/json encodes first.
func FuzzEscapeJSON(f *testing.F) {
	for _, s := range []string{`{"a":"\u202e"}`, "\"\U000E0041\"", "[\"\x7f\", 1]", "\"\xff\"", `{"k":{"n":[true,null]}}`, "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		str, _ := json.Marshal(s)
		for _, in := range [][]byte{[]byte(s), str} {
			got := EscapeJSON(in)
			if !json.Valid(in) {
				continue
			}
			if !utf8.Valid(got) {
				t.Fatalf("EscapeJSON(%q) = %q: invalid UTF-8", in, got)
			}
			for _, r := range string(got) {
				if hidden(r) && r != '\r' || unsafeRune(r) { // '\r' may be layout
					t.Fatalf("EscapeJSON(%q) = %q: contains %U", in, got, r)
				}
			}
			// Numbers decode as written: a valid JSON number may be
			// beyond float64's range.
			decode := func(b []byte) (any, error) {
				d := json.NewDecoder(bytes.NewReader(b))
				d.UseNumber()
				var v any
				err := d.Decode(&v)
				return v, err
			}
			want, err := decode(in)
			if err != nil {
				t.Fatal(err)
			}
			have, err := decode(got)
			if err != nil {
				t.Fatalf("EscapeJSON(%q) = %q: %v", in, got, err)
			}
			if !reflect.DeepEqual(want, have) {
				t.Fatalf("EscapeJSON(%q) = %q: decodes to %v, not %v", in, got, have, want)
			}
		}
	})
}
