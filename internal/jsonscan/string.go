package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// StringInfo describes a string that [ScanString] accepted, without
// decoding it.
type StringInfo struct {
	// Len is the length in bytes of the decoded string as encoding/json
	// produces it: each invalid UTF-8 byte and each lone surrogate escape
	// becomes U+FFFD (3 bytes).
	Len int
	// Escaped reports a backslash escape.
	Escaped bool
	// Invalid reports invalid UTF-8 or a lone surrogate escape.
	Invalid bool
}

// Plain reports whether the bytes between the quotes are the decoded
// string itself: no escape and nothing that decoding would replace.
func (s StringInfo) Plain() bool { return !s.Escaped && !s.Invalid }

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainRun returns the length of the prefix of b that needs no attention
// inside a JSON string: printable ASCII other than '"' and '\\'. It tests
// eight bytes at a time, because most of a large document is such text
// and this loop is most of the cost of a scan.
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

// ScanString scans the string whose opening quote is d[i] and returns the
// index just past its closing quote and what it holds. The bytes between
// the quotes, d[i+1:end-1], are what [AppendUnquote] decodes.
func ScanString(d []byte, i int) (end int, s StringInfo, err error) {
	if i >= len(d) || d[i] != '"' {
		return i, s, errAt(i, "expected a string")
	}
	start := i
	i++
	for {
		run := plainRun(d[i:])
		s.Len += run
		i += run
		if i >= len(d) {
			return i, s, errAt(start, "unterminated string")
		}
		switch c := d[i]; {
		case c == '"':
			return i + 1, s, nil
		case c == '\\':
			s.Escaped = true
			if i+1 >= len(d) {
				return i, s, errAt(start, "unterminated string")
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.Len++
				i += 2
			case 'u':
				r := hex4(d, i+2)
				if r < 0 {
					return i, s, errAt(i, "invalid \\u escape")
				}
				i += 6
				if !utf16.IsSurrogate(r) {
					s.Len += utf8.RuneLen(r)
					break
				}
				// A high surrogate immediately followed by a low one is
				// one rune; any other surrogate is replaced, as
				// encoding/json does.
				if r < 0xdc00 && i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
					if r2 := hex4(d, i+2); 0xdc00 <= r2 && r2 < 0xe000 {
						s.Len += 4
						i += 6
						break
					}
				}
				s.Invalid = true
				s.Len += 3
			default:
				return i, s, errAt(i, "invalid escape in string")
			}
		case c < 0x20:
			return i, s, errAt(i, "control character in string")
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				s.Invalid = true
				s.Len += 3
			} else {
				s.Len += size
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

// AppendUnquote appends to dst the decoded value of body, the bytes
// between the quotes of a string that [ScanString] accepted (anything
// else may panic), exactly as encoding/json decodes it, but stops before
// the appended bytes would exceed limit. Stopping between runes is what
// cuts a long text at a rune boundary without decoding all of it.
func AppendUnquote(dst, body []byte, limit int) []byte {
	base := len(dst)
	for i := 0; i < len(body); {
		// Copy a run that needs no decoding in one go.
		j := i
		for j < len(body) && body[j] != '\\' && body[j] < utf8.RuneSelf {
			j++
		}
		if j > i {
			if room := limit - (len(dst) - base); j-i > room {
				return append(dst, body[i:i+room]...)
			}
			dst = append(dst, body[i:j]...)
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
		if len(dst)-base+utf8.RuneLen(r) > limit {
			return dst
		}
		dst = utf8.AppendRune(dst, r)
		i += size
	}
	return dst
}
