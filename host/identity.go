package host

import "github.com/switchboard-mcp/switchboard/config"

// Profile returns the current configuration's profile named name, or nil.
// A reload swaps it; the value itself is never changed.
func (h *Host) Profile(name string) *config.Profile { return h.config().Profile(name) }

// Clients returns the current configuration's named clients. A reload
// swaps them; the values themselves are never changed.
func (h *Host) Clients() []*config.Client { return h.config().Clients }
