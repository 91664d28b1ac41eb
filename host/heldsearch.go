package host

import (
	"slices"
	"strings"
	"unicode"

	"github.com/switchboard-mcp/switchboard/internal/names"
)

// HeldStatus is what tool search says of a tool held for review (for an
// injection pattern, or because its definition changed): its names are
// shown, its definition never, since it may be the poison.
const HeldStatus = "held for review"

// heldMatches returns up to k tools held for review in view v (of server,
// unless it is "") whose name or server a word of query names, by
// model-facing name and server only: no title, description or schema. A
// held tool is not indexed (its description may be written to match every
// request), so only its names can match.
func (h *Host) heldMatches(v *View, query string, k int, server string) []Tool {
	want := map[string]bool{}
	for _, w := range nameWords(query) {
		if len(w) >= 3 {
			want[w] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	var out []Tool
	comp := h.comp.Load()
	scope := v.scope()
	for _, sc := range comp.cfg.Servers {
		if !scope.hasServer(sc.Name) || (server != "" && sc.Name != server) {
			continue
		}
		sv := comp.servers[sc.Name].view()
		held := slices.Compact(slices.Sorted(slices.Values(slices.Concat(sv.held, sv.injHeld))))
		for _, tool := range held {
			if tool == "" || len(out) == k || !scope.hasToolID(names.ID{Server: sc.Name, Name: tool}) {
				continue // "" is the instructions
			}
			match := want[strings.ToLower(sc.Name)]
			for _, w := range nameWords(tool) {
				match = match || want[w]
			}
			if match {
				id := names.ID{Server: sc.Name, Name: tool}
				out = append(out, Tool{Name: names.ModelName(names.Prefix(sc.Prefix), tool), ID: id.String(), Server: sc.Name, Held: true})
			}
		}
	}
	return out
}

// nameWords splits s into lower-case words at every character that is not
// a letter or digit, and between a lower-case letter and an upper-case one
// (createIssue: create, issue).
func nameWords(s string) []string {
	var words []string
	var b strings.Builder
	prevLower := false
	flush := func() {
		if b.Len() > 0 {
			words = append(words, b.String())
			b.Reset()
		}
	}
	for _, r := range s {
		switch {
		case unicode.IsUpper(r):
			if prevLower {
				flush()
			}
			b.WriteRune(unicode.ToLower(r))
			prevLower = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
			prevLower = unicode.IsLower(r)
		default:
			flush()
			prevLower = false
		}
	}
	flush()
	return words
}
