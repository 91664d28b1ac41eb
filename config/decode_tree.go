package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
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
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err == io.EOF {
		d.addAt("", "", "file is empty: want a JSON object", nil)
		return nil
	}
	if err != nil {
		d.syntax(data, err)
		return nil
	}
	root, ok := d.parseValue(dec, data, tok, nil, 1)
	if !ok {
		return nil
	}
	off := dec.InputOffset() // just after the root value
	if _, err := dec.Token(); err != io.EOF {
		for off < int64(len(data)) && strings.IndexByte(" \t\r\n", data[off]) >= 0 {
			off++
		}
		line, col := lineCol(data, off)
		d.addAt("", "", fmt.Sprintf("invalid JSON at line %d, column %d: unexpected data after the top-level value", line, col), nil)
		return nil
	}
	return root
}

func (d *decoder) parseValue(dec *json.Decoder, data []byte, tok json.Token, p *jsonPath, depth int) (*node, bool) {
	switch t := tok.(type) {
	case json.Delim:
		if depth > maxDepth {
			d.add(p, "", fmt.Sprintf("nested more than %d levels deep", maxDepth), nil)
			return nil, false
		}
		if t == '[' {
			n := &node{kind: kindArray, elems: []*node{}}
			for i := 0; dec.More(); i++ {
				tok, err := dec.Token()
				if err != nil {
					d.syntax(data, err)
					return nil, false
				}
				e, ok := d.parseValue(dec, data, tok, p.i(i), depth+1)
				if !ok {
					return nil, false
				}
				n.elems = append(n.elems, e)
			}
			if _, err := dec.Token(); err != nil { // ']'
				d.syntax(data, err)
				return nil, false
			}
			return n, true
		}
		n := &node{kind: kindObject}
		seen := map[string]bool{}
		for dec.More() {
			ktok, err := dec.Token()
			if err != nil {
				d.syntax(data, err)
				return nil, false
			}
			key, _ := ktok.(string) // the tokenizer only yields strings here
			vtok, err := dec.Token()
			if err != nil {
				d.syntax(data, err)
				return nil, false
			}
			v, ok := d.parseValue(dec, data, vtok, p.k(key), depth+1)
			if !ok {
				return nil, false
			}
			if seen[key] {
				// JSON decoders disagree about which duplicate wins,
				// so a duplicate is always a mistake worth reporting.
				d.add(p.k(key), "", fmt.Sprintf("duplicate key %s", quote(key)), nil)
				continue
			}
			seen[key] = true
			n.members = append(n.members, member{key, v})
		}
		if _, err := dec.Token(); err != nil { // '}'
			d.syntax(data, err)
			return nil, false
		}
		return n, true
	case string:
		return &node{kind: kindString, str: t}, true
	case json.Number:
		return &node{kind: kindNumber, str: string(t)}, true
	case bool:
		return &node{kind: kindBool, b: t}, true
	case nil:
		return &node{kind: kindNull}, true
	}
	d.addAt("", "", fmt.Sprintf("unexpected JSON token %T", tok), nil)
	return nil, false
}

// syntax reports a JSON syntax error with its line and column.
func (d *decoder) syntax(data []byte, err error) {
	off := int64(len(data))
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset > 0 && se.Offset < off {
		off = se.Offset
	}
	msg := err.Error()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "unexpected end of input"
	}
	switch {
	case strings.Contains(msg, "invalid character '/'"):
		msg += " (comments are not allowed in JSON)"
	case strings.Contains(msg, "invalid character '}' looking for beginning of object key"),
		strings.Contains(msg, "invalid character ']' looking for beginning of value"):
		msg += " (trailing commas are not allowed in JSON)"
	}
	line, col := lineCol(data, off)
	d.addAt("", "", fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, msg), nil)
}

// lineCol returns the 1-based line and column (in bytes) of offset off.
func lineCol(data []byte, off int64) (line, col int) {
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}
