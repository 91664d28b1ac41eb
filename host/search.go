package host

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

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
	h.sem.poke() // the semantic tier's vectors follow (semantic.go)
}

// Search returns the k tools that best match a request in plain words
// ("make a new folder"), best first; k <= 0 means 5. Deferred tools are
// marked (see [Host.Tools]). Tools held for review whose name or server
// the request names follow the hits, by name and server only (see
// [Host.Held]). With the semantic tier configured (config.Embeddings),
// the tools nearest to the request are fused with the lexical ranking; if
// the request cannot be embedded (the server failed, or did not answer
// within the tier's timeout or before ctx ended), the lexical results are
// returned and a warning is logged once per streak of failures, or, when
// the tier is strict, the error.
//
// It searches the operator's view: see [View.Search] for a caller's.
func (h *Host) Search(ctx context.Context, query string, k int) ([]Tool, error) {
	tools, _, err := h.search(ctx, h.View(Caller{}), query, k, "")
	return tools, err
}

// search is Search within a view, and within one server of it
// unless server is "": a view or a server that leaves tools out ranks the
// whole index and keeps the first k of its own. Lexical hits that share
// no word with the request (the index's trigram fill) follow only when
// nothing shares one; weak reports that little of the request is in any
// tool of the view (withoutFill).
func (h *Host) search(ctx context.Context, v *View, query string, k int, server string) (tools []Tool, weak bool, err error) {
	h.mu.RLock()
	ix := h.index
	h.mu.RUnlock()
	if ix == nil {
		return nil, true, nil
	}
	if k <= 0 {
		k = defaultSearchHits
	}
	cfg := h.config()
	snap := h.snapshot()
	sc := v.scope()
	depth := k
	if sc.p != nil || server != "" {
		depth = max(k, ix.Len())
	}
	// inView keeps the hits of the view's tools (of server).
	inView := func(hits []search.Hit) []search.Hit {
		if sc.p == nil && server == "" {
			return hits
		}
		return slices.DeleteFunc(hits, func(hit search.Hit) bool {
			t, ok := snap.Tool(hit.ID)
			return !ok || !sc.hasTool(t) || (server != "" && t.ID.Server != server)
		})
	}
	var hits []search.Hit
	if e := cfg.Context.Search.Embeddings; e == nil {
		hits = inView(ix.Search(query, depth))
		hits = hits[:min(k, len(hits))]
		hits, weak = withoutFill(hits)
	} else {
		lex := inView(ix.Search(query, max(depth, fuseDepth)))
		sem, err := h.semanticRank(ctx, e, query, max(depth, fuseDepth))
		sem = inView(sem)
		switch {
		case err != nil && e.Strict:
			return nil, false, fmt.Errorf("tool search: the semantic tier failed: %w", err)
		case err != nil:
			h.sem.failed(h.log, "embedding the request", err)
			hits, weak = withoutFill(lex[:min(k, len(lex))])
		case sem == nil:
			hits, weak = withoutFill(lex[:min(k, len(lex))])
		default:
			h.sem.recovered(h.log)
			// The semantic ranking goes first: a tie between the two
			// tiers' first places goes to the model, which is there for
			// the requests whose words the index does not know.
			hits = search.Fuse(k, sem, lex)
		}
	}
	var out []Tool
	over := h.overBudget(v, cfg, snap)
	h.mu.RLock()
	defer h.mu.RUnlock()
	found := h.found[v.c.Profile]
	for _, hit := range hits {
		if t, ok := snap.Tool(hit.ID); ok {
			tool := toolOf(t)
			tool.Deferred = h.deferredLocked(cfg, t, found, over)
			out = append(out, tool)
		}
	}
	return append(out, h.heldMatches(v, query, k, server)...), weak || len(hits) == 0, nil
}

// weakCoverage is the best hit's search.Hit.Coverage below which an
// answer says that little of the request is in any tool. On the dev set
// (internal/search's TestCoverageUnanswerable) it marks 6 % of requests
// that have a tool and 22 % of those whose server is gone: a hint worth
// its few tokens, not a filter.
const weakCoverage = 0.3

// withoutFill drops the hits that share no word with the request (the
// index's trigram fill, Coverage 0) when some hit shares one, so that an
// answer is not padded to k with unrelated tools; weak reports that the
// best hit answers little of the request (weakCoverage).
func withoutFill(hits []search.Hit) (_ []search.Hit, weak bool) {
	if len(hits) == 0 || hits[0].Coverage == 0 {
		return hits, true
	}
	return slices.DeleteFunc(hits, func(h search.Hit) bool { return h.Coverage == 0 }), hits[0].Coverage < weakCoverage
}
