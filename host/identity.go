package host

import "github.com/switchboard-mcp/switchboard/config"

// profile returns the current configuration's profile named name, or nil.
// A reload swaps it; the value itself is never changed.
func (h *Host) profile(name string) *config.Profile { return h.config().Profile(name) }

// clients returns the current configuration's named clients. A reload
// swaps them; the values themselves are never changed.
func (h *Host) clients() []*config.Client { return h.config().Clients }
