// Package names turns upstream identities into Switchboard's two kinds of
// names and back.
//
// A canonical ID is "<server>:<name>", where name is a tool name, a prompt
// name or a resource URI. Server names may themselves contain colons, so an
// ID is resolved against the set of configured servers: the longest server
// name that prefixes the ID wins, tried from the rightmost colon, and exactly
// one layer is stripped (with servers "gh" and "gh:sub", "gh:sub:x" is tool
// "x" of "gh:sub"; "gh:x:y" is tool "x:y" of "gh").
//
// A model-facing tool name matches ^[a-zA-Z0-9_-]{1,64}$, the limit that
// model APIs impose. It is "<prefix>__<tool>" when that is already valid
// and unambiguous, and otherwise a sanitised, truncated form followed by
// "__" and ten hex digits of a SHA-256 over the prefix and the tool name.
// The scheme is a pure function of (prefix, tool), so names are stable
// across restarts and config order; [Assign] resolves the rare collisions
// between servers deterministically.
//
// [Fit] and [Hash] are the one rule that fits a name with a hash suffix:
// model-facing names here, server prefixes in config and provider-facing
// names in internal/profile, each with its own sanitising and length.
//
// This package imports nothing from Switchboard.
package names

import (
	"regexp"
	"sort"
	"strings"
)

// MaxLen is the longest model-facing name, the limit of the major model APIs.
const MaxLen = 64

// Sep separates the prefix from the tool name in a model-facing name.
const Sep = "__"

// hashLen is the number of hex digits in a hash suffix (40 bits).
const hashLen = 10

// Valid matches every model-facing name.
var Valid = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// hashed matches the tail of a hashed name; a clean name never has it.
var hashed = regexp.MustCompile(`__[0-9a-f]{10,}$`)

// ID is a parsed canonical ID.
type ID struct {
	Server string // configured server name; may contain colons
	Name   string // tool or prompt name, or resource URI, as the server spells it
}

// String returns "<server>:<name>".
func (id ID) String() string { return id.Server + ":" + id.Name }

// Resolve splits a canonical ID using the set of known server names,
// taking the longest server prefix (tried from the rightmost colon). It
// reports false when no known server prefixes s.
func Resolve(s string, known func(server string) bool) (ID, bool) {
	for i := strings.LastIndexByte(s, ':'); i >= 0; i = strings.LastIndexByte(s[:i], ':') {
		if known(s[:i]) {
			return ID{Server: s[:i], Name: s[i+1:]}, true
		}
	}
	return ID{}, false
}

func allowed(r byte) bool {
	return r == '_' || r == '-' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
}

// sanitize replaces every byte outside [A-Za-z0-9_-] with '_'; it reports
// whether the input was already clean.
func sanitize(s string) (string, bool) {
	clean := true
	b := []byte(s)
	for i := range b {
		if !allowed(b[i]) {
			b[i] = '_'
			clean = false
		}
	}
	return string(b), clean
}

// Prefix derives a valid prefix from a server name: bytes outside
// [A-Za-z0-9_-] become '_', runs of '_' shrink to one, and leading and
// trailing '_' are trimmed, so the result never contains Sep. Different
// servers may derive the same prefix; [Assign] keeps their names apart.
func Prefix(server string) string {
	s, _ := sanitize(server)
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	s = strings.Trim(s, "_")
	if len(s) > 32 {
		s = strings.TrimRight(s[:32], "_")
	}
	return s
}

// cleanPrefix reports whether p can stand before Sep without making the
// split ambiguous: the first "__" of "<p>__<tool>" must be the separator.
func cleanPrefix(p string) bool {
	_, ok := sanitize(p)
	return ok && !strings.Contains(p, "__") && !strings.HasSuffix(p, "_")
}

// ModelName returns the model-facing name of tool on a server whose prefix
// is prefix (empty for pass-through names). For a fixed clean prefix it is
// injective in tool up to a 40-bit hash collision, and clean names never
// take the shape of hashed ones.
func ModelName(prefix, tool string) string {
	name := tool
	if prefix != "" {
		name = prefix + Sep + tool
	}
	if tool != "" && len(name) <= MaxLen && (prefix == "" || cleanPrefix(prefix)) {
		if _, ok := sanitize(tool); ok && !hashed.MatchString(name) {
			return name
		}
	}
	return withHash(name, hashOf(prefix, tool, hashLen))
}

func withHash(name, h string) string {
	body, _ := sanitize(name)
	return Fit(body, MaxLen, Sep, h, false)
}

// hashOf hashes an unambiguous encoding of its parts (each length-prefixed
// by a NUL-terminated decimal count) and returns n hex digits.
func hashOf(a, b string, n int) string {
	var enc strings.Builder
	for _, s := range []string{a, b} {
		enc.WriteString(itoa(len(s)))
		enc.WriteByte(0)
		enc.WriteString(s)
	}
	return Hash(enc.String(), n)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// Entry is one tool to be named by Assign.
type Entry struct {
	ID     ID     // canonical identity
	Prefix string // the server's prefix ("" for pass-through)
}

// Collision records model-facing names that two or more tools wanted.
type Collision struct {
	Name string // the contested name
	IDs  []ID   // the tools that wanted it, sorted by canonical ID
}

// Assign names every entry, unique across the set, each matching Valid.
// Entries whose ModelName is unique keep it. Entries that share one (two
// servers with the same prefix, a pass-through server shadowing another)
// all get a name hashed from their canonical ID instead, so no server wins
// by configuration order; the contested names are returned as collisions
// for the caller to report. The result depends only on the set of entries.
func Assign(entries []Entry) (map[ID]string, []Collision) {
	out := make(map[ID]string, len(entries))
	prefixes := make(map[ID]string, len(entries))
	byName := make(map[string][]ID, len(entries))
	for _, e := range entries {
		if _, dup := out[e.ID]; dup {
			continue
		}
		prefixes[e.ID] = e.Prefix
		n := ModelName(e.Prefix, e.ID.Name)
		out[e.ID] = n
		byName[n] = append(byName[n], e.ID)
	}
	var collisions []Collision
	for n, ids := range byName {
		if len(ids) > 1 {
			sortIDs(ids)
			collisions = append(collisions, Collision{Name: n, IDs: ids})
		}
	}
	sort.Slice(collisions, func(i, j int) bool { return collisions[i].Name < collisions[j].Name })
	if len(collisions) == 0 {
		return out, nil
	}
	// Rename every contested entry from its canonical ID, lengthening the
	// hash until the whole set is unique (in practice at the first step).
	taken := make(map[string]bool, len(out))
	contested := map[ID]bool{}
	for _, c := range collisions {
		for _, id := range c.IDs {
			contested[id] = true
		}
	}
	for id, n := range out {
		if !contested[id] {
			taken[n] = true
		}
	}
	ids := make([]ID, 0, len(contested))
	for id := range contested {
		ids = append(ids, id)
	}
	sortIDs(ids)
	for _, id := range ids {
		body := id.Name
		if p := prefixes[id]; p != "" {
			body = p + Sep + id.Name
		}
		// A 48-bit suffix from the canonical ID; longer ones only on a
		// collision of those, then a counter, which cannot fail.
		name := ""
		for n := hashLen + 2; n <= 32; n += 4 {
			if name = withHash(body, hashOf(id.Server, id.Name, n)); !taken[name] {
				break
			}
		}
		for i := 2; taken[name]; i++ {
			name = withHash(body, hashOf(id.Server, id.Name+"\x00"+itoa(i), 32))
		}
		taken[name] = true
		out[id] = name
	}
	return out, collisions
}

func sortIDs(ids []ID) {
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].Server != ids[j].Server {
			return ids[i].Server < ids[j].Server
		}
		return ids[i].Name < ids[j].Name
	})
}
