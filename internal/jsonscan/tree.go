package jsonscan

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Kind is the type of a JSON value read by [Parse].
type Kind uint8

// The kinds of JSON values.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

func (k Kind) String() string {
	switch k {
	case KindBool:
		return "boolean"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	case KindArray:
		return "array"
	case KindObject:
		return "object"
	}
	return "null"
}

// Node is one JSON value as [Parse] reads it: objects keep their members
// in document order, numbers keep their literal.
type Node struct {
	Kind   Kind
	Offset int    // the index of the value's first byte in the document
	End    int    // the index just past its last byte: d[Offset:End] is the value as written
	Str    string // KindString: the decoded string; KindNumber: the literal as written
	Bool   bool   // KindBool
	Elems  []*Node
	Fields []Field // KindObject: in document order, each key once
}

// Field is one member of an object.
type Field struct {
	Key    string // decoded exactly as encoding/json decodes it
	Offset int    // the index of the key's opening quote
	Value  *Node
}

// Step is one step of a [Path]: an object's key, or an array's index
// when IsIndex.
type Step struct {
	Key     string
	Index   int
	IsIndex bool
}

// Path leads from the document's root to a value.
type Path []Step

// String writes p as a JSONPath: $.a.b[0], with keys that are not
// identifiers quoted ($["a b"]).
func (p Path) String() string {
	var b strings.Builder
	b.WriteByte('$')
	for _, s := range p {
		switch {
		case s.IsIndex:
			fmt.Fprintf(&b, "[%d]", s.Index)
		case isIdent(s.Key):
			b.WriteByte('.')
			b.WriteString(s.Key)
		default:
			fmt.Fprintf(&b, "[%s]", strconv.Quote(s.Key))
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// Duplicate is a key that an object holds a second (or later) time.
type Duplicate struct {
	Path   Path  // the member's path, its key last
	Offset int   // the index of the repeated key's opening quote
	Line   int   // 1-based
	Column int   // 1-based, in bytes
	Object *Node // the object that repeats the key
	Value  *Node // the repeated member's value, which the tree leaves out
}

// DuplicateKeyError lists every repeated key of a document, in document
// order. JSON readers disagree about which of two equal keys counts
// (encoding/json and JavaScript take the last, others the first), so
// [Parse] treats any repetition as an error.
type DuplicateKeyError struct {
	Dups []Duplicate
}

// KeepLast makes the tree that [Parse] returned with e read as
// JavaScript's JSON.parse reads the document: each repeated key keeps its
// first position and its last value. Files that JavaScript programs read
// (the MCP clients' own configurations) mean that.
func (e *DuplicateKeyError) KeepLast() {
	for _, d := range e.Dups {
		key := d.Path[len(d.Path)-1].Key
		for i := range d.Object.Fields {
			if d.Object.Fields[i].Key == key {
				d.Object.Fields[i].Value = d.Value
				break
			}
		}
	}
}

func (e *DuplicateKeyError) Error() string {
	d := e.Dups[0]
	msg := fmt.Sprintf("jsonscan: duplicate key %q at %s (line %d, column %d)", d.Path[len(d.Path)-1].Key, d.Path, d.Line, d.Column)
	if len(e.Dups) > 1 {
		msg += fmt.Sprintf(" and %d more", len(e.Dups)-1)
	}
	return msg
}

// Parse reads d, which must hold exactly one JSON value (whitespace
// around it allowed), into a tree. It accepts exactly what encoding/json
// accepts, with one rule more: an object may not hold a key twice (keys
// compared once decoded, so "a" and "\u0061" are the same key).
//
// A document encoding/json refuses is a *[SyntaxError] and no tree. A
// document that repeats keys is a *[DuplicateKeyError] naming each
// repetition, returned with the tree, in which each object keeps the
// first member of every key, so that a caller can go on to report other
// mistakes beside the duplicates. Comments and trailing commas (JSONC,
// JWCC) are the caller's to remove first (hujson.Standardize).
func Parse(d []byte) (*Node, error) {
	start := SkipSpace(d, 0)
	end, _, err := Skip(d, start, 0)
	if err != nil {
		return nil, err
	}
	if i := SkipSpace(d, end); i < len(d) {
		return nil, errAt(i, "unexpected data after the top-level value")
	}
	p := &parser{d: d}
	n, _ := p.value(start)
	if len(p.dups) > 0 {
		return n, &DuplicateKeyError{Dups: p.dups}
	}
	return n, nil
}

// parser builds the tree of a document Skip has validated, so that no
// scan below fails and the recursion is at most MaxDepth deep.
type parser struct {
	d    []byte
	path Path // of the value being read; copied only for a duplicate
	dups []Duplicate
}

// value reads the value at d[i] (which sits at p.path) and returns it and
// the index just past it.
func (p *parser) value(i int) (*Node, int) {
	n, end := p.scan(i)
	n.End = end
	return n, end
}

func (p *parser) scan(i int) (*Node, int) {
	d := p.d
	n := &Node{Offset: i}
	switch d[i] {
	case '{':
		n.Kind = KindObject
		n.Fields = []Field{}
		var seen map[string]bool // once the object is too large to search
		end, _ := Object(d, i, func(m Member) (int, error) {
			key := string(m.Key)
			p.path = append(p.path, Step{Key: key})
			v, end := p.value(m.Value)
			if n.has(key, &seen) {
				line, col := LineCol(d, m.KeyStart)
				p.dups = append(p.dups, Duplicate{Path: slices.Clone(p.path), Offset: m.KeyStart, Line: line, Column: col, Object: n, Value: v})
			} else {
				n.Fields = append(n.Fields, Field{Key: key, Offset: m.KeyStart, Value: v})
				if seen != nil {
					seen[key] = true
				}
			}
			p.path = p.path[:len(p.path)-1]
			return end, nil
		})
		return n, end
	case '[':
		n.Kind = KindArray
		n.Elems = []*Node{}
		end, _ := Array(d, i, func(k, start int) (int, error) {
			p.path = append(p.path, Step{Index: k, IsIndex: true})
			v, end := p.value(start)
			p.path = p.path[:len(p.path)-1]
			n.Elems = append(n.Elems, v)
			return end, nil
		})
		return n, end
	case '"':
		end, info, _ := ScanString(d, i)
		body := d[i+1 : end-1]
		if info.Plain() {
			n.Str = string(body)
		} else {
			n.Str = string(AppendUnquote(make([]byte, 0, info.Len), body, math.MaxInt))
		}
		n.Kind = KindString
		return n, end
	case 't':
		n.Kind, n.Bool = KindBool, true
		return n, i + 4
	case 'f':
		n.Kind = KindBool
		return n, i + 5
	case 'n':
		n.Kind = KindNull
		return n, i + 4
	}
	end, _ := ScanNumber(d, i)
	n.Kind, n.Str = KindNumber, string(d[i:end])
	return n, end
}

// has reports whether object n has a field named key: a search of its
// fields while they are few, then a set that *seen holds.
func (n *Node) has(key string, seen *map[string]bool) bool {
	if *seen == nil {
		if len(n.Fields) < 16 {
			return n.Get(key) != nil
		}
		*seen = make(map[string]bool, 2*len(n.Fields))
		for _, f := range n.Fields {
			(*seen)[f.Key] = true
		}
	}
	return (*seen)[key]
}

// Get returns the value of the object member named key, or nil.
func (n *Node) Get(key string) *Node {
	for _, f := range n.Fields {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}

// LineCol returns the 1-based line and column (in bytes) of offset off
// in d.
func LineCol(d []byte, off int) (line, col int) {
	off = min(max(off, 0), len(d))
	before := d[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = off - bytes.LastIndexByte(before, '\n')
	return line, col
}
