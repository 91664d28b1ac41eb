package host

import "github.com/switchboard-mcp/switchboard/internal/ingest"

// The kinds of a [Finding] (its Kind), stable across versions, with the
// severity each has unless the finder knew better (a flagged tool that a
// person approved is SeverityInfo).
const (
	// Warn: an entry of a list the SDK could not decode at all, skipped.
	KindListSkipped = ingest.KindListSkipped
	// Warn: a name with invisible or control characters, or none.
	KindNameRejected = ingest.KindNameRejected
	// Info: a second entry with the same name within the server, skipped.
	KindDuplicate = ingest.KindDuplicate
	// Warn: an input or output schema failed the checks; the tool is
	// withheld.
	KindSchema = ingest.KindSchema
	// Info: invisible or control characters were stripped from text.
	KindSanitised = ingest.KindSanitised
	// Info: text was cut to its cap.
	KindTruncated = ingest.KindTruncated
	// Warn: tools beyond the server's cap (maxToolsPerServer) were dropped.
	KindTooMany = ingest.KindTooMany
	// Warn: a tool outside the server's expectedTools.
	KindUnexpected = ingest.KindUnexpected
	// Warn: an entry not registered (Detail says why).
	KindWithheld = ingest.KindWithheld
	// Warn: a tool's or prompt's text matches an injection pattern.
	KindFlagged = ingest.KindFlagged
	// Info: the behavioural hints (annotations) of a server that is not
	// trusted were dropped.
	KindAnnotations = ingest.KindAnnotations
	// Warn: another server offers a tool of the same name.
	KindShadowing = ingest.KindShadowing
	// High: a tool held back until a person approves it, its metadata
	// matching an injection pattern on a server that is not trusted.
	KindHeld = ingest.KindHeld
	// Info: a list the server declared answered "method not found" and is
	// taken as empty.
	KindListMissing = ingest.KindListMissing
	// Warn: a list other than tools answered an error and is taken as
	// empty until the next discovery.
	KindListFailed = ingest.KindListFailed
	// Info: a stdio server wrote lines on stdout that are not JSON-RPC;
	// they were skipped and kept with its stderr.
	KindStdoutStray = ingest.KindStdoutStray
	// High: a server held, not started, until a person approves its launch
	// (what it runs changed, or it appeared without being added).
	KindLaunchHeld = "launch_held"
	// Warn: a server started under security.onLaunchChange "warn" whose
	// launch would have been held.
	KindLaunchUnapproved = "launch_unapproved"
)
