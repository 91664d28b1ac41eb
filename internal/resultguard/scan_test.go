package resultguard

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

var scanCases = []string{
	``, ` `, `{}`, `[]`, `{ }`, `[ ]`, ` {"a" : [1, 2.5e3, -0, true, false, null, "x"] } `,
	`{"a":1,}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`, `[1 2]`,
	`01`, `-`, `-01`, `1.`, `.5`, `1e`, `1e+`, `1E-7`, `0.0e0`, `+1`, `1.5e3x`, `tru`, `truex`, `nul`, `NaN`,
	`"\u00e9"`, `"\uD83D\uDE00"`, `"\ud800"`, `"\ud800x"`, `"\ud800\u"`, `"\ud800\uzzzz"`, `"\x"`, `"\u12"`,
	"\"\x01\"", "\"\t\"", "\"\xff\"", `"abc`, `"\`, `[`, `{`, `{"a":1`, `[[[]]]`, `[[[]]`, `{"a":{"b":{}}}`,
	`{"a":[}`, `{"a":1]`, `[1}`, `"a\"b"`, `"\/\b\f\n\r\t\\"`, "1 2", "[1]\n", "\u00a0{}",
	strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting),
	strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1),
}

func TestScanMatchesEncodingJSON(t *testing.T) {
	for _, c := range scanCases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.40q) = %v, json.Valid = %v", c, got, want)
		}
	}
}

func TestSkipValueDepth(t *testing.T) {
	tests := map[string]int{`1`: 0, `"x"`: 0, `{}`: 1, `[]`: 1, `{"a":[{}]}`: 3, `[[],[[]],1]`: 3}
	for in, want := range tests {
		if _, got, err := skipValue([]byte(in), 0, 0); err != nil || got != want {
			t.Errorf("skipValue(%s) depth = %d, %v; want %d", in, got, err, want)
		}
	}
}

// checkString compares scanString and unquote with encoding/json on the
// JSON string s.
func checkString(t *testing.T, s []byte) {
	t.Helper()
	end, info, err := scanString(s, 0)
	var want string
	jerr := json.Unmarshal(s, &want)
	if (err == nil && skipSpace(s, end) == len(s)) != (jerr == nil) {
		t.Fatalf("scanString(%q): end %d, err %v; encoding/json: %v", s, end, err, jerr)
	}
	if jerr != nil {
		return
	}
	if info.n != len(want) {
		t.Errorf("scanString(%q).n = %d, want %d", s, info.n, len(want))
	}
	body := s[1 : end-1]
	if info.invalid == utf8.Valid(body) && !info.escaped {
		t.Errorf("scanString(%q).invalid = %v", s, info.invalid)
	}
	if got := unquote(body, math.MaxInt); string(got) != want {
		t.Errorf("unquote(%q) = %q, want %q", body, got, want)
	}
	// A limit cuts at a rune boundary of the decoded string.
	for limit := range min(len(want), 12) {
		got := unquote(body, limit)
		if len(got) > limit || !strings.HasPrefix(want, string(got)) || !utf8.Valid(got) {
			t.Errorf("unquote(%q, %d) = %q", body, limit, got)
		}
		if r, size := utf8.DecodeRuneInString(want[len(got):]); r != utf8.RuneError && len(got)+size <= limit {
			t.Errorf("unquote(%q, %d) = %q stopped early", body, limit, got)
		}
	}
	// appendString round-trips the decoded value.
	enc := appendString(nil, []byte(want))
	var back string
	if err := json.Unmarshal(enc, &back); err != nil || back != want {
		t.Errorf("appendString(%q) = %s, decodes to %q, %v", want, enc, back, err)
	}
}

func TestScanString(t *testing.T) {
	for _, s := range []string{
		`""`, `"abc"`, `"\u00e9\u20ac\uD83D\uDE00"`, `"\ud800"`, `"\udc00\ud800"`, `"\ud800\ud800\udc00"`,
		`"\ud800\u0041"`, "\"\xff\xfe\"", "\"\xed\xa0\x80\"", "\"é€😀\"", `"\"\\\/\b\f\n\r\t"`,
		`"` + strings.Repeat("0123456789", 10) + `\n"`, "\"" + strings.Repeat("a", 17) + "\x80\"",
		`"\ufffd"`, `"\u0000"`, `"\x"`, "\"a\x1fb\"", `"abc`,
	} {
		checkString(t, []byte(s))
	}
}

func TestPlainRun(t *testing.T) {
	base := []byte(strings.Repeat("abcdefgh", 4))
	if got := plainRun(base); got != len(base) {
		t.Errorf("plainRun(plain) = %d", got)
	}
	for _, special := range []byte{'"', '\\', 0, 0x1f, 0x80, 0xff} {
		for pos := range base {
			b := bytes.Clone(base)
			b[pos] = special
			if got := plainRun(b); got != pos {
				t.Errorf("plainRun with %#x at %d = %d", special, pos, got)
			}
		}
	}
}

func FuzzScan(f *testing.F) {
	for _, c := range scanCases[:len(scanCases)-2] {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, d []byte) {
		if got, want := Valid(d), json.Valid(d); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid = %v", d, got, want)
		}
		if len(d) > 0 && d[0] == '"' {
			checkString(t, d)
		}
	})
}
