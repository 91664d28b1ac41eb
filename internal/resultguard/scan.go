package resultguard

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is a small JSON scanner that validates while it walks and
// reports byte spans, so that the guard can splice its output into the
// original bytes instead of decoding and re-encoding the whole result. It
// accepts exactly what json.Valid accepts (FuzzScan checks this), including
// its nesting limit, so that a result the guard passes is one that
// encoding/json can read.

// Valid reports whether d is one JSON value, exactly as json.Valid does
// (its nesting limit included; bytes are not checked for UTF-8), in one
// pass of the guard's scanner: on text-heavy JSON about ten times faster
// than json.Valid, which is why the call path checks arguments and
// results with it (docs/PERFORMANCE.md). FuzzScan holds it to json.Valid.
func Valid(d []byte) bool {
	i, _, err := skipValue(d, skipSpace(d, 0), 0)
	return err == nil && skipSpace(d, i) == len(d)
}

// maxNesting is encoding/json's nesting limit.
const maxNesting = 10000

// errAt is a malformed-result error at byte off of the raw result.
func errAt(off int, format string, args ...any) *Error {
	return &Error{Reason: ReasonMalformed, Offset: off, Detail: fmt.Sprintf(format, args...)}
}

func skipSpace(d []byte, i int) int {
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

// strInfo describes a scanned JSON string without decoding it.
type strInfo struct {
	// n is the length in bytes of the decoded string as encoding/json
	// produces it: each invalid UTF-8 byte and each lone surrogate escape
	// becomes U+FFFD (3 bytes).
	n int
	// escaped reports a backslash escape: the raw bytes are not the value.
	escaped bool
	// invalid reports invalid UTF-8 or a lone surrogate escape.
	invalid bool
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainRun returns the length of the prefix of b that needs no attention
// inside a JSON string: printable ASCII other than '"' and '\\'. It tests
// eight bytes at a time, because most of a large result is such text and
// this loop is most of the cost of the fast path.
func plainRun(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (lsb * '"')
		s := x ^ (lsb * '\\')
		// The classic SWAR tests for a high bit (non-ASCII), a byte below
		// 0x20, and a zero byte after XOR with '"' or '\\'. A borrow can
		// flag a byte above a flagged one, never below, so the lowest
		// flag is the first special byte.
		if m := (x | (x-lsb*0x20)&^x | (q-lsb)&^q | (s-lsb)&^s) & msb; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			break
		}
	}
	return i
}

// scanString scans the string whose opening quote is d[i] and returns the
// index just past its closing quote.
func scanString(d []byte, i int) (int, strInfo, error) {
	var info strInfo
	start := i
	i++
	for {
		run := plainRun(d[i:])
		info.n += run
		i += run
		if i >= len(d) {
			return i, info, errAt(start, "unterminated string")
		}
		switch c := d[i]; {
		case c == '"':
			return i + 1, info, nil
		case c == '\\':
			info.escaped = true
			if i+1 >= len(d) {
				return i, info, errAt(start, "unterminated string")
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				info.n++
				i += 2
			case 'u':
				r := hex4(d, i+2)
				if r < 0 {
					return i, info, errAt(i, "invalid \\u escape")
				}
				i += 6
				if !utf16.IsSurrogate(r) {
					info.n += utf8.RuneLen(r)
					break
				}
				// A high surrogate immediately followed by a low one is
				// one rune; any other surrogate is replaced, as
				// encoding/json does.
				if r < 0xdc00 && i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
					if r2 := hex4(d, i+2); 0xdc00 <= r2 && r2 < 0xe000 {
						info.n += 4
						i += 6
						break
					}
				}
				info.invalid = true
				info.n += 3
			default:
				return i, info, errAt(i, "invalid escape in string")
			}
		case c < 0x20:
			return i, info, errAt(i, "control character in string")
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				info.invalid = true
				info.n += 3
			} else {
				info.n += size
			}
			i += size
		}
	}
}

// hex4 decodes the four hex digits at d[i:], or returns -1.
func hex4(d []byte, i int) rune {
	if i+4 > len(d) {
		return -1
	}
	var r rune
	for _, c := range d[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// skipValue scans the value that starts at d[i], inside base enclosing
// containers, and returns the index just past it and its own nesting depth
// (0 for a scalar, 1 for a flat object or array). It is iterative so that
// hostile nesting cannot exhaust the goroutine stack.
func skipValue(d []byte, i, base int) (end, depth int, err error) {
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
			if base+len(stack) > maxNesting {
				return i, depth, errAt(i, "nested deeper than %d", maxNesting)
			}
			i = skipSpace(d, i+1)
			if i < len(d) && d[i] == c+2 { // '}' is '{'+2 and ']' is '['+2
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i, err = scanKey(d, i); err != nil {
					return i, depth, err
				}
			}
			continue // the first element's value starts at i
		case '"':
			i, _, err = scanString(d, i)
		case 't':
			i, err = scanLiteral(d, i, "true")
		case 'f':
			i, err = scanLiteral(d, i, "false")
		case 'n':
			i, err = scanLiteral(d, i, "null")
		default:
			i, err = scanNumber(d, i)
		}
		if err != nil {
			return i, depth, err
		}
		// A value ended: close containers until a comma asks for another.
		for {
			if len(stack) == 0 {
				return i, depth, nil
			}
			i = skipSpace(d, i)
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
			i = skipSpace(d, i+1)
			if top == '{' {
				if i, err = scanKey(d, i); err != nil {
					return i, depth, err
				}
			}
			break
		}
	}
}

// scanKey scans `"key" :` and the space after it, returning the index of
// the member's value.
func scanKey(d []byte, i int) (int, error) {
	if i >= len(d) || d[i] != '"' {
		return i, errAt(i, "expected a string key")
	}
	i, _, err := scanString(d, i)
	if err != nil {
		return i, err
	}
	i = skipSpace(d, i)
	if i >= len(d) || d[i] != ':' {
		return i, errAt(i, "expected ':' after key")
	}
	return skipSpace(d, i+1), nil
}

func scanLiteral(d []byte, i int, lit string) (int, error) {
	if len(d)-i < len(lit) || string(d[i:i+len(lit)]) != lit {
		return i, errAt(i, "invalid literal")
	}
	return i + len(lit), nil
}

// scanNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func scanNumber(d []byte, i int) (int, error) {
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
			return i, errAt(i, "invalid character %q looking for a value", d[i])
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

// object walks the object whose '{' is d[i]. For each member it calls
// member with the raw key (between the quotes; see keyText) and the indexes
// where the key and the value start; member scans the value and returns the
// index just past it. The guard only walks the first few levels this way,
// far below maxNesting; deeper values go through skipValue.
func object(d []byte, i int, member func(key []byte, keyStart, valStart int) (int, error)) (int, error) {
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1, nil
	}
	for {
		keyStart := i
		v, err := scanKey(d, i)
		if err != nil {
			return v, err
		}
		if v >= len(d) {
			return v, errAt(v, "unexpected end of JSON")
		}
		key := d[keyStart+1 : keyEnd(d, keyStart)]
		if i, err = member(key, keyStart, v); err != nil {
			return i, err
		}
		i = skipSpace(d, i)
		if i >= len(d) {
			return i, errAt(i, "unexpected end of JSON")
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case '}':
			return i + 1, nil
		default:
			return i, errAt(i, "invalid character %q after object member", d[i])
		}
	}
}

// keyEnd returns the index of the closing quote of the already validated
// string at d[i]. Keys are short, so scanning twice costs nothing.
func keyEnd(d []byte, i int) int {
	for i++; d[i] != '"'; i++ {
		if d[i] == '\\' {
			i++
		}
	}
	return i
}

// keyText returns a key's value for comparison: the raw bytes, or the
// decoded bytes when it has escapes (rare, so the allocation is too).
func keyText(raw []byte) []byte {
	for _, c := range raw {
		if c == '\\' {
			return unquote(raw, math.MaxInt)
		}
	}
	return raw
}

// unquote decodes the body (between the quotes) of a JSON string that
// scanString has accepted, exactly as encoding/json does, but stops before
// the output would exceed limit bytes. Stopping between runes is what cuts
// a long text at a rune boundary without decoding all of it.
func unquote(body []byte, limit int) []byte {
	out := make([]byte, 0, min(len(body), limit))
	for i := 0; i < len(body); {
		// Copy a run that needs no decoding in one go.
		j := i
		for j < len(body) && body[j] != '\\' && body[j] < utf8.RuneSelf {
			j++
		}
		if j > i {
			if room := limit - len(out); j-i > room {
				return append(out, body[i:i+room]...)
			}
			out = append(out, body[i:j]...)
			i = j
			continue
		}
		var r rune
		size := 2
		if body[i] == '\\' {
			switch body[i+1] {
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			case 'u':
				r, size = hex4(body, i+2), 6
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+7 < len(body) && body[i+6] == '\\' && body[i+7] == 'u' {
						r2 = hex4(body, i+8)
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r, size = dec, 12
					} else {
						r = utf8.RuneError
					}
				}
			default: // '"', '\\' and '/' stand for themselves
				r = rune(body[i+1])
			}
		} else {
			r, size = utf8.DecodeRune(body[i:]) // RuneError, 1 for a bad byte
		}
		if len(out)+utf8.RuneLen(r) > limit {
			return out
		}
		out = utf8.AppendRune(out, r)
		i += size
	}
	return out
}

// appendString appends the concatenation of parts as one JSON string.
// Unlike json.Marshal it leaves '<', '>' and '&' alone, so delimiters stay
// readable in the output. Any invalid UTF-8 (possible only in a
// caller-supplied server name) becomes U+FFFD, so the output is always
// valid.
func appendString(dst []byte, parts ...[]byte) []byte {
	dst = append(dst, '"')
	for _, s := range parts {
		dst = appendEscaped(dst, s)
	}
	return append(dst, '"')
}

func appendEscaped(dst, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	return append(dst, s[start:]...)
}
