package host

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
)

// The search's built-in tools: tool_search, tool_describe and
// tool_servers (see builtin.go for when they are on, searchanswer.go for
// what they write).

func (v *View) runSearch(ctx context.Context, args json.RawMessage, _ *CallOptions) (json.RawMessage, error) {
	h := v.h
	var a struct {
		Query  string `json:"query"`
		K      int    `json:"k"`
		Server string `json:"server"`
	}
	if err := decodeArgs(ToolSearch, args, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Query) == "" {
		return nil, fault.New(fault.CodeInvalidInput, "", ToolSearch, errors.New(`"query" is empty: say what the tool should do`))
	}
	if a.Server != "" {
		// The catalogues are searched: the server need not be up.
		if err := v.knownServer(ToolSearch, a.Server); err != nil {
			return nil, err
		}
	}
	k := a.K
	switch {
	case k <= 0:
		k = defaultSearchHits
	case k > maxSearchResults:
		k = maxSearchResults
	}
	hits, weak, err := h.search(ctx, v, a.Query, k, a.Server)
	if err != nil {
		return nil, fault.New(fault.CodeUnavailable, "", ToolSearch, err)
	}
	newly := false
	hint := h.config().Context.OutputSchemaHint
	h.mu.Lock()
	found := h.found[v.c.Profile]
	for i, t := range hits {
		if t.Held {
			continue
		}
		if t.Deferred {
			// Listed from now on in this view's profile, the most
			// recently found last; the oldest drop out past maxFound, so
			// that searching never undoes the deferral.
			if i := slices.Index(found, t.Name); i >= 0 {
				found = slices.Delete(found, i, i+1)
			} else {
				newly = true
			}
			found = append(found, t.Name)
		}
		if hint {
			hits[i].Description = withOutputHint(t.Description, t.OutputSchema)
		}
	}
	if len(found) > maxFound {
		found = slices.Delete(found, 0, len(found)-maxFound)
	}
	if h.found == nil {
		h.found = map[string][]string{}
	}
	h.found[v.c.Profile] = found
	h.mu.Unlock()
	if newly {
		// Found tools are listed from now on: answer once OnChange has run,
		// so that a gateway client can call them as soon as it reads this.
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		h.waitChanged(wctx, h.changed())
		cancel()
	}
	answer := searchAnswer(a.Query, a.Server, hits, v.countTools(a.Server))
	if weak {
		answer += weakHint(v.h.serverSummary(v, maxSummaryServers))
	}
	return textResult(answer)
}

// runDescribe is tool_describe: one tool of the view, in full.
func (v *View) runDescribe(ctx context.Context, args json.RawMessage, _ *CallOptions) (json.RawMessage, error) {
	var a struct {
		Name string `json:"name"`
	}
	if err := decodeArgs(DescribeTool, args, &a); err != nil {
		return nil, err
	}
	rt, _, err := v.lookup(ctx, strings.TrimSpace(a.Name), false)
	if err != nil {
		return nil, err
	}
	def := toolOf(rt).definition()
	if v.h.config().Context.OutputSchemaHint {
		def.Description = withOutputHint(def.Description, def.OutputSchema)
	}
	b, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	return textResult(string(b))
}

// runListServers is tool_servers: the view's servers with tools, a line
// each.
func (v *View) runListServers(_ context.Context, args json.RawMessage, _ *CallOptions) (json.RawMessage, error) {
	if err := decodeArgs(ListServersTool, args, &struct{}{}); err != nil {
		return nil, err
	}
	return textResult(v.h.serverSummary(v, 0))
}

// textResult is a tool result of one text block.
func textResult(text string) (json.RawMessage, error) {
	return json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
}
