package host

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/ingest"
)

// TestCatalogueReplaceRefusesStale: a re-listing or a re-vetting made
// from lists that a dial replaced meanwhile does not overwrite the newer
// lists; lists read from the store stay cached until a discovery
// confirms them.
func TestCatalogueReplaceRefusesStale(t *testing.T) {
	t.Parallel()
	lists := func(desc string) (*catalog.Catalog, *ingest.Result) {
		raw := &catalog.Catalog{Tools: []*mcp.Tool{{Name: "echo", Description: desc}}}
		return raw, &ingest.Result{Catalog: &catalog.Catalog{Tools: []*mcp.Tool{{Name: "echo", Description: desc}}}}
	}
	var c catalogue
	if c.current() != nil || c.rawLists() != nil {
		t.Fatal("a new catalogue has lists")
	}
	saved, savedV := lists("saved")
	c.load(saved, savedV)
	if !c.isCached() || c.current() != savedV.Catalog {
		t.Fatal("lists read from the store are not in force, cached")
	}

	// A re-vetting of the saved lists goes in and keeps them cached.
	_, again := lists("saved")
	if !c.replace(saved, saved, again) || !c.isCached() || c.current() != again.Catalog {
		t.Fatal("a re-vetting of the lists in force was refused, or uncached them")
	}

	// A dial discovers the same lists: in force, no longer cached, not a change.
	same, sameV := lists("saved")
	if c.swap(same, sameV) {
		t.Error("equal lists reported as changed")
	}
	if c.isCached() {
		t.Error("lists confirmed by a discovery are still cached")
	}

	// A re-listing started from the saved lists comes back after the dial:
	// refused, the dial's lists stay.
	stale, staleV := lists("stale")
	if c.replace(saved, stale, staleV) {
		t.Fatal("a re-listing made from replaced lists went in")
	}
	if c.current() != sameV.Catalog || !c.has(sameV.Catalog.Tools[0]) || c.has(staleV.Catalog.Tools[0]) {
		t.Fatal("the stale lists replaced the newer ones")
	}

	newer, newerV := lists("newer")
	if !c.swap(newer, newerV) {
		t.Error("different lists not reported as changed")
	}
}
