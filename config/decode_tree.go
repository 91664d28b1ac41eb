package config

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	switch k {
	case kindBool:
		return "boolean"
	case kindNumber:
		return "number"
	case kindString:
		return "string"
	case kindArray:
		return "array"
	case kindObject:
		return "object"
	}
	return "null"
}

// node is a decoded JSON value. Object members keep document order.
type node struct {
	kind    kind
	str     string // kindString: the value; kindNumber: the literal
	b       bool
	elems   []*node
	members []member
}

type member struct {
	key string
	val *node
}

// parseTree decodes data into a tree, reporting syntax errors and duplicate
// keys. It returns nil after a syntax error.
func (d *decoder) parseTree(data []byte) *node {
	if len(bytes.TrimSpace(data)) == 0 {
		d.addAt("", "", "file is empty: want a JSON object", nil)
		return nil
	}
	tree, err := jsonscan.Parse(data)
	var se *jsonscan.SyntaxError
	if errors.As(err, &se) {
		d.syntax(data, se)
		return nil
	}
	root, ok := d.fromTree(tree, nil, 1)
	var de *jsonscan.DuplicateKeyError
	if errors.As(err, &de) {
		// JSON decoders disagree about which duplicate wins, so a
		// duplicate is always a mistake worth reporting.
		for _, dup := range de.Dups {
			key := dup.Path[len(dup.Path)-1].Key
			d.add(toPath(dup.Path), "", fmt.Sprintf("duplicate key %s", quote(key)), nil)
		}
	}
	if !ok {
		return nil
	}
	return root
}

// fromTree converts the value t at p, checking its nesting.
func (d *decoder) fromTree(t *jsonscan.Node, p *jsonPath, depth int) (*node, bool) {
	switch t.Kind {
	case jsonscan.KindArray, jsonscan.KindObject:
		if depth > maxDepth {
			d.add(p, "", fmt.Sprintf("nested more than %d levels deep", maxDepth), nil)
			return nil, false
		}
	}
	switch t.Kind {
	case jsonscan.KindArray:
		n := &node{kind: kindArray, elems: make([]*node, 0, len(t.Elems))}
		for i, e := range t.Elems {
			v, ok := d.fromTree(e, p.i(i), depth+1)
			if !ok {
				return nil, false
			}
			n.elems = append(n.elems, v)
		}
		return n, true
	case jsonscan.KindObject:
		n := &node{kind: kindObject}
		for _, f := range t.Fields {
			v, ok := d.fromTree(f.Value, p.k(f.Key), depth+1)
			if !ok {
				return nil, false
			}
			n.members = append(n.members, member{f.Key, v})
		}
		return n, true
	case jsonscan.KindString:
		return &node{kind: kindString, str: t.Str}, true
	case jsonscan.KindNumber:
		return &node{kind: kindNumber, str: t.Str}, true
	case jsonscan.KindBool:
		return &node{kind: kindBool, b: t.Bool}, true
	}
	return &node{kind: kindNull}, true
}

// toPath is the jsonPath of a jsonscan.Path.
func toPath(steps jsonscan.Path) *jsonPath {
	var p *jsonPath
	for _, s := range steps {
		if s.IsIndex {
			p = p.i(s.Index)
		} else {
			p = p.k(s.Key)
		}
	}
	return p
}

// syntax reports a JSON syntax error with its line and column.
func (d *decoder) syntax(data []byte, se *jsonscan.SyntaxError) {
	off := min(se.Offset, len(data))
	msg := se.Msg
	if off >= len(data) {
		msg = "unexpected end of input"
	}
	switch {
	case off < len(data) && data[off] == '/':
		msg += " (comments are not allowed in JSON)"
	case off < len(data) && (data[off] == '}' || data[off] == ']'):
		if before := bytes.TrimRight(data[:off], " \t\r\n"); len(before) > 0 && before[len(before)-1] == ',' {
			msg += " (trailing commas are not allowed in JSON)"
		}
	}
	line, col := jsonscan.LineCol(data, off)
	d.addAt("", "", fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, msg), nil)
}
