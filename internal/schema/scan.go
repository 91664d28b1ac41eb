package schema

import "fmt"

// stats are what scan measures of a document.
type stats struct {
	depth   int // deepest nesting of objects and arrays; {} is 1, a scalar 0
	objects int // number of '{' outside strings: every JSON object
	size    int // bytes of the compact form: all but whitespace outside strings
}

// scan measures raw in a single pass, with no recursion and no allocation
// (except for an error), and stops at the first limit exceeded. It needs
// only to track whether it is inside a string and whether the previous
// byte was an escaping backslash: brackets inside strings are text.
//
// scan does not validate. On invalid JSON its figures are meaningless but
// bounded, and the validity check that follows rejects the input; on valid
// JSON they are exact.
func scan(raw []byte, l Limits) (stats, *Error) {
	var (
		st      stats
		depth   int
		inStr   bool
		escaped bool
	)
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inStr {
			st.size++
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inStr = false
			}
		} else {
			if isSpace(c) {
				continue
			}
			st.size++
			switch c {
			case '"':
				inStr = true
			case '{', '[':
				if c == '{' {
					st.objects++
					if st.objects > l.MaxSubschemas {
						return st, &Error{Reason: ReasonTooManySubschemas,
							Detail: fmt.Sprintf("more than %d objects (at byte %d)", l.MaxSubschemas, i)}
					}
				}
				depth++
				if depth > st.depth {
					st.depth = depth
					if depth > l.MaxDepth {
						return st, &Error{Reason: ReasonTooDeep,
							Detail: fmt.Sprintf("depth %d > %d (at byte %d)", depth, l.MaxDepth, i)}
					}
				}
			case '}', ']':
				// Unbalanced input is invalid and rejected later; not
				// going below zero keeps the figures sane until then.
				if depth > 0 {
					depth--
				}
			}
		}
		if st.size > l.MaxBytes {
			return st, &Error{Reason: ReasonTooLarge,
				Detail: fmt.Sprintf("more than %d bytes without whitespace (at byte %d)", l.MaxBytes, i)}
		}
	}
	return st, nil
}
