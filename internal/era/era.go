// Package era tells the two eras of the MCP protocol apart: the legacy,
// session-based one (initialize, 2024-11-05 to 2025-11-25) and the modern,
// sessionless one (every request carries its version, 2026-07-28 on).
//
// Protocol versions are dates, so they compare as strings; the boundary is
// the comparison go-sdk itself makes (a request is of the new protocol when
// its version is at least 2026-07-28), so that Switchboard and go-sdk's
// handlers always agree on which era a version is in:
//
//   - an unknown version after the boundary ("2027-01-01") is Modern: the
//     sessionless era goes on until a later specification says otherwise,
//     and whether that version is served is the server's answer (-32022
//     with the supported list), not the era's;
//   - an unknown version before it ("2024-01-01") is Legacy, and so is
//     anything else that sorts before it; KnownLegacy tells it from the
//     four versions that exist, so that an HTTP endpoint can refuse it as
//     unknown (-32022) instead of handing it to a session;
//   - "" names no version: neither Modern nor Legacy. A request without a
//     version belongs to a legacy session (or is its initialize).
package era

import "slices"

const (
	// Sessionless is the first protocol version of the modern era
	// (SEP-2575): requests carry their version, there is no session.
	Sessionless = "2026-07-28"
	// LatestLegacy is the newest version of the legacy era, the one pinned
	// when a server does not answer the modern probe.
	LatestLegacy = "2025-11-25"
	// Header is the HTTP header that names a request's protocol version.
	Header = "Mcp-Protocol-Version"
)

// legacy lists the known versions of the legacy era, newest first.
var legacy = []string{LatestLegacy, "2025-06-18", "2025-03-26", "2024-11-05"}

// LegacyVersions returns the known versions of the legacy era, newest
// first.
func LegacyVersions() []string { return slices.Clone(legacy) }

// Modern reports whether v is a version of the sessionless era: v sorts at
// or after Sessionless.
func Modern(v string) bool { return v >= Sessionless }

// Legacy reports whether v is a version of the session-based era: it is
// not empty and sorts before Sessionless.
func Legacy(v string) bool { return v != "" && v < Sessionless }

// KnownLegacy reports whether v is one of LegacyVersions.
func KnownLegacy(v string) bool { return slices.Contains(legacy, v) }

// Requested returns the version a request names: its _meta protocol
// version when it has one, else its Mcp-Protocol-Version header (go-sdk
// rejects a request where the two differ).
func Requested(meta, header string) string {
	if meta != "" {
		return meta
	}
	return header
}
