//go:build unix

package launcher

import (
	"strings"
	"testing"
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

// FuzzEscape checks the properties callers rely on: the result is valid
// UTF-8 with nothing a terminal would interpret, Escape is idempotent, text
// that needs no escaping is unchanged, and the growth is bounded.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J", "\xff", "\u0085", "\u202e", "a\nb\tc", "\xe4\xb8", `\x1b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Escape(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q: invalid UTF-8", s, got)
		}
		for _, r := range got {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || unsafeRune(r) {
				t.Fatalf("Escape(%q) = %q: contains %U", s, got, r)
			}
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
