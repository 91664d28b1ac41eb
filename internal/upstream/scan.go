package upstream

import (
	"errors"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// errNotObject: a result that is not a JSON object.
var errNotObject = errors.New("result is not a JSON object")

// isErrorFlag reads the top-level "isError" member of a tool result
// without decoding the rest: a result can be megabytes of content, and the
// flag is all the host needs from it. Keys are matched exactly and decoded
// as go-sdk's decoder decodes them (escapes included); the last duplicate
// wins, as in encoding/json. raw has already been parsed whole at the
// capture point, so it is valid JSON; anything else is refused.
func isErrorFlag(raw []byte) (bool, error) {
	i := jsonscan.SkipSpace(raw, 0)
	flag := false
	var bad bool // the last "isError" seen is not a boolean or null
	end, err := jsonscan.Object(raw, i, func(m jsonscan.Member) (int, error) {
		end, _, err := jsonscan.Skip(raw, m.Value, 1)
		if err == nil && string(m.Key) == "isError" {
			switch string(raw[m.Value:end]) {
			case "true":
				flag, bad = true, false
			case "false", "null":
				flag, bad = false, false
			default:
				bad = true
			}
		}
		return end, err
	})
	switch {
	case err != nil || jsonscan.SkipSpace(raw, end) != len(raw):
		return false, errNotObject
	case bad:
		return false, errors.New(`"isError" is not a boolean`)
	}
	return flag, nil
}
