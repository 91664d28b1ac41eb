package host

import (
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/ingest"
	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/registry"
)

// catalogue is a server's lists: as discovered (or read back from the
// store), as vetted, and what the injection scanner found in them. It is
// one part of a server (see server); code outside it calls its methods.
//
// mu guards every field. It is never held while calling anything outside
// the catalogue: vetting, the store and the registry run on values taken
// out of it, and a result goes back in by replace, which refuses it when
// the lists it was made from were replaced meanwhile.
type catalogue struct {
	mu     sync.Mutex
	raw    *catalog.Catalog // as discovered (or saved), before vetting
	vetted *ingest.Result   // the vetting that produced vetted.Catalog, what the registry is built from
	cached bool             // raw came from the store and no live discovery confirmed it yet
	flags  []Finding        // injection-pattern findings of the last rebuild; replaced whole
}

// swap puts in lists discovered on a connection, with their vetting, and
// reports whether they differ from the ones they replace.
func (c *catalogue) swap(raw *catalog.Catalog, vetted *ingest.Result) (changed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	changed = c.raw == nil || !sameCatalog(c.raw, raw)
	c.raw, c.vetted, c.cached = raw, vetted, false
	return changed
}

// load puts in lists read back from the store, with their vetting: they
// count as cached until a discovery confirms them.
func (c *catalogue) load(raw *catalog.Catalog, vetted *ingest.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw, c.vetted, c.cached = raw, vetted, true
}

// replace puts in raw and its vetting when the raw lists are still prev,
// and reports whether it did: a discovery or a vetting made from lists
// replaced meanwhile is stale. cached is kept.
func (c *catalogue) replace(prev, raw *catalog.Catalog, vetted *ingest.Result) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.raw != prev {
		return false
	}
	c.raw, c.vetted = raw, vetted
	return true
}

// rawLists returns the lists as discovered (or saved); nil when none.
func (c *catalogue) rawLists() *catalog.Catalog {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw
}

// current returns the vetted lists, what the registry is built from; nil
// until known.
func (c *catalogue) current() *catalog.Catalog {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.vettedLocked()
}

func (c *catalogue) vettedLocked() *catalog.Catalog {
	if c.vetted == nil {
		return nil
	}
	return c.vetted.Catalog
}

// isCached reports whether the lists came from the store and no live
// discovery has confirmed them yet.
func (c *catalogue) isCached() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cached
}

// has reports whether the vetted lists hold def, the very definition (not
// an equal one).
func (c *catalogue) has(def *mcp.Tool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	cat := c.vettedLocked()
	return cat != nil && slices.Contains(cat.Tools, def)
}

// aheadOf reports whether the vetted lists hold a tool of server that
// snap registered from earlier lists.
func (c *catalogue) aheadOf(server string, snap *registry.Snapshot) bool {
	cat := c.current()
	if cat == nil {
		return false
	}
	for _, def := range cat.Tools {
		if t, ok := snap.Tool(names.ID{Server: server, Name: def.Name}.String()); ok && t.Tool != def {
			return true
		}
	}
	return false
}

// setFlags records the injection-pattern findings of a rebuild and returns
// the ones that are new.
func (c *catalogue) setFlags(findings []Finding) []Finding {
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.Equal(findings, c.flags) {
		return nil
	}
	var fresh []Finding
	for _, f := range findings {
		if !slices.Contains(c.flags, f) {
			fresh = append(fresh, f)
		}
	}
	c.flags = findings
	return fresh
}

// catalogueView is a copy of a catalogue at one moment. What it points to
// is never mutated.
type catalogueView struct {
	catalog *catalog.Catalog // vetted; nil until known
	vetted  *ingest.Result
	flags   []Finding
}

// view returns a copy of the catalogue.
func (c *catalogue) view() catalogueView {
	c.mu.Lock()
	defer c.mu.Unlock()
	return catalogueView{catalog: c.vettedLocked(), vetted: c.vetted, flags: c.flags}
}
