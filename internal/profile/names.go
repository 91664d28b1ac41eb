package profile

import (
	"sort"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/names"
)

// nameRule is what a provider accepts as a name: which bytes, which first
// byte, and how many. All the rules in this package are ASCII-only, so a
// name that fits is as many bytes as characters.
type nameRule struct {
	max   int
	ok    func(c byte) bool // any position
	first func(c byte) bool // first position; nil means ok
}

func (r nameRule) valid(s string) bool {
	if len(s) == 0 || len(s) > r.max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !r.ok(s[i]) {
			return false
		}
	}
	return r.first == nil || r.first(s[0])
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isLetterOrUnderscore(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

var (
	// ruleOpenAI and ruleAnthropic: ^[a-zA-Z0-9_-]{1,64}$ (see doc.go for
	// the sources).
	ruleOpenAI    = nameRule{max: 64, ok: func(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }}
	ruleAnthropic = ruleOpenAI
	// ruleGemini is the intersection of what the Gemini API and Vertex AI
	// have documented for a function name: it starts with a letter or an
	// underscore, then letters, digits, underscores or dashes (dots and
	// colons are accepted by some versions only), at most 63 characters
	// (the older limit; newer versions say 64 or 128).
	ruleGemini = nameRule{max: 63, ok: func(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }, first: isLetterOrUnderscore}
	// ruleGeminiParam is what Vertex AI documents for parameter names:
	// they start with a letter or an underscore and contain only letters,
	// digits and underscores, at most 64 characters.
	ruleGeminiParam = nameRule{max: 64, ok: func(c byte) bool { return isAlnum(c) || c == '_' }, first: isLetterOrUnderscore}
)

// hashLen is the number of hex digits of SHA-256 added to a name that had
// to change. 8 digits (32 bits) make an accidental clash between two
// changed names of one list vanishingly rare; a clash is still resolved,
// by taking more digits.
const hashLen = 8

// sanitize maps s onto r: every byte that r does not accept becomes '_'
// (a multi-byte character becomes one '_'), runs of '_' that this creates
// collapse into one, and a name that must not start with its first byte
// gets a leading '_'. It does not shorten.
func sanitize(s string, r nameRule) string {
	var b strings.Builder
	lastRepl := false
	for _, c := range s {
		if c < 0x80 && r.ok(byte(c)) {
			b.WriteByte(byte(c))
			lastRepl = false
			continue
		}
		if !lastRepl {
			b.WriteByte('_')
		}
		lastRepl = true
	}
	out := b.String()
	if out == "" {
		out = "_"
	}
	if r.first != nil && !r.first(out[0]) {
		out = "_" + out
	}
	return out
}

// fitted returns the name that original s gets under r when it does not
// fit as it is, by names.Fit: the sanitised name, cut so that "_" and n
// hex digits of SHA-256(s) fit within r.max, then that suffix.
func fitted(s string, r nameRule, n int) string {
	return names.Fit(sanitize(s, r), r.max, "_", names.Hash(s, n), false)
}

// assignNames gives each of the distinct names in origs a name that fits r,
// unique within the set, and returns original → new.
//
// A name that already fits keeps itself: those are placed first, so an
// unchanged name never loses its name to a changed one. The others are
// placed in sorted order, so the result depends only on the set of names,
// not on their order. With hashAlways (tool names), a changed name is
// [fitted] with hashLen digits, or more when that is taken: because the
// hash is of the whole original, two names that sanitise alike ("a.b" and
// "a:b") or share a long prefix get different names, and a tool keeps its
// name when other tools come and go. Without it (property names, unique
// only within one object), the sanitised name is taken as it is when it
// is free, for the model's sake, and fitted only on a clash.
func assignNames(origs []string, r nameRule, hashAlways bool) map[string]string {
	out := make(map[string]string, len(origs))
	taken := make(map[string]bool, len(origs))
	var changed []string
	for _, s := range origs {
		if r.valid(s) {
			out[s] = s
			taken[s] = true
		} else {
			changed = append(changed, s)
		}
	}
	sort.Strings(changed)
	for _, s := range changed {
		if !hashAlways {
			if c := sanitize(s, r); len(c) <= r.max && !taken[c] {
				out[s] = c
				taken[c] = true
				continue
			}
		}
		for n := hashLen; ; n++ {
			c := fitted(s, r, n)
			if !taken[c] || n >= r.max-2 {
				// Reached only if dozens of hex digits of SHA-256 collide,
				// which does not happen; stop rather than loop forever.
				out[s] = c
				taken[c] = true
				break
			}
		}
	}
	return out
}

// NamespaceName is the name of an OpenAI namespace for a server's tools:
// the server's name when it fits the Responses API's function-name rule,
// else fitted to it with a hash of the whole name, as tool names are.
func NamespaceName(server string) string {
	if ruleOpenAI.valid(server) {
		return server
	}
	return fitted(server, ruleOpenAI, hashLen)
}
