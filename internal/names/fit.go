package names

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Hash returns the first n (at most 64) lower-case hex digits of the
// SHA-256 of s: the suffix by which a fitted name stays apart from the
// others.
func Hash(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:min(max(n, 0), 2*sha256.Size)]
}

// Fit is the one rule by which Switchboard fits a name that does not fit
// as it is (model-facing tool names, server prefixes, provider-facing
// names): body, already sanitised by the caller's own rule, cut short
// so that sep and suffix (a [Hash]) fit within limit bytes, followed by
// sep and suffix. With trim, the '_' that a cut leaves at the end of body
// is dropped, for names that must not end in '_' before sep.
func Fit(body string, limit int, sep, suffix string, trim bool) string {
	if room := max(limit-len(sep)-len(suffix), 0); len(body) > room {
		body = body[:room]
		if trim {
			body = strings.TrimRight(body, "_")
		}
	}
	return body + sep + suffix
}
