package host

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/content"
)

// Large results: a tool result whose text is longer than context.spillBytes
// is stored and replaced by a preview plus the ID of the stored text, which
// mcp_read_resource serves in pages; a resource read through
// mcp_read_resource that is as long comes in the same pages. Nothing is
// cut: the pages together are the whole text (the result's text
// projection: text blocks as they are, media as one descriptive line each,
// structured content as JSON). Stored results live in memory for spillTTL,
// within spillMaxBytes in all; the oldest go first, and reading one that
// went says so. The store is shared by all the host's callers: the
// IDs are unguessable (128 random bits), and only their holders can read.
const (
	spillPrefix   = "switchboard:spill/"
	spillPage     = 32 << 10
	spillPreview  = 2 << 10
	spillTTL      = time.Hour
	spillMaxBytes = 64 << 20
	// SpillMetaKey is the _meta key of a result that was spilled:
	// {"id": ..., "bytes": ..., "pageBytes": ...}.
	SpillMetaKey = "io.switchboard/spill"
	// PageMetaKey is the _meta key of one page of a stored result:
	// {"offset": ..., "bytes": ..., "total": ..., "nextCursor": ...}.
	PageMetaKey = "io.switchboard/page"
)

func isSpillID(id string) bool {
	hexID, ok := strings.CutPrefix(id, spillPrefix)
	if !ok || len(hexID) != 32 {
		return false
	}
	_, err := hex.DecodeString(hexID)
	return err == nil
}

// spillStore holds stored results. The zero value is ready to use.
type spillStore struct {
	mu      sync.Mutex
	entries map[string]*spillEntry
	order   []string // IDs, oldest first
	total   int
	now     func() time.Time // nil means time.Now
}

type spillEntry struct {
	text   string
	server string
	tool   string
	page   int
	at     time.Time
}

func (s *spillStore) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// has reports whether id is stored (and not expired).
func (s *spillStore) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[id]
	return e != nil && s.clock().Sub(e.at) < spillTTL
}

// put stores text and returns its ID.
func (s *spillStore) put(server, tool, text string, page int) string {
	var b [16]byte
	rand.Read(b[:]) //nolint:errcheck // never fails (crypto/rand)
	id := spillPrefix + hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries == nil {
		s.entries = map[string]*spillEntry{}
	}
	now := s.clock()
	for len(s.order) > 0 {
		e := s.entries[s.order[0]]
		if e != nil && s.total+len(text) <= spillMaxBytes && now.Sub(e.at) < spillTTL {
			break
		}
		s.drop(s.order[0])
	}
	s.entries[id] = &spillEntry{text: text, server: server, tool: tool, page: page, at: now}
	s.order = append(s.order, id)
	s.total += len(text)
	return id
}

// drop removes the oldest entry, which is id. Called with s.mu held.
func (s *spillStore) drop(id string) {
	if e := s.entries[id]; e != nil {
		s.total -= len(e.text)
		delete(s.entries, id)
	}
	s.order = s.order[1:]
}

// read returns one page of a stored result as a tool result: the page's
// text, then a line that says where it is in the whole and how to go on.
func (s *spillStore) read(id, cursor string) (json.RawMessage, error) {
	s.mu.Lock()
	e := s.entries[id]
	if e != nil && s.clock().Sub(e.at) >= spillTTL {
		e = nil
	}
	s.mu.Unlock()
	if e == nil {
		return nil, fault.New(fault.CodeNotFound, "", ReadResourceTool, fmt.Errorf(
			"no stored result %q: results are kept for %v and %d MiB in all, the oldest going first; this one is gone (call the tool again only if that is safe to repeat)", id, spillTTL, spillMaxBytes>>20))
	}
	off := 0
	if cursor != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(cursor, "o"))
		if err != nil || !strings.HasPrefix(cursor, "o") || n <= 0 || n >= len(e.text) || !utf8.RuneStart(e.text[n]) {
			return nil, fault.New(fault.CodeInvalidInput, "", ReadResourceTool, errors.New(`"cursor" is not one this stored result gave: pass nextCursor back verbatim`))
		}
		off = n
	}
	end := pageEnd(e.text, off, e.page)
	next := ""
	if end < len(e.text) {
		next = "o" + strconv.Itoa(end)
	}
	notice := fmt.Sprintf("[Switchboard: bytes %d–%d of %d of the stored result %s of %s.", off, end, len(e.text), id, e.tool)
	if next != "" {
		notice += fmt.Sprintf(` Next page: %s {"id": %q, "cursor": %q}.]`, ReadResourceTool, id, next)
	} else {
		notice += " This is the last page.]"
	}
	meta := map[string]any{"offset": off, "bytes": end - off, "total": len(e.text)}
	if next != "" {
		meta["nextCursor"] = next
	}
	return json.Marshal(map[string]any{
		"content": []any{
			map[string]any{"type": "text", "text": e.text[off:end]},
			map[string]any{"type": "text", "text": notice},
		},
		"_meta": map[string]any{PageMetaKey: meta},
	})
}

// pageEnd returns where the page of text starting at off ends: after at
// most size bytes, at a line end in the page's last quarter if there is
// one, and never inside a UTF-8 sequence.
func pageEnd(text string, off, size int) int {
	end := off + size
	if end >= len(text) {
		return len(text)
	}
	if nl := strings.LastIndexByte(text[off:end], '\n'); nl >= size*3/4 {
		return off + nl + 1
	}
	for end > off+1 && !utf8.RuneStart(text[end]) {
		end--
	}
	return end
}

// guardAndSpill guards a result (see guardResult) and, when its text is
// longer than the spill threshold, stores the text and returns a preview
// (a tool's result) or the first page (a resource read through
// mcp_read_resource) in its place.
//
// The threshold is the smaller of context.spillBytes and
// security.resultTextMaxBytes, so that whatever the guard would cut is
// spilled instead. keepStructured keeps a result's structuredContent
// whole (a tool that declares an output schema must return it; the guard
// still bounds it).
func (h *Host) guardAndSpill(sc *config.Server, tool string, raw json.RawMessage, resource, keepStructured bool) (json.RawMessage, error) {
	cfg := h.config()
	threshold := cfg.Context.Spill()
	if capBytes := cfg.Security.WithDefaults().ResultTextMaxBytes; threshold > capBytes {
		threshold = capBytes
	}
	if threshold == 0 || len(raw) <= threshold {
		return h.guardResult(sc, tool, raw, 0)
	}
	// One guarding pass measures the text (the common case ends here);
	// only a long one is guarded again without cuts and projected.
	var total int
	out, findings, err := h.guard(sc, tool, raw, 0, &total)
	if err != nil || total <= threshold {
		h.logFindings(sc, tool, findings)
		return out, err
	}
	whole, err := h.guardResult(sc, tool, raw, len(raw))
	if err != nil {
		return nil, err
	}
	text := content.ToolText(whole)
	if len(text) <= threshold {
		h.logFindings(sc, tool, findings)
		return out, nil
	}
	page := min(spillPage, threshold)
	id := h.spills.put(sc.Name, tool, text, page)
	// The ID is a capability: log only enough of it to match reports.
	h.log.Info("large result stored; the model gets a preview", "server", sc.Name, "tool", tool, "bytes", len(text), "id", id[:len(spillPrefix)+8]+"…")
	if h.spilled.CompareAndSwap(false, true) {
		h.changed() // mcp_read_resource is listed from now on
	}
	if resource {
		return h.spills.read(id, "")
	}
	return spillResult(whole, text, id, threshold, page, keepStructured)
}

// spillResult replaces a result's text by a preview of text and a notice
// naming the stored text; media blocks (images, audio, resource links),
// isError, _meta and other fields stay, and so does structuredContent when
// keepStructured or when it is small.
func spillResult(whole json.RawMessage, text, id string, threshold, page int, keepStructured bool) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(whole, &fields); err != nil {
		return nil, err
	}
	var isError bool
	json.Unmarshal(fields["isError"], &isError) //nolint:errcheck // absent or malformed: false
	if (!keepStructured || isError) && len(fields["structuredContent"]) > threshold/2 {
		delete(fields, "structuredContent")
	}
	preview := text[:pageEnd(text, 0, spillPreview)]
	notice := fmt.Sprintf("[Switchboard: this result is %d bytes of text, more than the %d shown at once; above are its first %d. "+
		"The whole result is stored as %s: read it with %s {\"id\": %q} in pages of %d bytes, within %v.]",
		len(text), threshold, len(preview), id, ReadResourceTool, id, page, spillTTL)
	content := []any{
		map[string]any{"type": "text", "text": preview},
		map[string]any{"type": "text", "text": notice},
	}
	var blocks []json.RawMessage
	json.Unmarshal(fields["content"], &blocks) //nolint:errcheck // malformed content: nothing to keep
	for _, b := range blocks {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(b, &head) == nil && (head.Type == "image" || head.Type == "audio" || head.Type == "resource_link") {
			content = append(content, b) // already guarded; the stored text only describes them
		}
	}
	fields["content"], _ = json.Marshal(content)
	var meta map[string]json.RawMessage
	if m := fields["_meta"]; len(m) > 0 {
		json.Unmarshal(m, &meta) //nolint:errcheck // a malformed _meta is replaced
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[SpillMetaKey], _ = json.Marshal(map[string]any{"id": id, "bytes": len(text), "pageBytes": page})
	fields["_meta"], _ = json.Marshal(meta)
	return json.Marshal(fields)
}
