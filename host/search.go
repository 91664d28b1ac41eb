package host

import (
	"encoding/json"

	"github.com/switchboard-mcp/switchboard/internal/registry"
	"github.com/switchboard-mcp/switchboard/internal/search"
)

// Tool search: an offline BM25F index (internal/search) over every listed
// tool's model-facing name, title, description and parameters, kept up to
// date incrementally as the aggregate changes.

// reindex brings the search index up to date with a new snapshot: tools
// that are gone are removed, new or changed ones (re)indexed. Called with
// h.mu held (by rebuild), after h.snap is replaced.
func (h *Host) reindex(snap *registry.Snapshot) {
	if h.index == nil {
		h.index = search.New()
		h.indexed = map[string]*registry.Tool{}
	}
	seen := make(map[string]bool, len(snap.Tools()))
	var docs []search.Doc
	for _, t := range snap.Tools() {
		seen[t.Name] = true
		if prev := h.indexed[t.Name]; prev != nil && prev.Tool == t.Tool {
			continue // the same definition: nothing to do
		}
		h.indexed[t.Name] = t
		schema, _ := json.Marshal(t.Tool.InputSchema)
		docs = append(docs, search.Doc{
			ID: t.Name, Name: t.Name, Title: t.Tool.Title, Description: t.Tool.Description,
			Params: search.ParamsFromSchema(schema),
		})
	}
	var gone []string
	for name := range h.indexed {
		if !seen[name] {
			gone = append(gone, name)
			delete(h.indexed, name)
		}
	}
	h.index.Remove(gone...)
	h.index.Upsert(docs...)
}

// Search returns the k tools that best match a request in plain words
// ("make a new folder"), best first; k <= 0 means 5. Deferred tools are
// marked (see Tools).
func (h *Host) Search(query string, k int) []Tool {
	h.mu.RLock()
	ix := h.index
	h.mu.RUnlock()
	if ix == nil {
		return nil
	}
	snap := h.snapshot()
	hits := ix.Search(query, k)
	var out []Tool
	cfg := h.config()
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, hit := range hits {
		if t, ok := snap.Tool(hit.ID); ok {
			tool := toolOf(t)
			tool.Deferred = h.deferredLocked(cfg, t)
			out = append(out, tool)
		}
	}
	return out
}
