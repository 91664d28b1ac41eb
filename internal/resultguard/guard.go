package resultguard

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// guard holds the state of one Result call. The walk validates the whole
// result and guards blocks as it meets them; finish then decides what the
// walk could not know in advance (how many blocks to keep, whether to
// remove structured content); apply splices the edits into raw.
type guard struct {
	raw   []byte
	l     Limits
	o     Options
	nonce string // drawn when the first text is wrapped

	edits    []edit
	findings []Finding
	images   int // images kept so far

	content    member
	contentNil bool // "content" is null
	blocks     int  // elements of the content array
	lastEnd    int  // end of the last element
	closePos   int  // index of the array's ']'
	// marks records, for each of the first l.Blocks blocks, where it is
	// and how much guarding had been done before it, so that finish can
	// undo the guarding of blocks it drops. See mark.
	marks     [8]blockMark
	moreMarks []blockMark

	structured member
	sDepth     int
}

// member locates a member of the result object.
type member struct {
	found              bool
	keyStart           int // the key's opening quote
	valStart, valEnd   int
	prevEnd, nextStart int // previous member's value end, next member's key start; -1 if none
}

type blockMark struct {
	start, end      int
	edits, findings int
}

// mark returns the mark of block n, which walkContent visits in order. The
// first few live in the guard itself: a slice of its own array would make
// the guard escape to the heap, and the fast path allocate.
func (g *guard) mark(n int) *blockMark {
	if n < len(g.marks) {
		return &g.marks[n]
	}
	if n-len(g.marks) == len(g.moreMarks) {
		g.moreMarks = append(g.moreMarks, blockMark{})
	}
	return &g.moreMarks[n-len(g.marks)]
}

// edit replaces raw[start:end] with text.
type edit struct {
	start, end int
	text       []byte
}

func (g *guard) walk() error {
	d := g.raw
	i := jsonscan.SkipSpace(d, 0)
	if i >= len(d) || d[i] != '{' {
		return errAt(i, "not a JSON object")
	}
	prevEnd := -1
	var last *member // the previous member, if it is one we locate
	end, err := jsonscan.Object(d, i, func(m jsonscan.Member) (int, error) {
		if last != nil {
			last.nextStart = m.KeyStart
			last = nil
		}
		var end int
		var err error
		switch {
		case keyIs(m.Key, "content"):
			if g.content.found {
				return m.KeyStart, errAt(m.KeyStart, `repeated "content"`)
			}
			end, err = g.walkContent(m.Value)
			g.content = member{true, m.KeyStart, m.Value, end, prevEnd, -1}
			last = &g.content
		case keyIs(m.Key, "structuredContent"):
			if g.structured.found {
				return m.KeyStart, errAt(m.KeyStart, `repeated "structuredContent"`)
			}
			end, g.sDepth, err = jsonscan.Skip(d, m.Value, 1)
			g.structured = member{true, m.KeyStart, m.Value, end, prevEnd, -1}
			if g.o.TextTotal != nil {
				*g.o.TextTotal += end - m.Value
			}
			last = &g.structured
		default:
			end, _, err = jsonscan.Skip(d, m.Value, 1)
		}
		prevEnd = end
		return end, err
	})
	if err != nil {
		return err
	}
	if end = jsonscan.SkipSpace(d, end); end != len(d) {
		return errAt(end, "data after the result object")
	}
	return nil
}

// walkContent validates the content array at raw[i], guarding the first
// l.Blocks blocks and skipping the rest, which will be dropped.
func (g *guard) walkContent(i int) (int, error) {
	d := g.raw
	if d[i] == 'n' {
		g.contentNil = true
		return jsonscan.ScanLiteral(d, i, "null")
	}
	if d[i] != '[' {
		return i, errAt(i, `"content" is not an array`)
	}
	end, err := jsonscan.Array(d, i, func(n, start int) (int, error) {
		var end int
		var err error
		if n < g.l.Blocks {
			*g.mark(n) = blockMark{start: start, edits: len(g.edits), findings: len(g.findings)}
			end, err = g.block(n, start)
			g.mark(n).end = end
		} else {
			end, _, err = jsonscan.Skip(d, start, 2)
		}
		if err == nil {
			g.blocks, g.lastEnd = n+1, end
		}
		return end, err
	})
	g.closePos = end - 1 // the ']', when there is no error
	return end, err
}

// The block fields the guard reads. Keys match them case-insensitively.
const (
	fType = iota
	fText
	fData
	fMIME
	fResource
	fBlob
	nFields
)

var fieldNames = [nFields]string{"type", "text", "data", "mimeType", "resource", "blob"}

// keyIs reports whether key matches name as encoding/json matches a struct
// field, case-insensitively with Unicode folding (so "ſtructuredContent"
// matches too). Names are ASCII, and a non-ASCII rune that folds to ASCII is
// longer than it, so a shorter key never matches: checking that first keeps
// the fast path fast.
func keyIs(key []byte, name string) bool {
	return len(key) >= len(name) && bytes.EqualFold(key, []byte(name))
}

type field struct {
	present    bool
	start, end int // the value
	isString   bool
	info       jsonscan.StringInfo // when isString
}

type fields struct {
	v   [nFields]field
	dup bool // a field appeared twice
}

// collect walks the object at d[i], inside base containers, recording the
// fields the guard reads. When res is not nil a "resource" object is walked
// into res in the same pass, so that no byte is scanned twice.
func collect(d []byte, i, base int, fs, res *fields) (int, error) {
	return jsonscan.Object(d, i, func(m jsonscan.Member) (int, error) {
		f := -1
		for j, name := range fieldNames {
			if keyIs(m.Key, name) {
				f = j
				break
			}
		}
		v := m.Value
		if f < 0 {
			end, _, err := jsonscan.Skip(d, v, base)
			return end, err
		}
		fl := &fs.v[f]
		fs.dup = fs.dup || fl.present
		*fl = field{present: true, start: v}
		var err error
		switch {
		case d[v] == '"':
			fl.isString = true
			fl.end, fl.info, err = jsonscan.ScanString(d, v)
		case f == fResource && res != nil && d[v] == '{':
			fl.end, err = collect(d, v, base+1, res, nil)
		default:
			fl.end, _, err = jsonscan.Skip(d, v, base)
		}
		return fl.end, err
	})
}

// block validates and guards the content block at raw[i], index n.
func (g *guard) block(n, i int) (int, error) {
	d := g.raw
	if d[i] != '{' {
		end, _, err := jsonscan.Skip(d, i, 2)
		if err == nil {
			g.malformed(n, i, end, "content block is not an object")
		}
		return end, err
	}
	var fs, res fields
	end, err := collect(d, i, 3, &fs, &res)
	if err != nil {
		return end, err
	}
	t := fs.v[fType]
	if !t.present {
		return end, nil // not a block type the guard knows
	}
	if !t.isString {
		g.malformed(n, i, end, `"type" is not a string`)
		return end, nil
	}
	typ := g.body(t)
	switch string(typ) {
	case "text", "image", "audio", "resource":
	default:
		return end, nil // unknown types, and resource_link, pass through
	}
	if fs.dup {
		g.malformed(n, i, end, "content block repeats a field")
		return end, nil
	}
	switch string(typ) {
	case "text":
		if f := fs.v[fText]; f.present {
			if !f.isString {
				g.malformed(n, i, end, `"text" is not a string`)
				break
			}
			g.text(n, f)
		}
	case "image":
		g.image(n, i, end, &fs)
	case "audio":
		g.media(n, i, end, fs.v[fData], KindAudioRejected, "audio")
	case "resource":
		r := fs.v[fResource]
		switch {
		case !r.present:
		case d[r.start] != '{':
			g.malformed(n, i, end, `"resource" is not an object`)
		case res.dup:
			g.malformed(n, i, end, "embedded resource repeats a field")
		case res.v[fText].present && !res.v[fText].isString:
			g.malformed(n, i, end, `embedded resource "text" is not a string`)
		default:
			if !g.media(n, i, end, res.v[fBlob], KindBlobRejected, "embedded resource blob") {
				break
			}
			if f := res.v[fText]; f.present {
				g.text(n, f)
			}
		}
	}
	return end, nil
}

// body returns the decoded value of a string field, without copying when it
// has no escapes or invalid UTF-8.
func (g *guard) body(f field) []byte {
	b := g.raw[f.start+1 : f.end-1]
	if !f.info.Plain() {
		return unquote(b, math.MaxInt)
	}
	return b
}

// text guards the text value f of block n: it replaces invalid UTF-8, cuts
// what is over the limit and wraps it when asked.
func (g *guard) text(n int, f field) {
	if g.o.TextTotal != nil {
		*g.o.TextTotal += f.info.Len
	}
	over := f.info.Len > g.l.TextBytes
	if !over && !f.info.Invalid && !g.o.Wrap {
		return
	}
	limit := math.MaxInt
	if over {
		// The marker's numbers are at most as long as these, so the cut
		// text plus its marker fits in TextBytes.
		limit = g.l.TextBytes - len(truncationMarker(f.info.Len, g.l.TextBytes))
	}
	text := unquote(g.raw[f.start+1:f.end-1], limit)
	if f.info.Invalid {
		g.findings = append(g.findings, Finding{KindInvalidUTF8, n, "invalid UTF-8 in text replaced with U+FFFD"})
	}
	var marker string
	if over {
		marker = truncationMarker(f.info.Len, len(text))
		g.findings = append(g.findings, Finding{KindTextTruncated, n,
			fmt.Sprintf("text of %d bytes cut to %d (limit %d)", f.info.Len, len(text), g.l.TextBytes)})
	}
	var opening, closing []byte
	if g.o.Wrap {
		opening, closing = g.delimiters()
	}
	// Room for the usual few escapes, so that the output grows at most once.
	out := make([]byte, 0, 2+len(opening)+len(text)+len(text)/16+len(closing)+len(marker))
	g.edits = append(g.edits, edit{f.start, f.end, appendString(out, opening, text, closing, []byte(marker))})
}

func truncationMarker(size, shown int) string {
	return fmt.Sprintf("\n[switchboard: result truncated: %d bytes, showing the first %d]", size, shown)
}

// delimiters returns the opening and closing delimiters that mark
// untrusted text (see Options.Wrap), drawing the nonce on first use.
func (g *guard) delimiters() (opening, closing []byte) {
	if g.nonce == "" {
		g.nonce = g.o.Nonce
		if g.nonce == "" {
			var b [8]byte
			rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
			g.nonce = hex.EncodeToString(b[:])
		}
	}
	tag := "untrusted-data-" + g.nonce
	opening = append([]byte("<"), tag...)
	if g.o.Server != "" {
		opening = append(opening, " server="...)
		opening = strconv.AppendQuote(opening, g.o.Server)
	}
	opening = append(opening, ">\n"...)
	return opening, []byte("\n</" + tag + ">")
}

// image checks the image block n at raw[start:end] and replaces it with a
// placeholder unless it is allowed, within budget and passes [Image].
func (g *guard) image(n, start, end int, fs *fields) {
	if !g.l.Images {
		why := "images are disabled"
		if g.o.Server != "" {
			why += " for server " + g.o.Server
		}
		g.replace(n, start, end, KindImageWithheld, why, "[switchboard: image withheld: "+why+"]")
		return
	}
	if g.images >= g.l.ImagesPerResult {
		why := fmt.Sprintf("too_many_images: more than %d images in one result", g.l.ImagesPerResult)
		g.replace(n, start, end, KindImageRejected, why, "[switchboard: image rejected"+g.from()+": "+why+"]")
		return
	}
	data, mime := fs.v[fData], fs.v[fMIME]
	if data.present && !data.isString || mime.present && !mime.isString {
		g.malformed(n, start, end, `image "data" or "mimeType" is not a string`)
		return
	}
	var b64 []byte
	if data.present {
		b64 = g.body(data)
	}
	var mimeType string
	if mime.present {
		mimeType = string(g.body(mime))
	}
	size, ok := base64Size(b64)
	if _, _, err := checkImage(size, ok, bytes.NewReader(b64), mimeType, g.l); err != nil {
		why := err.(*ImageError).reason()
		g.replace(n, start, end, KindImageRejected, why, "[switchboard: image rejected"+g.from()+": "+why+"]")
		return
	}
	g.images++
}

// media applies the size cap to the base64 field f of block n, replacing
// the block if it is over. It reports whether the block was kept.
func (g *guard) media(n, start, end int, f field, kind, what string) bool {
	if !f.present {
		return true
	}
	if !f.isString {
		g.malformed(n, start, end, what+" is not a string")
		return false
	}
	if size, _ := base64Size(g.body(f)); size > g.l.ImageBytes {
		why := fmt.Sprintf("%s of %d bytes, limit %d", what, size, g.l.ImageBytes)
		g.replace(n, start, end, kind, why, "[switchboard: "+what+" withheld"+g.from()+": "+why+"]")
		return false
	}
	return true
}

func (g *guard) malformed(n, start, end int, why string) {
	g.replace(n, start, end, KindMalformed, why, "[switchboard: malformed content block"+g.from()+" removed: "+why+"]")
}

func (g *guard) from() string {
	if g.o.Server == "" {
		return ""
	}
	return " from server " + g.o.Server
}

// replace replaces block n, at raw[start:end], with a notice.
func (g *guard) replace(n, start, end int, kind, detail, notice string) {
	g.findings = append(g.findings, Finding{kind, n, detail})
	g.edits = append(g.edits, edit{start, end, noticeBlock(notice)})
}

func noticeBlock(notice string) []byte {
	b := append([]byte(nil), `{"type":"text","text":`...)
	b = appendString(b, []byte(notice))
	return append(b, '}')
}

// finish removes structured content and drops blocks as the limits require.
// Both kinds of removal are announced in one text block at the end of the
// content array.
func (g *guard) finish() {
	var notes []string
	var structured Finding
	if s := g.structured; s.found {
		var kind, why string
		if size := s.valEnd - s.valStart; g.sDepth > g.l.StructuredDepth {
			kind, why = KindStructuredTooDeep, fmt.Sprintf("nested %d levels deep, limit %d", g.sDepth, g.l.StructuredDepth)
		} else if size > g.l.StructuredBytes {
			kind, why = KindStructuredTooLarge, fmt.Sprintf("%d bytes, limit %d", size, g.l.StructuredBytes)
		}
		if kind != "" {
			structured = Finding{kind, -1, "structured content " + why}
			notes = append(notes, "[switchboard: structured content removed: "+why+"]")
		}
	}

	keep := g.blocks
	if g.blocks > g.l.Blocks || len(notes) > 0 && g.blocks >= g.l.Blocks {
		keep = g.l.Blocks - 1 // leave room for the notice block
		m := g.mark(keep)
		g.edits, g.findings = g.edits[:m.edits], g.findings[:m.findings]
		detail := fmt.Sprintf("%d content blocks dropped: the result had %d, limit %d", g.blocks-keep, g.blocks, g.l.Blocks)
		g.findings = append(g.findings, Finding{KindBlocksDropped, keep, detail})
		notes = append(notes, "[switchboard: "+detail+"]")
	}
	if structured.Kind != "" {
		g.findings = append(g.findings, structured)
	}
	if len(notes) == 0 {
		return
	}

	notice := noticeBlock(strings.Join(notes, "\n"))
	c := g.content
	switch {
	case !c.found:
		// Only structured content can cause a notice here: turn its
		// member into the content member rather than juggle commas.
		s := g.structured
		text := append([]byte(`"content":[`), notice...)
		g.edits = append(g.edits, edit{s.keyStart, s.valEnd, append(text, ']')})
		return
	case g.contentNil:
		g.edits = append(g.edits, edit{c.valStart, c.valEnd, slices.Concat([]byte("["), notice, []byte("]"))})
	case g.blocks == 0:
		g.edits = append(g.edits, edit{g.closePos, g.closePos, notice})
	case keep == 0:
		g.edits = append(g.edits, edit{g.mark(0).start, g.lastEnd, notice})
	default:
		g.edits = append(g.edits, edit{g.mark(keep - 1).end, g.lastEnd, slices.Concat([]byte(","), notice)})
	}
	if structured.Kind != "" {
		g.removeStructured()
	}
}

// removeStructured deletes the structuredContent member with one of the
// commas around it.
func (g *guard) removeStructured() {
	s := g.structured
	switch {
	case s.nextStart >= 0:
		g.edits = append(g.edits, edit{s.keyStart, s.nextStart, nil})
	case s.prevEnd >= 0:
		g.edits = append(g.edits, edit{s.prevEnd, s.valEnd, nil})
	default:
		g.edits = append(g.edits, edit{s.keyStart, s.valEnd, nil})
	}
}

// apply splices the edits into raw. Edits never overlap: each replaces a
// block, a value inside a kept block, the tail of the content array or a
// member of the result, and these are disjoint by construction.
func (g *guard) apply() []byte {
	slices.SortFunc(g.edits, func(a, b edit) int { return cmp.Compare(a.start, b.start) })
	size := len(g.raw)
	for _, e := range g.edits {
		size += len(e.text) - (e.end - e.start)
	}
	out := make([]byte, 0, size)
	at := 0
	for _, e := range g.edits {
		if e.start < at {
			panic("resultguard: overlapping edits") // a bug in this package
		}
		out = append(out, g.raw[at:e.start]...)
		out = append(out, e.text...)
		at = e.end
	}
	return append(out, g.raw[at:]...)
}
