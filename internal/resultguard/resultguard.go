// Package resultguard bounds and checks a tool call result returned by an
// untrusted MCP server before it reaches a model or a terminal.
//
// [Result] takes the raw JSON of a CallToolResult and returns raw JSON. It
// cuts long text blocks, drops content blocks beyond a count, removes
// structured content that is too deep or too large, checks images and
// withholds those that are disabled, oversized or not what they claim to
// be, caps audio and embedded blobs, and replaces invalid UTF-8 in text. Every
// change is reported as a [Finding] and, in the result itself, by a text
// block or marker that says what was removed, so nothing disappears
// silently. Optionally it wraps every text block in delimiters that mark it
// as untrusted data.
//
// The output is the input with only the changed parts spliced in: key order,
// whitespace, unknown fields of the result and of its blocks, and unknown
// block types survive byte for byte. When nothing changes, Result returns its
// input itself after one linear scan, which allocates nothing unless there
// are images to check.
//
// Images are checked from their headers only and never decoded: a PNG of a
// few hundred bytes can claim 100000×100000 pixels, and decoding it to check
// would be the decompression bomb the check is there to stop. Only the
// first 64 KiB of an image is ever base64-decoded.
//
// Notices never quote server-controlled strings (MIME types, URIs, names),
// so a server cannot smuggle text into a line that looks like Switchboard's.
//
// internal/jsonscan reads the result in place (see text.go).
package resultguard

import (
	"encoding/json"
	"fmt"
)

// Limits bounds a result. Fields that are zero or negative take the default
// named in their comment; [Limits.WithDefaults] applies them and [Default]
// returns them all.
type Limits struct {
	// TextBytes caps the decoded UTF-8 size of each text block and of each
	// embedded resource's text; default 100_000, at least MinTextBytes.
	// Longer text is cut at a rune boundary and ends with a marker that
	// states the original size. The marker counts toward the cap, so
	// guarded output is itself within the limits and guarding it again
	// changes nothing.
	TextBytes int
	// Blocks caps the content blocks of a result; default 64. Extra blocks
	// are dropped from the end and one text block says how many. That
	// notice block (which also carries any structured-content notice)
	// counts toward the cap.
	Blocks int
	// StructuredDepth caps the nesting depth of structuredContent, where
	// a flat object is depth 1; default 32. Deeper structured content is
	// removed and a text block says so.
	StructuredDepth int
	// StructuredBytes caps the size of structuredContent as JSON; default
	// 1 << 20. Larger structured content is removed and a text block says
	// so.
	StructuredBytes int
	// Images allows image blocks. When false every image block becomes a
	// text placeholder. WithDefaults leaves it as set, so the zero Limits
	// disables images; Default enables them.
	Images bool
	// ImageBytes caps the decoded size of an image, an audio clip or an
	// embedded resource's blob; default 5 << 20.
	ImageBytes int
	// ImageSide caps an image's width and its height in pixels; default
	// 8192.
	ImageSide int
	// ImagePixels caps width × height; default 64_000_000.
	ImagePixels int
	// ImagesPerResult caps the images kept in one result; default 4.
	// Images beyond it become placeholders. (To allow none, set Images to
	// false.)
	ImagesPerResult int
}

// MinTextBytes is the smallest effective Limits.TextBytes: a cut text must
// have room for its truncation marker.
const MinTextBytes = 256

// Default returns the default limits, with images allowed.
func Default() Limits { return Limits{Images: true}.WithDefaults() }

// WithDefaults returns l with every zero or negative field set to its
// default and TextBytes raised to MinTextBytes. It leaves Images as set,
// since false is a meaningful choice there.
func (l Limits) WithDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.TextBytes, 100_000)
	l.TextBytes = max(l.TextBytes, MinTextBytes)
	def(&l.Blocks, 64)
	def(&l.StructuredDepth, 32)
	def(&l.StructuredBytes, 1<<20)
	def(&l.ImageBytes, 5<<20)
	def(&l.ImageSide, 8192)
	def(&l.ImagePixels, 64_000_000)
	def(&l.ImagesPerResult, 4)
	return l
}

// Options are the per-call settings of [Result]. The zero value is valid.
type Options struct {
	// Server names the server in notices and delimiters. It comes from
	// Switchboard's configuration, never from the server.
	Server string
	// Wrap wraps the text of every text block and embedded text resource
	// in delimiters that mark it as untrusted data:
	//
	//	<untrusted-data-NONCE server="X">
	//	text
	//	</untrusted-data-NONCE>
	//
	// A server cannot forge the closing delimiter to end the untrusted
	// region early, because NONCE is chosen after the server has replied
	// and is different for every call. Switchboard's own notices (and a
	// truncation marker, which follows the closing delimiter) stay outside.
	// structuredContent is left as is. Wrapping changes every text block,
	// so the fast path applies only to results without text.
	Wrap bool
	// TextTotal, when not nil, is increased by the decoded size of every
	// text the guard reads (text blocks and embedded resources' text) and
	// by the size of structuredContent as JSON, before anything is cut:
	// at most what a text projection of the result holds. It lets a caller
	// decide on the result's size without decoding it.
	TextTotal *int
	// Nonce is the delimiter nonce; when empty and Wrap is set, a fresh
	// random one of 16 hex digits is drawn from crypto/rand. A caller that
	// sets it must make it unguessable and use it for one call only, or the
	// argument above no longer holds. It may contain only ASCII letters,
	// digits, '-' and '_'.
	Nonce string
}

// Finding kinds. They are stable: callers may log, count and match them.
const (
	KindTextTruncated      = "text_truncated"       // a text was cut to Limits.TextBytes
	KindBlocksDropped      = "blocks_dropped"       // blocks beyond Limits.Blocks were dropped
	KindStructuredTooDeep  = "structured_too_deep"  // structuredContent was removed
	KindStructuredTooLarge = "structured_too_large" // structuredContent was removed
	KindImageRejected      = "image_rejected"       // an image failed a check or exceeded ImagesPerResult
	KindImageWithheld      = "image_withheld"       // images are disabled
	KindInvalidUTF8        = "invalid_utf8"         // invalid UTF-8 in a text became U+FFFD
	KindMalformed          = "malformed"            // a block the guard could not vouch for was replaced
	KindAudioRejected      = "audio_rejected"       // an audio clip exceeded Limits.ImageBytes
	KindBlobRejected       = "blob_rejected"        // an embedded blob exceeded Limits.ImageBytes
)

// Finding is one thing the guard changed.
type Finding struct {
	Kind string // one of the Kind constants
	// Block is the index of the affected block in the original content
	// array; for blocks_dropped, the first dropped block; -1 for
	// structured content.
	Block int
	// Detail says what was found, for logs. It never quotes server text.
	Detail string
}

// ReasonMalformed is the Reason of an [Error].
const ReasonMalformed = "malformed"

// Error reports a result that cannot be guarded: not exactly one valid JSON
// object, a "content" that is not an array, or a repeated "content" or
// "structuredContent". Such a result must not be passed on.
type Error struct {
	Reason string // ReasonMalformed
	Offset int    // the byte of the raw result where the problem was found
	Detail string
}

func (e *Error) Error() string {
	return fmt.Sprintf("resultguard: %s result: %s (at byte %d)", e.Reason, e.Detail, e.Offset)
}

// Result guards the raw JSON of a CallToolResult under the limits l (with
// defaults applied, see [Limits.WithDefaults]) and returns the guarded JSON
// and what was changed. When nothing needs to change it returns raw itself
// (the same backing array) and no findings.
//
// Keys are matched case-insensitively, as encoding/json matches struct
// fields, so that "Content" or "TEXT" cannot slip past the guard and into a
// lenient decoder; a result repeating "content" or "structuredContent"
// (in any case) is malformed, and a block repeating a field the guard reads
// is replaced. A missing or null "content" is accepted. Blocks of types
// other than text, image, audio and resource pass through untouched.
//
// Result returns an *Error for a malformed result and a plain error for an
// invalid Options.Nonce.
func Result(raw json.RawMessage, l Limits, o Options) (json.RawMessage, []Finding, error) {
	if o.Nonce != "" && !validNonce(o.Nonce) {
		return nil, nil, fmt.Errorf("resultguard: invalid nonce %q: want ASCII letters, digits, '-' or '_'", o.Nonce)
	}
	g := guard{raw: raw, l: l.WithDefaults(), o: o}
	if err := g.walk(); err != nil {
		return nil, nil, malformed(err)
	}
	g.finish()
	if len(g.edits) == 0 {
		return raw, nil, nil
	}
	return g.apply(), g.findings, nil
}

func validNonce(s string) bool {
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return len(s) <= 64
}
