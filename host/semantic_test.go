package host_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/embedserver"
)

// paraphrase asks for the echo tool in words it shares with no tool: only
// an embedding model that knows "parrot" means "echo" and "say" means
// "text" finds it.
const paraphrase = "parrot whatever I say"

// startEmbedder starts an embedding model that knows the synonyms
// paraphrase needs.
func startEmbedder(t testing.TB) *embedserver.Server {
	return embedserver.Start(t, []string{"parrot", "echo", "repeat"}, []string{"say", "text", "words"})
}

// semanticConfig is a configuration of one testkit server with the
// semantic tier of srv and the settings in extra.
func semanticConfig(t testing.TB, srv *embedserver.Server, extra map[string]any) *config.Config {
	t.Helper()
	e := map[string]any{"url": srv.URL, "model": "test-embed", "apiKeyEnv": "EMBED_KEY"}
	for k, v := range extra {
		e[k] = v
	}
	data, err := json.Marshal(map[string]any{
		"context":    map[string]any{"deferTools": true, "search": map[string]any{"embeddings": e}},
		"mcpServers": map[string]any{"s": child(t, testkit.ModeServer, nil)},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data, "test.json", &config.LoadOptions{LookupEnv: func(k string) (string, bool) {
		if k == "EMBED_KEY" {
			return "sekrit-key", true
		}
		return "", false
	}})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// lexical is what the lexical tier alone answers for query.
func lexical(t *testing.T, query string, k int) []string {
	t.Helper()
	h := openWith(t, parse(t, map[string]any{"s": child(t, testkit.ModeServer, nil)}, nil), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})
	return names(h.SearchWords(query, k))
}

// TestSemanticSearch: with the semantic tier, a request that shares no
// word with the tool it wants finds it; without it, it does not. The
// API key is sent, and never logged.
func TestSemanticSearch(t *testing.T) {
	t.Parallel()
	if got := lexical(t, paraphrase, 3); len(got) > 0 && got[0] == "s__echo" {
		t.Fatalf("the lexical tier alone finds s__echo first for %q: the test shows nothing", paraphrase)
	}
	srv := startEmbedder(t)
	var logs syncBuf
	h := openWith(t, semanticConfig(t, srv, nil), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	got, err := h.Search(t.Context(), paraphrase, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Name != "s__echo" {
		t.Errorf("Search(%q) = %v, want 3 with s__echo first", paraphrase, names(got))
	}
	// Both tiers agree on a plain request: it stays first.
	if got := h.SearchWords("report progress then finish", 3); len(got) == 0 || got[0].Name != "s__slow" {
		t.Errorf("Search(report progress) = %v, want s__slow first", names(got))
	}
	// tool_search, the model's way in, is fused too.
	if found, _ := searched(t, call(t, h, host.ToolSearch, `{"query":"`+paraphrase+`","k":2}`)); len(found) == 0 || found[0] != "s__echo" {
		t.Errorf("tool_search(%q) = %v, want s__echo first", paraphrase, found)
	}
	if got := srv.Auth(); got != "Bearer sekrit-key" {
		t.Errorf("Authorization = %q, want the key of EMBED_KEY", got)
	}
	if strings.Contains(logs.String(), "sekrit") {
		t.Errorf("the log shows the key:\n%s", logs.String())
	}
}

// TestSemanticMinSimilarity: a floor above the paraphrase's similarity
// leaves the lexical order.
func TestSemanticMinSimilarity(t *testing.T) {
	t.Parallel()
	want := lexical(t, paraphrase, 3)
	srv := startEmbedder(t)
	h := openWith(t, semanticConfig(t, srv, map[string]any{"minSimilarity": 0.95}), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})
	got, err := h.Search(t.Context(), paraphrase, 3)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names(got), ",") != strings.Join(want, ",") {
		t.Errorf("with minSimilarity 0.95: %v, want the lexical %v", names(got), want)
	}
}

// TestSemanticFallback: when the model fails or stalls, a search returns
// the lexical results, with one warning per streak of failures; the next
// success ends the streak.
func TestSemanticFallback(t *testing.T) {
	t.Parallel()
	want := strings.Join(lexical(t, paraphrase, 3), ",")
	srv := startEmbedder(t)
	var logs syncBuf
	// timeoutMs: long enough for the model's answer on a busy machine,
	// far below its stall below.
	h := openWith(t, semanticConfig(t, srv, map[string]any{"timeoutMs": 10000}),
		&host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if got := h.SearchWords(paraphrase, 3); len(got) == 0 || got[0].Name != "s__echo" {
		t.Fatalf("Search = %v, want s__echo first while the model works", names(got))
	}
	srv.Fail(http.StatusInternalServerError)
	for range 3 {
		got, err := h.Search(t.Context(), paraphrase, 3)
		if err != nil || strings.Join(names(got), ",") != want {
			t.Errorf("model failing: %v, %v; want the lexical %s", names(got), err, want)
		}
	}
	srv.Fail(0)
	// The model stalls far longer than timeoutMs: a search that returns
	// before the model would answer was cut off by the timeout.
	stall := time.Minute
	srv.Delay(stall)
	start := time.Now()
	got, err := h.Search(t.Context(), paraphrase, 3)
	if err != nil || strings.Join(names(got), ",") != want {
		t.Errorf("model stalled: %v, %v; want the lexical %s", names(got), err, want)
	}
	if d := time.Since(start); d >= stall {
		t.Errorf("a stalled model held the search %v, as long as it stalled; want about timeoutMs", d)
	}
	if n := strings.Count(logs.String(), "semantic tier failed"); n != 1 {
		t.Errorf("%d warnings over one streak of failures, want 1:\n%s", n, logs.String())
	}
	srv.Delay(0)
	if got := h.SearchWords(paraphrase, 3); len(got) == 0 || got[0].Name != "s__echo" {
		t.Errorf("Search = %v, want s__echo first once the model is back", names(got))
	}
	if !strings.Contains(logs.String(), "semantic tier recovered") {
		t.Errorf("no recovery logged:\n%s", logs.String())
	}
	srv.Fail(http.StatusBadGateway)
	h.SearchWords(paraphrase, 3)
	if n := strings.Count(logs.String(), "semantic tier failed"); n != 2 {
		t.Errorf("%d warnings over two streaks, want 2", n)
	}
}

// TestSemanticStrict: with "strict", a failed embedding is an error, for
// SearchContext and for tool_search, never lexical results.
func TestSemanticStrict(t *testing.T) {
	t.Parallel()
	srv := startEmbedder(t)
	h := openWith(t, semanticConfig(t, srv, map[string]any{"strict": true}), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})
	if _, err := h.Search(t.Context(), paraphrase, 3); err != nil {
		t.Fatalf("SearchContext while the model works: %v", err)
	}
	srv.Fail(http.StatusServiceUnavailable)
	got, err := h.Search(t.Context(), paraphrase, 3)
	if err == nil || !strings.Contains(err.Error(), "503") || got != nil {
		t.Errorf("SearchContext = %v, %v; want a 503 error and nothing", names(got), err)
	}
	if got := h.SearchWords(paraphrase, 3); got != nil {
		t.Errorf("Search = %v, want nil", names(got))
	}
	_, err = h.Call(context.Background(), host.ToolSearch, json.RawMessage(`{"query":"`+paraphrase+`"}`), nil)
	if err == nil || !strings.Contains(err.Error(), "semantic tier failed") {
		t.Errorf("tool_search: %v, want the semantic tier's failure", err)
	}
}

// TestSemanticReload: the tier follows the configuration: a reload turns
// it on (a search right after waits for the tool vectors) and off again
// (the model is asked nothing more).
func TestSemanticReload(t *testing.T) {
	t.Parallel()
	srv := startEmbedder(t)
	off := parse(t, map[string]any{"s": child(t, testkit.ModeServer, nil)}, nil)
	h := openWith(t, off, &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})
	lex := strings.Join(names(h.SearchWords(paraphrase, 3)), ",")
	if strings.HasPrefix(lex, "s__echo") || srv.Requests() != 0 {
		t.Fatalf("tier off: %s, %d requests to the model; want no s__echo first and none", lex, srv.Requests())
	}
	if err := h.Reload(t.Context(), semanticConfig(t, srv, nil)); err != nil {
		t.Fatal(err)
	}
	if got := h.SearchWords(paraphrase, 3); len(got) == 0 || got[0].Name != "s__echo" {
		t.Errorf("tier reloaded on: %v, want s__echo first", names(got))
	}
	if err := h.Reload(t.Context(), off); err != nil {
		t.Fatal(err)
	}
	before := srv.Requests()
	if got := strings.Join(names(h.SearchWords(paraphrase, 3)), ","); got != lex {
		t.Errorf("tier reloaded off: %s, want the lexical %s", got, lex)
	}
	if srv.Requests() != before {
		t.Errorf("the tier off asked the model")
	}
}

// TestSemanticCache: tool vectors are kept in the store, so a host opened
// again on the same store asks the model for none, only for requests.
func TestSemanticCache(t *testing.T) {
	t.Parallel()
	srv := startEmbedder(t)
	st := openStore(t)
	cfg := semanticConfig(t, srv, nil)
	h, err := host.Open(t.Context(), cfg, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	if err != nil {
		t.Fatal(err)
	}
	if got := h.SearchWords(paraphrase, 3); len(got) == 0 || got[0].Name != "s__echo" {
		t.Errorf("first host: %v, want s__echo first", names(got))
	}
	h.Close()
	tools := srv.Texts() - 1 // all but the request
	if tools < 5 {
		t.Fatalf("the first host embedded %d tools, want every tool", tools)
	}
	saved, err := st.Embeddings(t.Context(), "test-embed", []string{"none"})
	if err != nil || len(saved) != 0 {
		t.Fatalf("Embeddings(none) = %v, %v", saved, err)
	}

	before := srv.Texts()
	h = openWith(t, cfg, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	if got := h.SearchWords(paraphrase, 3); len(got) == 0 || got[0].Name != "s__echo" {
		t.Errorf("second host: %v, want s__echo first", names(got))
	}
	if got := srv.Texts() - before; got != 1 {
		t.Errorf("the second host embedded %d texts, want 1 (the request): tools come from the store\n%q", got, srv.Inputs()[before:])
	}
	var _ store.Store = st
}

// BenchmarkSemanticSearch: one search with the semantic tier, against the
// in-test model on 127.0.0.1 (an HTTP round trip per request), and the
// lexical tier alone on the same tools.
func BenchmarkSemanticSearch(b *testing.B) {
	b.Run("lexical", func(b *testing.B) {
		h := openWith(b, parse(b, map[string]any{"s": child(b, testkit.ModeServer, nil)}, nil), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})
		for b.Loop() {
			h.SearchWords(paraphrase, 5)
		}
	})
	b.Run("semantic", func(b *testing.B) {
		srv := embedserver.Start(b, []string{"parrot", "echo"})
		h := openWith(b, semanticConfig(b, srv, nil), &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})
		for b.Loop() {
			if got, err := h.Search(b.Context(), paraphrase, 5); err != nil || len(got) == 0 {
				b.Fatal(names(got), err)
			}
		}
	})
}
