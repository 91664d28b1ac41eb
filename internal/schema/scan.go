package schema

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// scan measures raw in a single pass (jsonscan.Measure: no recursion, no
// allocation except for an error) and stops at the first limit exceeded:
// depth of objects and arrays ({} is 1, a scalar 0), number of objects,
// and compact size (all but whitespace outside strings).
//
// scan does not validate. On invalid JSON its figures are meaningless but
// bounded, and the validity check that follows rejects the input; on valid
// JSON they are exact.
func scan(raw []byte, l Limits) (jsonscan.Stats, *Error) {
	st, over, at := jsonscan.Measure(raw, jsonscan.Stats{Depth: l.MaxDepth, Objects: l.MaxSubschemas, Size: l.MaxBytes})
	switch over {
	case jsonscan.OverObjects:
		return st, &Error{Reason: ReasonTooManySubschemas,
			Detail: fmt.Sprintf("more than %d objects (at byte %d)", l.MaxSubschemas, at)}
	case jsonscan.OverDepth:
		return st, &Error{Reason: ReasonTooDeep,
			Detail: fmt.Sprintf("depth %d > %d (at byte %d)", st.Depth, l.MaxDepth, at)}
	case jsonscan.OverSize:
		return st, &Error{Reason: ReasonTooLarge,
			Detail: fmt.Sprintf("more than %d bytes without whitespace (at byte %d)", l.MaxBytes, at)}
	}
	return st, nil
}
