package host

// ServerInstructions are one server's instructions, attributed.
type ServerInstructions struct {
	Server string `json:"server"`
	// Text is cleaned of invisible and control characters and capped at
	// security.instructionsMaxBytes (see package ingest).
	Text string `json:"text"`
}

// Instructions returns the instructions of every server that has given
// some, sorted by server name. A server's instructions are published only
// once its lists were discovered (live, or saved from an earlier
// discovery), and not while a change to them waits for approval; a
// disabled or closed server's are not.
func (h *Host) Instructions() []ServerInstructions {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []ServerInstructions
	for _, sc := range h.cfg.Servers {
		s := h.servers[sc.Name]
		if s == nil || s.catalog == nil || s.catalog.Instructions == "" || h.isHeld(s, "") {
			continue
		}
		if s.state == StateDisabled || s.state == StateClosed {
			continue
		}
		out = append(out, ServerInstructions{Server: sc.Name, Text: s.catalog.Instructions})
	}
	return out
}
