package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
)

// seeds adds the grammar's corners plus the tricky strings, the inputs
// every fuzz target starts from. Only with deep does it add the
// nesting at and past MaxDepth: tens of kilobytes each, slow to mutate, and
// of interest only where the limit applies.
func seeds(f *testing.F, deep bool) {
	for _, c := range scanCases {
		if len(c) < 1000 || deep {
			f.Add([]byte(c))
		}
	}
	for _, s := range stringCases {
		f.Add([]byte(s))
		f.Add([]byte(`{` + s + `:` + s + `}`))
	}
	for _, s := range []string{
		`{"a":{"b":[1,2,{"c":null}]},"d":"e","a":-1.5e-3}`,
		"{\n\t\"x\" :\r\n [ true ,false ] ,\"y\":\"\\u005c\\\"\" }\n",
		`[0,-0,1e9,1E+9,0.5e-0,123456789012345678901234567890,-1e400]`,
		`{"\ud83d\ude00":1,"😀":2}`, `{"a\u0000b":1}`, `{"":""}`, `[[],{},[{}],{"a":[]}]`,
	} {
		f.Add([]byte(s))
	}
}

// FuzzValid holds Valid to json.Valid on any input, and ScanString and
// AppendUnquote to encoding/json on anything that starts like a string.
func FuzzValid(f *testing.F) {
	seeds(f, true)
	f.Fuzz(func(t *testing.T, d []byte) {
		if got, want := Valid(d), json.Valid(d); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid = %v", d, got, want)
		}
		if len(d) > 0 && d[0] == '"' {
			checkString(t, d)
		}
	})
}

// FuzzObject holds Object to json.Unmarshal into map[string]json.RawMessage
// (the same acceptance, the same decoded keys, the same values once
// compacted; the last duplicate wins in both) and to json.Decoder's token
// stream (every key in order, duplicates included), and Array to
// json.Unmarshal into []json.RawMessage.
func FuzzObject(f *testing.F) {
	seeds(f, true)
	f.Fuzz(func(t *testing.T, d []byte) {
		i := SkipSpace(d, 0)
		switch {
		case i < len(d) && d[i] == '{':
			checkObject(t, d, i)
		case i < len(d) && d[i] == '[':
			checkArray(t, d, i)
		}
	})
}

func checkObject(t *testing.T, d []byte, i int) {
	var keys []string
	var values [][]byte
	end, err := Object(d, i, func(m Member) (int, error) {
		if d[m.KeyStart] != '"' || m.Value >= len(d) {
			t.Fatalf("Object(%q): member %+v", d, m)
		}
		end, _, err := Skip(d, m.Value, 1)
		if err == nil {
			keys = append(keys, string(m.Key))
			values = append(values, d[m.Value:end])
		}
		return end, err
	})
	ok := err == nil && SkipSpace(d, end) == len(d)
	var want map[string]json.RawMessage
	if jerr := json.Unmarshal(d, &want); ok != (jerr == nil) {
		t.Fatalf("Object(%q) = %d, %v; json.Unmarshal: %v", d, end, err, jerr)
	}
	if !ok {
		return
	}
	got := make(map[string][]byte, len(keys))
	for n, k := range keys {
		got[k] = values[n]
	}
	if len(got) != len(want) {
		t.Fatalf("Object(%q) keys %q, json.Unmarshal %d keys", d, keys, len(want))
	}
	for k, w := range want {
		g, found := got[k]
		if !found || compact(t, g) != compact(t, w) {
			t.Fatalf("Object(%q)[%q] = %q, json.Unmarshal %q", d, k, g, w)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(d))
	var tokKeys []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		tokKeys = append(tokKeys, k.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(keys, tokKeys) {
		t.Fatalf("Object(%q) keys %q, json.Decoder %q", d, keys, tokKeys)
	}
}

func checkArray(t *testing.T, d []byte, i int) {
	var elems [][]byte
	end, err := Array(d, i, func(n, start int) (int, error) {
		if n != len(elems) || start >= len(d) {
			t.Fatalf("Array(%q): element %d at %d", d, n, start)
		}
		end, _, err := Skip(d, start, 1)
		if err == nil {
			elems = append(elems, d[start:end])
		}
		return end, err
	})
	ok := err == nil && SkipSpace(d, end) == len(d)
	var want []json.RawMessage
	if jerr := json.Unmarshal(d, &want); ok != (jerr == nil) {
		t.Fatalf("Array(%q) = %d, %v; json.Unmarshal: %v", d, end, err, jerr)
	}
	if !ok {
		return
	}
	if len(elems) != len(want) {
		t.Fatalf("Array(%q) has %d elements, json.Unmarshal %d", d, len(elems), len(want))
	}
	for n := range want {
		if compact(t, elems[n]) != compact(t, want[n]) {
			t.Fatalf("Array(%q)[%d] = %q, json.Unmarshal %q", d, n, elems[n], want[n])
		}
	}
}

func compact(t *testing.T, v []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		t.Fatalf("compact(%q): %v", v, err)
	}
	return b.String()
}

// FuzzMeasure holds Measure and DeeperThan to their rule written out byte
// by byte on any input, with and without limits, and Measure on valid JSON
// to a measurement through encoding/json; the limits bite exactly at the
// measured figures.
func FuzzMeasure(f *testing.F) {
	seeds(f, false)
	f.Fuzz(func(t *testing.T, d []byte) {
		got, over, at := Measure(d, unlimited)
		if over != Within || at != -1 {
			t.Fatalf("Measure(%q) with no limits: %v at %d", d, over, at)
		}
		if want, _, _ := refMeasure(d, unlimited); got != want {
			t.Fatalf("Measure(%q) = %+v, rule gives %+v", d, got, want)
		}
		// Limits a little under the figures, so that each one bites.
		for _, max := range []Stats{
			{Depth: got.Depth - 1, Objects: math.MaxInt, Size: math.MaxInt},
			{Depth: math.MaxInt, Objects: got.Objects - 1, Size: math.MaxInt},
			{Depth: math.MaxInt, Objects: math.MaxInt, Size: got.Size / 2},
			{Depth: got.Depth / 2, Objects: got.Objects / 2, Size: got.Size / 2},
		} {
			g, o, a := Measure(d, max)
			w, wo, wa := refMeasure(d, max)
			if g != w || o != wo || a != wa {
				t.Fatalf("Measure(%q, %+v) = %+v, %v, %d; rule gives %+v, %v, %d", d, max, g, o, a, w, wo, wa)
			}
			if max.Objects == math.MaxInt {
				if got := DeeperThan(d, max.Depth); got != (wo == OverDepth) {
					t.Fatalf("DeeperThan(%q, %d) = %v, rule gives %v", d, max.Depth, got, wo)
				}
			}
		}
		if len(d) > 4096 || !json.Valid(d) {
			return
		}
		want := measureJSON(t, d)
		if got != want {
			t.Fatalf("Measure(%q) = %+v, encoding/json gives %+v", d, got, want)
		}
		l := unlimited
		l.Depth = want.Depth
		if _, over, _ := Measure(d, l); over != Within {
			t.Fatalf("Measure(%q) at its own depth %d: %v", d, want.Depth, over)
		}
		if want.Depth > 0 {
			l.Depth = want.Depth - 1
			if _, over, _ := Measure(d, l); over != OverDepth {
				t.Fatalf("Measure(%q) with depth %d < %d: %v", d, l.Depth, want.Depth, over)
			}
		}
	})
}

// FuzzScanners runs every scanner at every one of the first offsets of
// arbitrary bytes: none may panic, read out of range, or report an end
// outside the input or before where it started.
func FuzzScanners(f *testing.F) {
	seeds(f, false)
	f.Fuzz(func(t *testing.T, d []byte) {
		check := func(what string, i, end int, err error) {
			if end < i && err == nil || end > len(d) {
				t.Fatalf("%s(%q, %d) = %d, %v", what, d, i, end, err)
			}
		}
		skipValue := func(m Member) (int, error) {
			end, _, err := Skip(d, m.Value, 1)
			return end, err
		}
		skipElem := func(_, start int) (int, error) {
			end, _, err := SkipDeep(d, start)
			return end, err
		}
		for i := range min(len(d)+1, 64) {
			end, depth, err := Skip(d, i, 0)
			check("Skip", i, end, err)
			if err == nil && depth > 0 && d[i] != '{' && d[i] != '[' {
				t.Fatalf("Skip(%q, %d): depth %d of a scalar", d, i, depth)
			}
			end2, depth2, err2 := SkipDeep(d, i)
			if err == nil && (err2 != nil || end2 != end || depth2 != depth) {
				t.Fatalf("SkipDeep(%q, %d) = %d, %d, %v; Skip %d, %d", d, i, end2, depth2, err2, end, depth)
			}
			end, err = Object(d, i, skipValue)
			check("Object", i, end, err)
			end, err = Array(d, i, skipElem)
			check("Array", i, end, err)
			end, err = ScanNumber(d, i)
			check("ScanNumber", i, end, err)
			end, err = ScanLiteral(d, i, "true")
			check("ScanLiteral", i, end, err)
			end, s, err := ScanString(d, i)
			check("ScanString", i, end, err)
			if err == nil {
				if got := AppendUnquote(nil, d[i+1:end-1], math.MaxInt); len(got) != s.Len {
					t.Fatalf("ScanString(%q, %d).Len = %d, decoded %d bytes", d, i, s.Len, len(got))
				}
			}
			if j := SkipSpace(d, i); j < i || j > len(d) {
				t.Fatalf("SkipSpace(%q, %d) = %d", d, i, j)
			}
		}
		Measure(d, Stats{Depth: 3, Objects: 3, Size: 20})
	})
}

// FuzzParse holds Parse to encoding/json: what json.Valid refuses, Parse
// refuses with a *SyntaxError; what it accepts without a repeated key,
// Parse accepts with the value json.Unmarshal (UseNumber) reads; a
// repeated key is a *DuplicateKeyError listing as many repetitions as
// json.Decoder's token stream shows, with the tree beside it.
func FuzzParse(f *testing.F) {
	seeds(f, false)
	f.Add([]byte(`{"a":1,"b":{"c":2,"c":3},"a":4}`))
	f.Add([]byte(`{"a":0,"b":1,"c":2,"d":3,"e":4,"f":5,"g":6,"h":7,"i":8,"j":9,"k":10,"l":11,"m":12,"n":13,"o":14,"p":15,"q":16,"c":17,"r":{"s":[],"s":{}}}`))
	f.Fuzz(func(t *testing.T, d []byte) {
		n, err := Parse(d)
		if !json.Valid(d) {
			var se *SyntaxError
			if !errors.As(err, &se) || n != nil {
				t.Fatalf("Parse(%q) = %v, %v; json.Valid refuses it", d, n, err)
			}
			return
		}
		dups := countDuplicates(t, d)
		if dups > 0 {
			var de *DuplicateKeyError
			if !errors.As(err, &de) || len(de.Dups) != dups || n == nil {
				t.Fatalf("Parse(%q): %v, want %d duplicates", d, err, dups)
			}
			// Kept last, the tree means what encoding/json (and
			// JavaScript) read.
			de.KeepLast()
		} else if err != nil {
			t.Fatalf("Parse(%q): %v; encoding/json accepts it", d, err)
		}
		dec := json.NewDecoder(bytes.NewReader(d))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := nodeValue(n); !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse(%q) = %#v, encoding/json %#v", d, got, want)
		}
	})
}

// countDuplicates counts the keys json.Decoder's tokens show a second time
// in the same object.
func countDuplicates(t *testing.T, d []byte) int {
	dec := json.NewDecoder(bytes.NewReader(d))
	var stack []map[string]bool // nil for an array
	keyNext := func() bool { return len(stack) > 0 && stack[len(stack)-1] != nil }
	n := 0
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return n
		}
		if expectKey && keyNext() {
			if k, ok := tok.(string); ok {
				if stack[len(stack)-1][k] {
					n++
				}
				stack[len(stack)-1][k] = true
				expectKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, map[string]bool{})
		case json.Delim('['):
			stack = append(stack, nil)
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		expectKey = keyNext()
	}
}

// nodeValue is n as encoding/json decodes a value with UseNumber.
func nodeValue(n *Node) any {
	switch n.Kind {
	case KindBool:
		return n.Bool
	case KindNumber:
		return json.Number(n.Str)
	case KindString:
		return n.Str
	case KindArray:
		a := []any{}
		for _, e := range n.Elems {
			a = append(a, nodeValue(e))
		}
		return a
	case KindObject:
		m := map[string]any{}
		for _, f := range n.Fields {
			m[f.Key] = nodeValue(f.Value)
		}
		return m
	}
	return nil
}
