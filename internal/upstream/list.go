package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's list results are untrusted input too. go-sdk decodes a page
// as a whole, so one entry it cannot decode (tools: [42], a tool whose
// name is a number) would fail the server's whole listing. The capture
// point therefore hands each list page to a listFilter first, which drops
// every entry go-sdk could not decode, and says so.

// listKeys are the list members of the list results, with a decoder that
// checks one entry the way go-sdk will decode it.
var listKeys = map[string]func(json.RawMessage) error{
	"tools":             func(b json.RawMessage) error { return json.Unmarshal(b, new(mcp.Tool)) },
	"prompts":           func(b json.RawMessage) error { return json.Unmarshal(b, new(mcp.Prompt)) },
	"resources":         func(b json.RawMessage) error { return json.Unmarshal(b, new(mcp.Resource)) },
	"resourceTemplates": func(b json.RawMessage) error { return json.Unmarshal(b, new(mcp.ResourceTemplate)) },
}

// isListMethod reports whether method returns a list the filter checks.
func isListMethod(method string) bool {
	switch method {
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		return true
	}
	return false
}

// listFilter collects what it dropped from a listing's pages.
type listFilter struct {
	mu    sync.Mutex
	notes []string
}

func (f *listFilter) note(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.notes) < 100 {
		f.notes = append(f.notes, fmt.Sprintf(format, args...))
	}
}

func (f *listFilter) dropped() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.notes...)
}

// filter returns the page with undecodable entries removed. A page that is
// not an object, or has no list member, is returned as it is: go-sdk
// reports that itself.
func (f *listFilter) filter(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw
	}
	changed := false
	for key, check := range listKeys {
		v, ok := m[key]
		if !ok {
			continue
		}
		var entries []json.RawMessage
		if json.Unmarshal(v, &entries) != nil {
			continue // not an array: go-sdk fails the page, as it should
		}
		kept := entries[:0]
		for i, e := range entries {
			t := bytes.TrimSpace(e)
			switch {
			case len(t) == 0 || t[0] != '{':
				f.note("%s[%d] is %s, not an object: skipped", key, i, kind(t))
			case check(t) != nil:
				f.note("%s[%d] cannot be decoded (%v): skipped", key, i, check(t))
			default:
				kept = append(kept, e)
				continue
			}
			changed = true
		}
		if changed {
			b, err := json.Marshal(kept)
			if err != nil {
				return raw
			}
			m[key] = b
		}
	}
	if !changed {
		return raw
	}
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

// kind names the JSON type of a value, for messages.
func kind(v []byte) string {
	if len(v) == 0 {
		return "empty"
	}
	switch v[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case '[':
		return "an array"
	}
	return "a number"
}
