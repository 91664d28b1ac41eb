package jsonscan

import (
	"errors"
	"fmt"
	"testing"
)

func TestParseDuplicates(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`{"a":1,"a":2}`, `jsonscan: duplicate key "a" at $.a (line 1, column 8)`},
		{"{\"x\": [{\"b\": 1,\n \"\\u0062\": 2}]}", `jsonscan: duplicate key "b" at $.x[0].b (line 2, column 2)`},
		{`{"a b":{"k":1,"k":1},"a b":0}`, `jsonscan: duplicate key "k" at $["a b"].k (line 1, column 15) and 1 more`},
	}
	for _, tt := range tests {
		n, err := Parse([]byte(tt.in))
		var de *DuplicateKeyError
		if !errors.As(err, &de) || err.Error() != tt.want {
			t.Errorf("Parse(%s): %v, want %s", tt.in, err, tt.want)
			continue
		}
		if n == nil || n.Kind != KindObject {
			t.Errorf("Parse(%s): no tree beside the duplicates", tt.in)
		}
	}
	// The first member of a repeated key is the one kept.
	n, _ := Parse([]byte(`{"a":1,"b":true,"a":2}`))
	if len(n.Fields) != 2 || n.Get("a").Str != "1" || !n.Get("b").Bool {
		t.Errorf("tree %+v", n.Fields)
	}
}

func TestParseSyntax(t *testing.T) {
	for _, in := range []string{``, ` `, `{`, `{"a":1,}`, `[1,]`, `{} {}`, `// c` + "\n{}", `{"a" 1}`, `nul`} {
		n, err := Parse([]byte(in))
		var se *SyntaxError
		if !errors.As(err, &se) || n != nil {
			t.Errorf("Parse(%q) = %v, %v; want a syntax error", in, n, err)
		}
	}
	n, err := Parse([]byte(" {\"s\": \"\\u00e9\", \"n\": -1.5e3, \"l\": [null, false]}\n"))
	if err != nil || n.Get("s").Str != "é" || n.Get("n").Str != "-1.5e3" || n.Get("l").Elems[0].Kind != KindNull || n.Get("l").Elems[1].Kind != KindBool {
		t.Errorf("Parse: %+v, %v", n, err)
	}
}

func TestParseOffsets(t *testing.T) {
	doc := []byte(" {\"s\": \"\\u00e9\", \"l\": [null, false]}\n")
	n, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n    *Node
		want string
	}{
		{n, `{"s": "\u00e9", "l": [null, false]}`},
		{n.Get("s"), `"\u00e9"`},
		{n.Get("l"), `[null, false]`},
		{n.Get("l").Elems[1], `false`},
	} {
		if got := string(doc[c.n.Offset:c.n.End]); got != c.want {
			t.Errorf("value as written %q, want %q", got, c.want)
		}
	}
}

// A large object finds its duplicates as a small one does.
func TestParseDuplicatesLargeObject(t *testing.T) {
	var b []byte
	b = append(b, '{')
	for i := range 40 {
		b = fmt.Appendf(b, `"k%d":%d,`, i%30, i)
	}
	b = append(b, `"end":[{"x":1,"x":2}]}`...)
	n, err := Parse(b)
	var de *DuplicateKeyError
	if !errors.As(err, &de) || len(de.Dups) != 11 || len(n.Fields) != 31 {
		t.Fatalf("Parse: %v (%d fields)", err, len(n.Fields))
	}
	if got := de.Dups[0].Path.String(); got != "$.k0" {
		t.Errorf("first duplicate at %s", got)
	}
	if got := de.Dups[10].Path.String(); got != "$.end[0].x" {
		t.Errorf("last duplicate at %s", got)
	}
	if n.Get("k3").Str != "3" {
		t.Errorf("k3 = %s, want the first value", n.Get("k3").Str)
	}
}
