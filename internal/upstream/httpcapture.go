package upstream

// The Streamable HTTP capture point: results taken off the wire from JSON
// answers and from event streams, bounded, and the streams' lifetime.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/bytesize"
)

// captureRoundTripper is the Streamable HTTP capture point. It also bounds
// every JSON response body, which go-sdk reads without a limit, and adds
// the configured headers to every request.
type captureRoundTripper struct {
	next    http.RoundTripper
	headers http.Header
	maxBody int64
	server  string
	prune   func([]byte) []byte // see Conn.pruneFrame; may be nil
}

// ErrResponseTooLarge is returned when an HTTP response body or SSE event
// exceeds the cap.
var ErrResponseTooLarge = errors.New("response exceeds size cap")

func (rt *captureRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	s := slotFrom(req.Context())
	var life *requestLife
	if s != nil && req.Method == http.MethodPost {
		life = newRequestLife(req.Context())
		req = req.WithContext(life.ctx)
	}
	if len(rt.headers) > 0 {
		req = req.Clone(req.Context())
		for k, vs := range rt.headers {
			req.Header[k] = vs
		}
	}
	req = injectHeaders(req)
	notePhaseHTTP(req)
	resp, err := rt.next.RoundTrip(req)
	if err == nil {
		recordStatus(req.Context(), resp.StatusCode)
	}
	if err != nil || req.Method != http.MethodPost {
		life.release()
		return resp, err
	}
	switch mediaType(resp.Header.Get("Content-Type")) {
	case "application/json":
		body, err := bytesize.ReadAll(resp.Body, rt.maxBody)
		resp.Body.Close()
		life.release()
		if errors.Is(err, bytesize.ErrTooLarge) {
			err := fmt.Errorf("server %q: HTTP response body exceeds %s cap: %w", rt.server, bytesize.Format(rt.maxBody), ErrResponseTooLarge)
			if s != nil {
				s.setFault(err) // go-sdk reports only that the request failed
			}
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		if rt.prune != nil {
			body = rt.prune(body)
		}
		if s != nil {
			body = rewriteResponse(body, s)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Del("Content-Length")
	case "text/event-stream":
		if s != nil {
			r := &sseRewriter{src: sseReaders.Get().(*bufio.Reader), body: resp.Body, slot: s, max: rt.maxBody, prune: rt.prune, life: life}
			r.src.Reset(resp.Body)
			resp.Body = r
		}
	default:
		if life != nil {
			resp.Body = releasing{resp.Body, life}
		}
	}
	return resp, nil
}

// requestLife is the context of a POST that carries a call, and the
// response stream's: it ends when the call's context ends, unless the
// call's response has already been read from the stream. go-sdk then
// reads the stream to its end, so that the connection can carry the next
// request, while the call's caller, which has its answer, ends the call's
// context; ending the stream's context with it would close the
// connection instead (a new TCP connection for a few percent of calls).
// What follows a response on its stream is short; drainGrace bounds it.
type requestLife struct {
	ctx      context.Context
	cancel   context.CancelFunc
	stop     func() bool
	answered atomic.Bool
}

// drainGrace bounds the reading of a response stream after its call's
// context ended.
const drainGrace = time.Second

func newRequestLife(call context.Context) *requestLife {
	l := &requestLife{}
	l.ctx, l.cancel = context.WithCancel(context.WithoutCancel(call))
	l.stop = context.AfterFunc(call, func() {
		if l.answered.Load() {
			time.AfterFunc(drainGrace, l.cancel)
			return
		}
		l.cancel()
	})
	return l
}

// answer records that the call's response has been read from the
// stream; nil is a no-op.
func (l *requestLife) answer() {
	if l != nil {
		l.answered.Store(true)
	}
}

// release ends the stream's context; nil is a no-op.
func (l *requestLife) release() {
	if l != nil {
		l.stop()
		l.cancel()
	}
}

// releasing is a response body that releases its request's life when
// closed.
type releasing struct {
	io.ReadCloser
	life *requestLife
}

func (b releasing) Close() error {
	err := b.ReadCloser.Close()
	b.life.release()
	return err
}

// sseReaders holds the buffered readers of response streams: one per
// call, and 64 KiB each.
var sseReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.ToLower(strings.TrimSpace(ct))
}

// sseRewriter passes an SSE stream through, rewriting the data of the
// first event that carries a JSON-RPC response. Events are bounded by max.
type sseRewriter struct {
	src   *bufio.Reader
	body  io.Closer
	slot  *slot
	max   int64
	prune func([]byte) []byte // see Conn.pruneFrame; may be nil
	life  *requestLife        // ended by Close
	out   bytes.Buffer        // bytes ready for the reader
	err   error
	done  bool // the response was captured: copy the rest verbatim
}

// Close closes the stream and gives its buffered reader back to the pool.
func (r *sseRewriter) Close() error {
	err := r.body.Close()
	r.life.release()
	if r.src != nil {
		r.src.Reset(nil)
		sseReaders.Put(r.src)
		r.src = nil
		if r.err == nil {
			r.err = net.ErrClosed
		}
	}
	return err
}

func (r *sseRewriter) Read(p []byte) (int, error) {
	if r.done && r.out.Len() == 0 && r.err == nil {
		// The response is captured: the rest passes as it is.
		return r.src.Read(p)
	}
	for r.out.Len() == 0 && r.err == nil {
		r.err = r.fill()
		if errors.Is(r.err, ErrResponseTooLarge) {
			r.slot.setFault(r.err) // go-sdk would report a bare "terminated"
		}
	}
	if r.out.Len() > 0 {
		return r.out.Read(p)
	}
	return 0, r.err
}

// fill moves one event (or, once done, one chunk) into out.
func (r *sseRewriter) fill() error {
	var event [][]byte // the event's lines, each with its line ending
	var size int64
	for {
		line, err := r.src.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: gather it whole, within the cap.
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				if int64(len(long)) > r.max {
					return fmt.Errorf("SSE event exceeds %s cap: %w", bytesize.Format(r.max), ErrResponseTooLarge)
				}
				line, err = r.src.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		} else {
			line = append([]byte(nil), line...)
		}
		size += int64(len(line))
		if size > r.max {
			return fmt.Errorf("SSE event exceeds %s cap: %w", bytesize.Format(r.max), ErrResponseTooLarge)
		}
		if len(line) > 0 {
			event = append(event, line)
		}
		blank := len(bytes.TrimRight(line, "\r\n")) == 0 && len(line) > 0
		if blank || err != nil {
			r.emit(event)
			return err
		}
	}
}

// emit writes an event to out, rewriting it when it is the response and
// delivering (and dropping) it when it is progress for the call.
func (r *sseRewriter) emit(event [][]byte) {
	dataLines := 0
	dataAt := -1
	name := ""
	for i, l := range event {
		t := bytes.TrimRight(l, "\r\n")
		switch {
		case bytes.HasPrefix(t, []byte("data:")):
			dataLines++
			dataAt = i
		case bytes.HasPrefix(t, []byte("event:")):
			name = strings.TrimSpace(string(t[len("event:"):]))
		}
	}
	// Only single-line data events are rewritten (what every MCP SDK
	// sends); anything else passes through and the SDK decodes it.
	if dataLines == 1 && (name == "" || name == "message") {
		l := event[dataAt]
		t := bytes.TrimRight(l, "\r\n")
		data := bytes.TrimPrefix(t[len("data:"):], []byte(" "))
		if r.prune != nil {
			if p := r.prune(data); len(p) != len(data) {
				// Entries were dropped: the event carries the pruned data.
				l = append(append([]byte("data: "), p...), l[len(t):]...)
				t = bytes.TrimRight(l, "\r\n")
				data = p
				event[dataAt] = l
			}
		}
		// Progress first: its text may well mention "result" or "error".
		if r.slot.progress != nil && bytes.Contains(data, []byte(`"notifications/progress"`)) && r.progress(event, data) {
			return
		}
		if r.slot.log != nil && bytes.Contains(data, []byte(`"notifications/message"`)) && r.logMessage(event, data) {
			return
		}
		if bytes.Contains(data, []byte(`"result"`)) || bytes.Contains(data, []byte(`"error"`)) {
			// One parse serves both the test and the rewrite.
			if m, ok := members(data); ok && isResponse(m) {
				out := rewriteMembers(data, m, r.slot)
				nl := l[len(t):]
				event[dataAt] = append(append([]byte("data: "), out...), nl...)
				r.done = true
				r.life.answer()
			}
		}
	}
	for _, l := range event {
		r.out.Write(l)
	}
}

// logMessage delivers the event when it is a log message (on the call's
// own stream, so the call's), keeping only its id line in the stream.
func (r *sseRewriter) logMessage(event [][]byte, data []byte) bool {
	var n map[string]json.RawMessage
	if json.Unmarshal(data, &n) != nil || string(n["method"]) != `"notifications/message"` {
		return false
	}
	if _, isCall := n["id"]; isCall {
		return false
	}
	var p mcp.LoggingMessageParams
	if json.Unmarshal(n["params"], &p) != nil {
		return false
	}
	r.slot.deliverLog(&p)
	r.keepIDs(event)
	return true
}

func (r *sseRewriter) keepIDs(event [][]byte) {
	for _, l := range event {
		if bytes.HasPrefix(l, []byte("id:")) {
			r.out.Write(l)
		}
	}
	r.out.WriteString("\n")
}

// progress delivers the event when it is a progress notification for the
// call, keeping only its id line (for resumption) in the stream.
func (r *sseRewriter) progress(event [][]byte, data []byte) bool {
	var n map[string]json.RawMessage // exact keys, as go-sdk reads them
	if json.Unmarshal(data, &n) != nil || string(n["method"]) != `"notifications/progress"` {
		return false
	}
	if _, isCall := n["id"]; isCall {
		return false
	}
	tok, p, ok := parseProgress(n["params"])
	if !ok || tok != r.slot.token {
		return false
	}
	r.slot.deliver(p)
	r.keepIDs(event)
	return true
}
