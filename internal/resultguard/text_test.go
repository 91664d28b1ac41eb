package resultguard

import (
	"encoding/json"
	"strings"
	"testing"
)

// checkAppendString: appendString's output is one JSON string that
// decodes to s, each invalid UTF-8 byte of s replaced with U+FFFD.
func checkAppendString(t *testing.T, s []byte) {
	t.Helper()
	want := string([]rune(string(s))) // U+FFFD for each invalid byte
	enc := appendString(nil, s)
	var back string
	if err := json.Unmarshal(enc, &back); err != nil || back != want {
		t.Errorf("appendString(%q) = %s, decodes to %q, %v; want %q", s, enc, back, err, want)
	}
	if strings.ContainsAny(string(enc), "<>&") != strings.ContainsAny(want, "<>&") {
		t.Errorf("appendString(%q) = %s: '<', '>' and '&' must stay as they are", s, enc)
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{
		``, `abc`, "é€😀", "\"\\/\b\f\n\r\t", "\x00\x1f\x7f", "\xff\xfe", "\xed\xa0\x80", "a\xe2\x82",
		"<tag> & </tag>", "\u2028\u2029", strings.Repeat("0123456789", 10) + "\n",
	} {
		checkAppendString(t, []byte(s))
	}
	// Parts are concatenated.
	if got := string(appendString([]byte("x"), []byte("a\n"), nil, []byte(`"b`))); got != `x"a\n\"b"` {
		t.Errorf("appendString(parts) = %s", got)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{``, `abc`, "é\"\\\n\x01", "\xff\xed\xa0\x80<&>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkAppendString)
}
