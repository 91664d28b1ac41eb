package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// liveSections are the page's sections that the event stream keeps
// current, by template name; the page holds each in the element with ID
// "sec-<name>".
var liveSections = []string{"heldcalls", "servers", "held", "findings", "calls", "live"}

// events streams the live sections as text/event-stream: an event
// "sections" whose data is a JSON object of re-rendered sections (HTML
// escaped by the templates), sent when one of them changed, checked every
// pushInterval. This is the page's own stream, not MCP.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	s, ok := h.current(nil, r)
	if !ok {
		http.Error(w, "log in first", http.StatusUnauthorized)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	flusher.Flush()
	last := map[string]string{}
	tick := time.NewTicker(pushInterval)
	defer tick.Stop()
	for {
		d := &pageData{CSRF: s.csrf}
		q := r.URL.Query()
		d.CallsServer, d.CallsTool, d.CallsOutcome = q.Get("calls_server"), q.Get("calls_tool"), q.Get("calls_outcome")
		h.fillLive(r.Context(), d)
		changed := map[string]string{}
		for _, name := range liveSections {
			var b bytes.Buffer
			if err := h.tmpl.ExecuteTemplate(&b, name, d); err != nil {
				h.log.Warn("status page section not rendered", "section", name, "err", err)
				return
			}
			if html := b.String(); html != last[name] {
				changed[name], last[name] = html, html
			}
		}
		if len(changed) > 0 {
			data, _ := json.Marshal(changed) // escapes <, > and & too
			if _, err := fmt.Fprintf(w, "event: sections\ndata: %s\n\n", data); err != nil {
				return
			}
			flusher.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-h.life.Done():
			return
		case <-tick.C:
		}
		if !h.alive(s.id) {
			return // logged out or expired
		}
	}
}

// alive reports whether the session with this ID is still open and
// unexpired.
func (h *Handler) alive(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[id]
	return ok && !time.Now().After(s.expires)
}
