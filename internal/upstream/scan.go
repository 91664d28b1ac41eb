package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
)

// errNotObject: a result that is not a JSON object.
var errNotObject = errors.New("result is not a JSON object")

// isErrorFlag reads the top-level "isError" member of a tool result
// without decoding the rest: a result can be megabytes of content, and the
// flag is all the host needs from it. raw has already been parsed whole
// at the capture point, so it is valid JSON; the scanner still fails
// safely on anything it does not expect. A key written with escapes
// (legal, never seen in practice) sends it to encoding/json, which
// decodes keys exactly as go-sdk's decoder does.
func isErrorFlag(raw []byte) (bool, error) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false, errNotObject
	}
	i++
	flag := false
	for {
		i = skipSpace(raw, i)
		if i < len(raw) && raw[i] == '}' {
			return flag, nil
		}
		if i >= len(raw) || raw[i] != '"' {
			return false, errNotObject
		}
		end := stringEnd(raw, i)
		if end < 0 {
			return false, errNotObject
		}
		key := raw[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return slowIsError(raw)
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return false, errNotObject
		}
		i = skipSpace(raw, i+1)
		vend := valueEnd(raw, i)
		if vend < 0 {
			return false, errNotObject
		}
		if string(key) == "isError" {
			// Last one wins, as in encoding/json.
			switch v := string(raw[i:vend]); v {
			case "true":
				flag = true
			case "false", "null":
				flag = false
			default:
				return false, errors.New(`"isError" is not a boolean`)
			}
		}
		i = skipSpace(raw, vend)
		if i < len(raw) && raw[i] == ',' {
			i++
		}
	}
}

func slowIsError(raw []byte) (bool, error) {
	var m map[string]json.RawMessage // exact keys; the last duplicate wins
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return false, errNotObject
	}
	v, ok := m["isError"]
	if !ok || string(v) == "null" {
		return false, nil
	}
	var flag bool
	if json.Unmarshal(v, &flag) != nil {
		return false, errors.New(`"isError" is not a boolean`)
	}
	return flag, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i] ('"'),
// or -1.
func stringEnd(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexAny(b[i:], `"\`)
		if j < 0 {
			return -1
		}
		i += j
		if b[i] == '"' {
			return i + 1
		}
		i += 2 // an escape: skip the backslash and the escaped byte
		if i > len(b) {
			return -1
		}
	}
}

// valueEnd returns the index just past the JSON value starting at b[i], or
// -1. Containers are skipped by counting brackets outside strings.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				if i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	// A literal or a number: up to the next delimiter.
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
