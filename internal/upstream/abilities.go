package upstream

import (
	"fmt"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's trust level decides which of the client's abilities it may
// use (config: sampling, elicitation, roots; see config.TrustDefaults).
// Switchboard neither advertises an ability the server may not use nor
// forwards such a request if the server sends it anyway.

// refused is the error a server gets for a request its trust level does
// not allow.
func (c *Conn) refused(ability string) error {
	return fmt.Errorf("Switchboard does not forward %s requests from server %q (trust %q; set %q: true in its configuration to allow them)",
		ability, c.server.Name, c.server.Trust.Level(), ability)
}

// allows reports whether the server may make requests of the kind.
func (c *Conn) allows(ability string) bool {
	switch ability {
	case "sampling":
		return c.server.Sampling
	case "elicitation":
		return c.server.Elicitation
	case "roots":
		return c.server.Roots
	}
	return false
}

// checkInput refuses a 2026-07-28 round of input requests that includes a
// kind the server may not use.
func (c *Conn) checkInput(reqs mcp.InputRequestMap) error {
	for id, r := range reqs {
		var ability string
		switch r.(type) {
		case *mcp.ElicitParams:
			ability = "elicitation"
		case *mcp.CreateMessageWithToolsParams, *mcp.CreateMessageParams:
			ability = "sampling"
		case *mcp.ListRootsParams:
			ability = "roots"
		default:
			continue
		}
		if !c.allows(ability) {
			return fmt.Errorf("input request %q: %w", id, c.refused(ability))
		}
	}
	return nil
}

// allowedCapabilities removes from a client's capabilities the abilities
// the server may not use.
func (c *Conn) allowedCapabilities(caps map[string]any) map[string]any {
	for _, a := range []string{"sampling", "elicitation", "roots"} {
		if !c.allows(a) {
			delete(caps, a)
		}
	}
	return caps
}

// checkElicit puts an elicitation to Options.CheckElicit, when set.
func (c *Conn) checkElicit(p *mcp.ElicitParams) (*mcp.ElicitParams, error) {
	if c.opts.CheckElicit == nil || p == nil {
		return p, nil
	}
	out, err := c.opts.CheckElicit(c.server.Name, p)
	if err != nil {
		c.log.Warn("elicitation refused", "err", err)
	}
	return out, err
}

// checkElicitInput is checkElicit for the elicitations of a 2026-07-28
// round of input requests: reqs itself when none changes, else a copy.
func (c *Conn) checkElicitInput(reqs mcp.InputRequestMap) (mcp.InputRequestMap, error) {
	out, cloned := reqs, false
	for id, r := range reqs {
		e, ok := r.(*mcp.ElicitParams)
		if !ok {
			continue
		}
		checked, err := c.checkElicit(e)
		if err != nil {
			return nil, fmt.Errorf("input request %q: %w", id, err)
		}
		if checked != e {
			if !cloned {
				out, cloned = maps.Clone(reqs), true
			}
			out[id] = checked
		}
	}
	return out, nil
}
