package host

import (
	"encoding/json"
	"errors"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// ErrNoStructuredContent is what [Result.DecodeStructured] returns for a
// result without structured content.
var ErrNoStructuredContent = errors.New("the result has no structured content")

// Structured returns the result's structured content (structuredContent)
// as the server sent it, and whether it has one: a tool that declares an
// output schema sends its result there, checked against the schema. A
// member given twice counts as encoding/json counts it: the last one.
func (r *Result) Structured() (json.RawMessage, bool) {
	var out json.RawMessage
	d := r.Raw
	i := jsonscan.SkipSpace(d, 0)
	_, err := jsonscan.Object(d, i, func(m jsonscan.Member) (int, error) {
		end, _, err := jsonscan.Skip(d, m.Value, 1)
		if err == nil && string(m.Key) == "structuredContent" {
			out = json.RawMessage(d[m.Value:end])
			if string(out) == "null" {
				out = nil
			}
		}
		return end, err
	})
	if err != nil || out == nil {
		return nil, false
	}
	return out, true
}

// DecodeStructured decodes the result's structured content into v, as
// json.Unmarshal does; ErrNoStructuredContent when it has none.
func (r *Result) DecodeStructured(v any) error {
	raw, ok := r.Structured()
	if !ok {
		return ErrNoStructuredContent
	}
	return json.Unmarshal(raw, v)
}
