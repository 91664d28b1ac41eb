// Package jsonscan reads JSON in place: it validates exactly what
// encoding/json accepts and reports byte offsets instead of building
// values, so that a caller can read one member of a large document,
// splice edits into the original bytes, or measure a document before it
// decodes it, without allocating on the way.
//
// It offers the primitives Switchboard's readers of untrusted JSON share:
// [SkipSpace]; [Skip], which validates one value under encoding/json's
// nesting limit and reports its depth ([SkipDeep] has no limit, for input
// whose depth is the very thing being handled); [Object] and [Array],
// which walk a container member by member (keys decoded exactly as
// encoding/json decodes them); [ScanString], [ScanNumber] and
// [ScanLiteral] for single tokens, and [AppendUnquote] to decode a
// string; [Valid], json.Valid in one pass; [Measure], which counts
// depth, objects and compact size in one pass that stops at the first
// limit exceeded, and [DeeperThan], its depth check alone; and [Parse],
// the one reader of a whole document into a tree that keeps the order of
// object members, where a repeated key is an error (*[DuplicateKeyError],
// naming each repetition's path and line).
//
// Every scanner is iterative, so no input can exhaust the goroutine
// stack, and none allocates except for an error, a key that needs
// decoding (escapes, invalid UTF-8), and (in Skip) a container stack
// deeper than 32 levels. The
// fuzz targets hold the package to encoding/json: Valid to json.Valid,
// Object and Array to json.Unmarshal into map[string]json.RawMessage and
// []json.RawMessage, Measure to a measurement through json.Decoder, Parse
// to json.Unmarshal and json.Decoder's keys.
package jsonscan

import (
	"fmt"
	"math"
)

// MaxDepth is encoding/json's nesting limit: json.Valid refuses a value
// whose objects and arrays nest deeper than this.
const MaxDepth = 10000

// SyntaxError is JSON that encoding/json would refuse, found at byte
// Offset of the input.
type SyntaxError struct {
	Offset int
	Msg    string // e.g. "unexpected end of JSON"
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("jsonscan: %s (at byte %d)", e.Msg, e.Offset)
}

func errAt(off int, format string, args ...any) error {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// Valid reports whether d is one JSON value, exactly as json.Valid does
// (its nesting limit included; bytes are not checked for UTF-8). On
// text-heavy JSON it is about ten times faster than json.Valid.
func Valid(d []byte) bool {
	i, _, err := Skip(d, SkipSpace(d, 0), 0)
	return err == nil && SkipSpace(d, i) == len(d)
}

// SkipSpace returns the index of the first byte at or after i that is
// not JSON whitespace (space, tab, newline, carriage return), or len(d).
func SkipSpace(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Skip validates the value that starts at d[i] (not at whitespace), which
// sits inside outer enclosing objects and arrays, and returns the index
// just past it and its own nesting depth: 0 for a scalar, 1 for a flat
// object or array. It holds the value to encoding/json's limit: outer
// plus its depth may not exceed [MaxDepth].
func Skip(d []byte, i, outer int) (end, depth int, err error) {
	return skip(d, i, MaxDepth-outer)
}

// SkipDeep is [Skip] with no nesting limit. Its stack of open containers
// takes one byte per level.
func SkipDeep(d []byte, i int) (end, depth int, err error) {
	return skip(d, i, math.MaxInt)
}

// skip is Skip with room for at most room levels of nesting.
func skip(d []byte, i, room int) (end, depth int, err error) {
	var buf [32]byte
	stack := buf[:0] // the open containers, '{' or '['
	for {
		if i >= len(d) {
			return i, depth, errAt(i, "unexpected end of JSON")
		}
		switch c := d[i]; c {
		case '{', '[':
			stack = append(stack, c)
			depth = max(depth, len(stack))
			if len(stack) > room {
				return i, depth, errAt(i, "nested deeper than %d", MaxDepth)
			}
			i = SkipSpace(d, i+1)
			if i < len(d) && d[i] == c+2 { // '}' is '{'+2 and ']' is '['+2
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i, _, _, err = scanKey(d, i); err != nil {
					return i, depth, err
				}
			}
			continue // the first element's value starts at i
		case '"':
			i, _, err = ScanString(d, i)
		case 't':
			i, err = ScanLiteral(d, i, "true")
		case 'f':
			i, err = ScanLiteral(d, i, "false")
		case 'n':
			i, err = ScanLiteral(d, i, "null")
		default:
			i, err = ScanNumber(d, i)
		}
		if err != nil {
			return i, depth, err
		}
		// A value ended: close containers until a comma asks for another.
		for {
			if len(stack) == 0 {
				return i, depth, nil
			}
			i = SkipSpace(d, i)
			if i >= len(d) {
				return i, depth, errAt(i, "unexpected end of JSON")
			}
			top := stack[len(stack)-1]
			if d[i] == top+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if d[i] != ',' {
				return i, depth, errAt(i, "invalid character %q after value", d[i])
			}
			i = SkipSpace(d, i+1)
			if top == '{' {
				if i, _, _, err = scanKey(d, i); err != nil {
					return i, depth, err
				}
			}
			break
		}
	}
}

// scanKey scans `"key" :` and the space after it. It returns the index of
// the member's value, the index just past the key's closing quote, and
// what ScanString found in the key.
func scanKey(d []byte, i int) (val, keyEnd int, key StringInfo, err error) {
	if i >= len(d) {
		return i, i, key, errAt(i, "unexpected end of JSON")
	}
	if d[i] != '"' {
		return i, i, key, errAt(i, "invalid character %q looking for beginning of object key string", d[i])
	}
	keyEnd, key, err = ScanString(d, i)
	if err != nil {
		return keyEnd, keyEnd, key, err
	}
	i = SkipSpace(d, keyEnd)
	if i >= len(d) || d[i] != ':' {
		return i, keyEnd, key, errAt(i, "expected ':' after key")
	}
	return SkipSpace(d, i+1), keyEnd, key, nil
}

// ScanLiteral scans the literal lit ("true", "false" or "null") at d[i]
// and returns the index just past it.
func ScanLiteral(d []byte, i int, lit string) (int, error) {
	if len(d)-i < len(lit) || string(d[i:i+len(lit)]) != lit {
		return i, errAt(i, "invalid literal")
	}
	return i + len(lit), nil
}

// ScanNumber scans the number -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// at d[i] and returns the index just past it. What follows it is the
// caller's business.
func ScanNumber(d []byte, i int) (int, error) {
	start := i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		i = digits(d, i)
	default:
		if i < len(d) {
			return i, errAt(i, "invalid character %q looking for beginning of value", d[i])
		}
		return i, errAt(start, "unexpected end of JSON")
	}
	if i < len(d) && d[i] == '.' {
		if i++; i >= len(d) || !isDigit(d[i]) {
			return i, errAt(i, "invalid number")
		}
		i = digits(d, i)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		if i++; i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return i, errAt(i, "invalid number")
		}
		i = digits(d, i)
	}
	return i, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digits(d []byte, i int) int {
	for i < len(d) && isDigit(d[i]) {
		i++
	}
	return i
}
