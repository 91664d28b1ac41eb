package hostile

import (
	"encoding/json"
	"io"
	"net/http"
)

// httpHandler serves a server over Streamable HTTP, statelessly: no
// session id, no SSE, one application/json response per request (MCP
// 2025-06-18, transports §Streamable HTTP: the server may answer a POST
// with a single JSON object).
type httpHandler struct {
	srv *server
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		// §2.2.3: a server without a standalone SSE stream answers GET
		// with 405; so do DELETE and the rest.
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFrame))
	if err != nil {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	m, bad, ok := decode(body)
	if !ok {
		writeJSON(w, http.StatusBadRequest, responseFrame(json.RawMessage("null"), bad))
		return
	}
	if !m.isRequest() {
		// Notifications and responses are accepted with no body (§2.1.4).
		w.WriteHeader(http.StatusAccepted)
		return
	}
	rep := h.srv.handle(r.Context(), m, nil)
	if rep.flood {
		// No Content-Length: the body is streamed, and ends after
		// floodBytes bytes (no newline: HTTP frames by the body).
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		writeFlood(r.Context(), w, m.ID, rep.floodBytes)
		return
	}
	writeJSON(w, http.StatusOK, responseFrame(m.ID, rep))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}
