package host

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/drift"
	"github.com/switchboard-mcp/switchboard/internal/embed"
	"github.com/switchboard-mcp/switchboard/internal/search"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// The semantic tier of tool search (config.Context.Search.Embeddings): an
// embedding model's nearest tools to a request, fused with the lexical
// ranking by reciprocal rank. Tool vectors are computed by one worker in
// the background whenever the aggregate or the configuration changes,
// read from the store first (by model and definition hash, so a restart
// computes none again) and saved there; a search only embeds its request.
// Any failure leaves the lexical results, with one warning per streak of
// failures, unless the settings are strict.

const (
	// fuseDepth is how deep each ranking goes into the fusion: beyond k,
	// so that a tool both rankings place fairly well can rise above one
	// that a single ranking places first.
	fuseDepth = 50
	// embedRetry and embedRetryMax bound the backoff of the worker after
	// a failed pass.
	embedRetry    = 5 * time.Second
	embedRetryMax = 5 * time.Minute
)

// semantic is the state of the tier. The worker (embedTools) alone
// writes vecs; Search reads it.
type semantic struct {
	wake chan struct{} // cap 1: the aggregate or the configuration changed

	// vecs are the newest tool vectors; nil before the first. The worker
	// stores them, then signals (under mu).
	vecs atomic.Pointer[toolVectors]

	// mu guards the fields below. It is taken alone: no other lock is
	// held with it, and nothing is called under it but embed.New.
	mu       sync.Mutex
	client   *embed.Client     // for clientOf
	clientOf config.Embeddings // the settings client was made with
	failing  bool              // in a streak of failures, already warned of
	toolErr  error             // why the worker's last pass failed; nil when it did not
	done     string            // the model of the worker's last pass; "" with the tier off
	notify   chan struct{}     // closed, and replaced, when vecs is stored or a pass ends
}

// toolVectors are the unit vectors of the aggregate's tools under one
// model. Never changed once published.
type toolVectors struct {
	model  string
	byName map[string][]float32 // by model-facing tool name
}

func newSemantic() *semantic {
	return &semantic{wake: make(chan struct{}, 1), notify: make(chan struct{})}
}

// signal wakes the searches waiting for tool vectors (see semanticRank).
// Called with mu held.
func (s *semantic) signal() {
	close(s.notify)
	s.notify = make(chan struct{})
}

// poke wakes the worker; it never blocks.
func (s *semantic) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// clientFor returns a client for e, made anew when the settings changed.
func (s *semantic) clientFor(e *config.Embeddings) (*embed.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client != nil && s.clientOf == *e {
		return s.client, nil
	}
	c, err := embed.New(embed.Options{URL: e.URL, Model: e.Model, APIKey: e.APIKey, HTTPClient: &http.Client{}})
	if err != nil {
		return nil, err
	}
	s.client, s.clientOf = c, *e
	return c, nil
}

// failed records a failure, warning on the first of a streak. The error
// never holds the API key (package embed keeps it out).
func (s *semantic) failed(log *slog.Logger, during string, err error) {
	s.mu.Lock()
	first := !s.failing
	s.failing = true
	s.mu.Unlock()
	if first {
		log.Warn("tool search: the semantic tier failed; searching lexically until it recovers", "during", during, "error", err)
	}
}

// recovered ends a streak of failures.
func (s *semantic) recovered(log *slog.Logger) {
	s.mu.Lock()
	was := s.failing
	s.failing = false
	s.mu.Unlock()
	if was {
		log.Info("tool search: the semantic tier recovered")
	}
}

// embedTools is the worker: one pass per wake, and a retry with backoff
// after a failed pass. It ends with h.life.
func (h *Host) embedTools() {
	var (
		hashes  = map[*mcp.Tool]string{} // definition hashes of the tools seen
		byHash  = map[string][]float32{} // unit vectors under model, by definition hash
		model   string                   // of byHash
		retry   *time.Timer              // the pending retry, nil when none
		backoff = embedRetry             // before the next retry
	)
	retryC := func() <-chan time.Time { // retry's channel, nil when none
		if retry == nil {
			return nil
		}
		return retry.C
	}
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	for {
		select {
		case <-h.life.Done():
			return
		case <-h.sem.wake:
		case <-retryC():
		}
		if retry != nil {
			retry.Stop()
			retry = nil
		}
		e := h.config().Context.Search.Embeddings
		var err error
		if e != nil {
			if e.Model != model {
				model, byHash = e.Model, map[string][]float32{}
			}
			hashes, err = h.embedPass(e, hashes, byHash)
		} else {
			h.sem.vecs.Store(nil)
		}
		h.sem.mu.Lock()
		h.sem.toolErr = err
		h.sem.done = ""
		if e != nil {
			h.sem.done = e.Model
		}
		h.sem.signal()
		h.sem.mu.Unlock()
		switch {
		case err != nil && h.life.Err() == nil:
			h.sem.failed(h.log, "embedding tools", err)
			retry = time.NewTimer(backoff)
			backoff = min(2*backoff, embedRetryMax)
		case err == nil:
			backoff = embedRetry
		}
	}
}

// embedPass brings the tool vectors up to date with the aggregate: those
// it lacks are read from the store, and the rest asked of the model and
// saved. It publishes what it has after each step, and returns the
// definition hashes of the aggregate's tools for the next pass.
func (h *Host) embedPass(e *config.Embeddings, known map[*mcp.Tool]string, byHash map[string][]float32) (map[*mcp.Tool]string, error) {
	tools := h.snapshot().Tools()
	hashes := make(map[*mcp.Tool]string, len(tools))
	names := make(map[string]string, len(tools)) // tool name → hash
	texts := map[string]string{}                 // hash → text, for those without a vector
	for _, t := range tools {
		hash, ok := known[t.Tool]
		if !ok {
			def, err := drift.Definition(t.Tool)
			if err != nil {
				continue // not a definition that has a hash: found lexically only
			}
			hash = drift.Hash(def)
		}
		hashes[t.Tool] = hash
		names[t.Name] = hash
		if byHash[hash] == nil {
			texts[hash] = toolText(t.Tool)
		}
	}
	live := make(map[string]bool, len(names))
	for _, hash := range names {
		live[hash] = true
	}
	for hash := range byHash {
		if !live[hash] {
			delete(byHash, hash) // of a tool that is gone
		}
	}
	publish := func() {
		tv := &toolVectors{model: e.Model, byName: make(map[string][]float32, len(names))}
		for name, hash := range names {
			if v := byHash[hash]; v != nil {
				tv.byName[name] = v
			}
		}
		h.sem.vecs.Store(tv)
		h.sem.mu.Lock()
		h.sem.signal()
		h.sem.mu.Unlock()
	}
	need := slices.Sorted(maps.Keys(texts))
	if len(need) > 0 && h.store != nil {
		saved, err := h.store.Embeddings(h.life, e.Model, need)
		if err != nil {
			h.log.Warn("tool search: reading saved tool vectors", "error", err)
		}
		for _, s := range saved {
			if v, err := embed.Decode(s.Vector); err == nil {
				if u := embed.Unit(v); u != nil {
					byHash[s.Hash] = u
				}
			}
		}
		need = slices.DeleteFunc(need, func(hash string) bool { return byHash[hash] != nil })
	}
	publish()
	if len(need) == 0 {
		return hashes, nil
	}
	c, err := h.sem.clientFor(e)
	if err != nil {
		return hashes, err
	}
	for chunk := range slices.Chunk(need, 4*embed.DefaultBatch) {
		in := make([]string, len(chunk))
		for i, hash := range chunk {
			in[i] = texts[hash]
		}
		ctx, cancel := context.WithTimeout(h.life, embed.DefaultRequestTimeout)
		vs, err := c.Embed(ctx, in)
		cancel()
		if err != nil {
			return hashes, err
		}
		var rows []store.Embedding
		for i, hash := range chunk {
			u := embed.Unit(vs[i])
			if u == nil {
				continue // a zero vector: nothing is near it
			}
			byHash[hash] = u
			rows = append(rows, store.Embedding{Model: e.Model, Hash: hash, Vector: embed.Encode(vs[i])})
		}
		if h.store != nil {
			if err := h.store.SaveEmbeddings(h.life, rows...); err != nil {
				h.log.Warn("tool search: saving tool vectors", "error", err)
			}
		}
		publish()
	}
	return hashes, nil
}

// semanticRank returns the tools nearest to query, at most n, nearest
// first, leaving out those below e.MinSimilarity. While there are no tool
// vectors of e's model yet and the worker's pass for it has not ended, it
// waits for them at most e's query timeout, so that a search right after
// Open (the CLI's) or a reload uses the saved vectors; once some are
// there, it never waits.
func (h *Host) semanticRank(ctx context.Context, e *config.Embeddings, query string, n int) ([]search.Hit, error) {
	wait := time.NewTimer(e.QueryTimeout())
	defer wait.Stop()
	var tv *toolVectors
	for {
		h.sem.mu.Lock()
		tv = h.sem.vecs.Load() // under mu: a store after this signals the notify taken here
		done, err, notify := h.sem.done, h.sem.toolErr, h.sem.notify
		h.sem.mu.Unlock()
		if tv != nil && tv.model == e.Model && len(tv.byName) > 0 {
			break
		}
		if done == e.Model && err != nil {
			return nil, fmt.Errorf("no tool vectors: %w", err)
		}
		if done == e.Model {
			return nil, nil // no tool has a vector: lexical alone, and no failure
		}
		select {
		case <-notify:
			continue
		case <-wait.C:
		case <-ctx.Done():
		}
		return nil, nil // not computed yet: lexical alone, and no failure
	}
	c, err := h.sem.clientFor(e)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, e.QueryTimeout())
	defer cancel()
	vs, err := c.Embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	q := embed.Unit(vs[0])
	if q == nil {
		return nil, nil
	}
	near := embed.Nearest(q, tv.byName, float32(e.MinSimilarity), n)
	hits := make([]search.Hit, len(near))
	for i, nb := range near {
		hits[i] = search.Hit{ID: nb.ID, Score: float64(nb.Similarity)}
	}
	return hits, nil
}

// toolText is what the model embeds of a tool: its own name in words,
// title, description and parameters; not the model-facing name, so that
// one definition has one vector whatever server prefix it gets.
func toolText(t *mcp.Tool) string {
	var b strings.Builder
	b.WriteString(strings.NewReplacer("_", " ", "-", " ", ".", " ").Replace(t.Name))
	if t.Title != "" {
		b.WriteString(" (" + t.Title + ")")
	}
	if t.Description != "" {
		b.WriteString(": " + t.Description)
	}
	schema, _ := json.Marshal(t.InputSchema)
	if ps := search.ParamsFromSchema(schema); len(ps) > 0 {
		b.WriteString("\nParameters:")
		for _, p := range ps {
			b.WriteString(" " + p.Name)
			if p.Description != "" {
				b.WriteString(" (" + p.Description + ")")
			}
			b.WriteString(";")
		}
	}
	return b.String()
}
