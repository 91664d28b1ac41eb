package resultguard

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// The guard reads the result with internal/jsonscan, which validates as it
// walks and reports byte spans, so that the guard can splice its output
// into the original bytes instead of decoding and re-encoding the whole
// result. jsonscan accepts exactly what json.Valid accepts, its nesting
// limit included, so a result the guard passes is one that encoding/json
// can read. This file holds the rest of the guard's dealings with JSON
// text: its errors, decoding a string and encoding one.

// errAt is a malformed-result error at byte off of the raw result.
func errAt(off int, format string, args ...any) *Error {
	return &Error{Reason: ReasonMalformed, Offset: off, Detail: fmt.Sprintf(format, args...)}
}

// malformed returns err, from the walk, as an *Error: the guard's own
// errors are already, and jsonscan's syntax errors become one.
func malformed(err error) error {
	if se, ok := errors.AsType[*jsonscan.SyntaxError](err); ok {
		return &Error{Reason: ReasonMalformed, Offset: se.Offset, Detail: se.Msg}
	}
	return err
}

// unquote decodes the body (between the quotes) of a JSON string that
// jsonscan.ScanString has accepted, exactly as encoding/json does, but
// stops before the output would exceed limit bytes.
func unquote(body []byte, limit int) []byte {
	return jsonscan.AppendUnquote(make([]byte, 0, min(len(body), limit)), body, limit)
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
