package host

// ServerInstructions are one server's instructions, attributed.
type ServerInstructions struct {
	Server string `json:"server"`
	// Text is cleaned of invisible and control characters and capped at
	// security.instructionsMaxBytes (see package ingest).
	Text string `json:"text"`
}

// instructions is View.Instructions for every server.
func (h *Host) instructions() []ServerInstructions {
	comp := h.comp.Load()
	var out []ServerInstructions
	for _, sc := range comp.cfg.Servers {
		v := comp.servers[sc.Name].view()
		if v.catalog == nil || v.catalog.Instructions == "" || v.isHeld("") {
			continue
		}
		if v.state == StateDisabled || v.state == StateClosed {
			continue
		}
		out = append(out, ServerInstructions{Server: sc.Name, Text: v.catalog.Instructions})
	}
	return out
}
