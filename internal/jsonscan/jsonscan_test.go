package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// deep is n nested arrays: at MaxDepth json.Valid accepts it, one more
// and it refuses.
func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// deepObject is n nested objects: deepObject(2) is {"a":{}}.
func deepObject(n int) string {
	return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1)
}

// scanCases are the corners of the grammar, valid and not.
var scanCases = []string{
	``, ` `, `{}`, `[]`, `{ }`, `[ ]`, ` {"a" : [1, 2.5e3, -0, true, false, null, "x"] } `,
	`{"a":1,}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`, `[1 2]`, `{,}`, `{1:1}`,
	`01`, `-`, `-01`, `1.`, `.5`, `1e`, `1e+`, `1E-7`, `0.0e0`, `+1`, `1.5e3x`, `0x1`, `-0.5e+3`,
	`tru`, `truex`, `nul`, `NaN`, `true`, `false`, `null`,
	`"\u00e9"`, `"\uD83D\uDE00"`, `"\ud800"`, `"\ud800x"`, `"\ud800\u"`, `"\ud800\uzzzz"`, `"\x"`, `"\u12"`, `"\u12g4"`,
	"\"\x01\"", "\"\t\"", "\"\xff\"", "\"\x7f\"", "\"\x00\"", `"abc`, `"\`, `"\"`, `[`, `{`, `{"a":1`,
	`[[[]]]`, `[[[]]`, `{"a":{"b":{}}}`, `{"a":[}`, `{"a":1]`, `[1}`, `{]`, `}`, `]`,
	`"a\"b"`, `"\/\b\f\n\r\t\\"`, "1 2", "[1]\n", "\u00a0{}", "\ufeff{}", "{\"a\":\v1}", `{} {}`, `{}x`,
	`{"\u0063ontent":[{"\u0074ype":"x"}],"content":1}`, "{\"a\xff\":1,\"a\\ufffd\":2}",
	`{"a":1,"a":2,"b":[1 , {"c" : "d"} ]}`, ` [ 1 , "x" , { } , [ ] , null ] `,
	deep(MaxDepth), deep(MaxDepth + 1), deepObject(MaxDepth), deepObject(MaxDepth + 1),
	`[` + deep(MaxDepth-1) + `,` + deep(MaxDepth) + `]`,
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, c := range scanCases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.40q) = %v, json.Valid = %v", c, got, want)
		}
	}
}

func TestSkipDepth(t *testing.T) {
	tests := map[string]int{`1`: 0, `"x"`: 0, `{}`: 1, `[]`: 1, `{"a":[{}]}`: 3, `[[],[[]],1]`: 3}
	for in, want := range tests {
		if _, got, err := Skip([]byte(in), 0, 0); err != nil || got != want {
			t.Errorf("Skip(%s) depth = %d, %v; want %d", in, got, err, want)
		}
	}
}

// TestSkipLimit: outer levels count towards the limit, and SkipDeep has
// none.
func TestSkipLimit(t *testing.T) {
	d := []byte(deep(100))
	if _, depth, err := Skip(d, 0, MaxDepth-100); err != nil || depth != 100 {
		t.Errorf("Skip at the limit: %d, %v", depth, err)
	}
	_, _, err := Skip(d, 0, MaxDepth-99)
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "nested deeper") || se.Offset != 99 {
		t.Errorf("Skip past the limit: %v", err)
	}
	d = []byte(deep(3 * MaxDepth))
	if end, depth, err := SkipDeep(d, 0); err != nil || depth != 3*MaxDepth || end != len(d) {
		t.Errorf("SkipDeep = %d, %d, %v", end, depth, err)
	}
}

// checkString compares ScanString and AppendUnquote with encoding/json on
// the JSON string s.
func checkString(t *testing.T, s []byte) {
	t.Helper()
	end, info, err := ScanString(s, 0)
	var want string
	jerr := json.Unmarshal(s, &want)
	if (err == nil && SkipSpace(s, end) == len(s)) != (jerr == nil) {
		t.Fatalf("ScanString(%q): end %d, err %v; encoding/json: %v", s, end, err, jerr)
	}
	if jerr != nil {
		return
	}
	if info.Len != len(want) {
		t.Errorf("ScanString(%q).Len = %d, want %d", s, info.Len, len(want))
	}
	body := s[1 : end-1]
	if info.Invalid == utf8.Valid(body) && !info.Escaped {
		t.Errorf("ScanString(%q).Invalid = %v", s, info.Invalid)
	}
	if info.Plain() && string(body) != want {
		t.Errorf("ScanString(%q) is plain, but decodes to %q", s, want)
	}
	if got := AppendUnquote(nil, body, math.MaxInt); string(got) != want {
		t.Errorf("AppendUnquote(%q) = %q, want %q", body, got, want)
	}
	if got := AppendUnquote([]byte("prefix"), body, math.MaxInt); string(got) != "prefix"+want {
		t.Errorf("AppendUnquote(prefix, %q) = %q", body, got)
	}
	// A limit cuts at a rune boundary of the decoded string.
	for limit := range min(len(want), 12) {
		got := AppendUnquote(nil, body, limit)
		if len(got) > limit || !strings.HasPrefix(want, string(got)) || !utf8.Valid(got) {
			t.Errorf("AppendUnquote(%q, %d) = %q", body, limit, got)
		}
		if r, size := utf8.DecodeRuneInString(want[len(got):]); r != utf8.RuneError && len(got)+size <= limit {
			t.Errorf("AppendUnquote(%q, %d) = %q stopped early", body, limit, got)
		}
		// The limit counts only what is appended.
		if got2 := AppendUnquote([]byte("xyz"), body, limit); string(got2) != "xyz"+string(got) {
			t.Errorf("AppendUnquote(xyz, %q, %d) = %q, want xyz%q", body, limit, got2, got)
		}
	}
}

var stringCases = []string{
	`""`, `"abc"`, `"\u00e9\u20ac\uD83D\uDE00"`, `"\ud800"`, `"\udc00\ud800"`, `"\ud800\ud800\udc00"`,
	`"\ud800\u0041"`, "\"\xff\xfe\"", "\"\xed\xa0\x80\"", "\"é€😀\"", `"\"\\\/\b\f\n\r\t"`,
	`"` + strings.Repeat("0123456789", 10) + `\n"`, "\"" + strings.Repeat("a", 17) + "\x80\"",
	`"\ufffd"`, `"\u0000"`, `"\x"`, "\"a\x1fb\"", `"abc`, `"\uDBFF\uDFFF"`, `"\uDC00"`, `"\uD83D\uDE00\uDE00"`,
}

func TestScanString(t *testing.T) {
	for _, s := range stringCases {
		checkString(t, []byte(s))
	}
	// Not a string at all.
	for _, d := range []string{``, `x`, `1`} {
		if _, _, err := ScanString([]byte(d), 0); err == nil {
			t.Errorf("ScanString(%q) accepted", d)
		}
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

// TestObject checks the members Object reports on a few documents, spans
// included; FuzzObject compares it with encoding/json at large.
func TestObject(t *testing.T) {
	type mem struct {
		key            string
		keyStart, val  int
		value, wantErr string
	}
	tests := []struct {
		in      string
		want    []mem
		wantErr string
	}{
		{in: `{}`},
		{in: `{ }`},
		{in: `{"a":1}`, want: []mem{{key: "a", keyStart: 1, val: 5, value: "1"}}},
		{in: `{ "a" : [1, 2] , "b":{} }`, want: []mem{{key: "a", keyStart: 2, val: 8, value: "[1, 2]"}, {key: "b", keyStart: 17, val: 21, value: "{}"}}},
		{in: `{"\u0063ontent":null}`, want: []mem{{key: "content", keyStart: 1, val: 16, value: "null"}}},
		{in: "{\"a\xffb\":0}", want: []mem{{key: "a\ufffdb", keyStart: 1, val: 7, value: "0"}}},
		{in: `{"k":1,"k":2}`, want: []mem{{key: "k", keyStart: 1, val: 5, value: "1"}, {key: "k", keyStart: 7, val: 11, value: "2"}}},
		{in: `{"a":1,}`, want: []mem{{key: "a", keyStart: 1, val: 5, value: "1"}}, wantErr: "invalid character '}' looking for beginning of object key string"},
		{in: `{"a":1 "b":2}`, want: []mem{{key: "a", keyStart: 1, val: 5, value: "1"}}, wantErr: "after object member"},
		{in: `{"a" 1}`, wantErr: "expected ':'"},
		{in: `{"a":`, wantErr: "unexpected end"},
		{in: `[]`, wantErr: "expected an object"},
	}
	for _, tt := range tests {
		d := []byte(tt.in)
		var got []mem
		end, err := Object(d, 0, func(m Member) (int, error) {
			end, _, err := Skip(d, m.Value, 1)
			if err == nil {
				got = append(got, mem{key: string(m.Key), keyStart: m.KeyStart, val: m.Value, value: string(d[m.Value:end])})
			}
			return end, err
		})
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Object(%s) err = %v, want %q", tt.in, err, tt.wantErr)
			}
		} else if err != nil || end != len(d) {
			t.Errorf("Object(%s) = %d, %v; want %d", tt.in, end, err, len(d))
		}
		if len(got) != len(tt.want) {
			t.Errorf("Object(%s) members = %+v, want %+v", tt.in, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("Object(%s) member %d = %+v, want %+v", tt.in, i, got[i], tt.want[i])
			}
		}
	}
}

// TestObjectAllocations: keys without escapes are not copied.
func TestObjectAllocations(t *testing.T) {
	d := []byte(`{"content":[{"type":"text","text":"hello"}],"isError":false}`)
	allocs := testing.AllocsPerRun(100, func() {
		Object(d, 0, func(m Member) (int, error) {
			end, _, err := Skip(d, m.Value, 1)
			return end, err
		})
	})
	if allocs != 0 {
		t.Errorf("Object allocates %v times", allocs)
	}
}

func TestArray(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		ok   bool
	}{
		{`[]`, nil, true},
		{`[ ]`, nil, true},
		{`[1]`, []string{"1"}, true},
		{`[ 1 , "a" , [ ] , {"b":2} ]`, []string{"1", `"a"`, "[ ]", `{"b":2}`}, true},
		{`[1,]`, []string{"1"}, false},
		{`[,1]`, nil, false},
		{`[1 2]`, []string{"1"}, false},
		{`[1`, []string{"1"}, false},
		{`{}`, nil, false},
	}
	for _, tt := range tests {
		d := []byte(tt.in)
		var got []string
		end, err := Array(d, 0, func(n, start int) (int, error) {
			if n != len(got) {
				t.Errorf("Array(%s): element %d reported as %d", tt.in, len(got), n)
			}
			end, _, err := Skip(d, start, 1)
			if err == nil {
				got = append(got, string(d[start:end]))
			}
			return end, err
		})
		if ok := err == nil && end == len(d); ok != tt.ok {
			t.Errorf("Array(%s) = %d, %v; want ok %v", tt.in, end, err, tt.ok)
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Array(%s) elements = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// unlimited lets Measure run to the end.
var unlimited = Stats{Depth: math.MaxInt, Objects: math.MaxInt, Size: math.MaxInt}

func TestMeasureKnownValues(t *testing.T) {
	tests := []struct {
		in   string
		want Stats
	}{
		{`1`, Stats{0, 0, 1}},
		{`""`, Stats{0, 0, 2}},
		{`{}`, Stats{1, 1, 2}},
		{`[]`, Stats{1, 0, 2}},
		{` { "a" : [ { } , [ ] ] } `, Stats{3, 2, 13}},
		{`{"a":"}}}]]]\"{{{"}`, Stats{1, 1, 19}},
		{`["\\",{"\\\"":[]}]`, Stats{3, 1, 18}},
	}
	for _, tt := range tests {
		got, over, at := Measure([]byte(tt.in), unlimited)
		if over != Within || at != -1 || got != tt.want {
			t.Errorf("Measure(%s) = %+v, %v, %d; want %+v", tt.in, got, over, at, tt.want)
		}
	}
}

// TestMeasureStops: Measure stops at the byte that exceeds a limit, with
// that figure at its limit plus one.
func TestMeasureStops(t *testing.T) {
	tests := []struct {
		in   string
		max  Stats
		over Over
		at   int
		want Stats
	}{
		{`[[[1]]]`, Stats{Depth: 2, Objects: 9, Size: 99}, OverDepth, 2, Stats{3, 0, 3}},
		{`{"a":{},"b":{}}`, Stats{Depth: 9, Objects: 2, Size: 99}, OverObjects, 12, Stats{2, 3, 13}},
		{`{"a":"0123456789"}`, Stats{Depth: 9, Objects: 9, Size: 10}, OverSize, 10, Stats{1, 1, 11}},
		{`"0123456789`, Stats{Depth: 9, Objects: 9, Size: 4}, OverSize, 4, Stats{0, 0, 5}},
		{`  1234`, Stats{Depth: 9, Objects: 9, Size: 2}, OverSize, 4, Stats{0, 0, 3}},
		{`"`, Stats{Depth: 9, Objects: 9, Size: 0}, OverSize, 0, Stats{0, 0, 1}},
	}
	for _, tt := range tests {
		got, over, at := Measure([]byte(tt.in), tt.max)
		if got != tt.want || over != tt.over || at != tt.at {
			t.Errorf("Measure(%s, %+v) = %+v, %v, %d; want %+v, %v, %d", tt.in, tt.max, got, over, at, tt.want, tt.over, tt.at)
		}
		if ref, rover, rat := refMeasure([]byte(tt.in), tt.max); ref != got || rover != over || rat != at {
			t.Errorf("refMeasure(%s) = %+v, %v, %d", tt.in, ref, rover, rat)
		}
	}
}

// TestMeasureRule: on input that is not JSON, Measure still follows its
// documented rule (refMeasure): stray closers, unterminated strings and
// runs of backslashes of both parities.
func TestMeasureRule(t *testing.T) {
	inputs := []string{
		``, `"`, `\`, `"\`, `"\"`, `"\\"`, `"\\\"`, `"\\\\"[`, `"\\\"[`,
		`[[[`, `[[["]]]"`, `[["\"]"[`, `"\\\\\\\\"[[`, `"\\\\\\\\\"[["[`,
		`]]]][[`, `}}{{`, `[]]][[[`, `["a\\"]["b\"][`, "[\xff\"\xc3\"[\"[",
		`{"a":"[","b":"\\","c":[[{"d":"\"["}]]}`, `[` + strings.Repeat(`"\\"`, 50) + `[[`,
		`"` + strings.Repeat(`\`, 101) + `"[[[`, `"` + strings.Repeat(`\`, 100) + `"[[[`,
	}
	for _, in := range inputs {
		for limit := range 5 {
			for _, max := range []Stats{unlimited, {Depth: limit, Objects: math.MaxInt, Size: math.MaxInt}, {Depth: 9, Objects: limit, Size: limit * 3}} {
				got, over, at := Measure([]byte(in), max)
				want, wover, wat := refMeasure([]byte(in), max)
				if got != want || over != wover || at != wat {
					t.Errorf("Measure(%q, %+v) = %+v, %v, %d; rule gives %+v, %v, %d", in, max, got, over, at, want, wover, wat)
				}
				if got := DeeperThan([]byte(in), max.Depth); got != (wover == OverDepth) && max.Objects == math.MaxInt {
					t.Errorf("DeeperThan(%q, %d) = %v, rule gives %v", in, max.Depth, got, wover)
				}
			}
		}
	}
}

// refMeasure is Measure's documented rule written out byte by byte.
func refMeasure(d []byte, max Stats) (Stats, Over, int) {
	var (
		st      Stats
		depth   int
		inStr   bool
		escaped bool
	)
	for i, c := range d {
		if inStr {
			st.Size++
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inStr = false
			}
		} else {
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				continue
			}
			st.Size++
			switch c {
			case '"':
				inStr = true
			case '{', '[':
				if c == '{' {
					st.Objects++
					if st.Objects > max.Objects {
						return st, OverObjects, i
					}
				}
				depth++
				if depth > st.Depth {
					st.Depth = depth
					if depth > max.Depth {
						return st, OverDepth, i
					}
				}
			case '}', ']':
				if depth > 0 {
					depth--
				}
			}
		}
		if st.Size > max.Size {
			return st, OverSize, i
		}
	}
	return st, Within, -1
}

// measureJSON is the reference for valid JSON: the recursive definition of
// depth and object count over encoding/json's token stream (not a decoded
// map, which would merge duplicate keys), and the size of json.Compact.
func measureJSON(t *testing.T, d []byte) Stats {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(d))
	dec.UseNumber()
	var st Stats
	if err := measureTokens(dec, 0, &st); err != nil {
		t.Fatalf("measure(%q): %v", d, err)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, d); err != nil {
		t.Fatalf("compact(%q): %v", d, err)
	}
	st.Size = c.Len()
	return st
}

func measureTokens(d *json.Decoder, depth int, st *Stats) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if delim == '{' {
		st.Objects++
	}
	st.Depth = max(st.Depth, depth+1)
	for d.More() {
		if delim == '{' {
			if _, err := d.Token(); err != nil { // the key
				return err
			}
		}
		if err := measureTokens(d, depth+1, st); err != nil {
			return err
		}
	}
	_, err = d.Token() // the closing delimiter
	return err
}

func TestMeasureMatchesEncodingJSON(t *testing.T) {
	for _, c := range scanCases {
		d := []byte(c)
		if len(d) > 4096 || !json.Valid(d) {
			continue
		}
		if got, _, _ := Measure(d, unlimited); got != measureJSON(t, d) {
			t.Errorf("Measure(%q) = %+v, want %+v", d, got, measureJSON(t, d))
		}
	}
}
