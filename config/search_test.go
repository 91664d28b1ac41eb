package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSearchParse: "context.search.embeddings" is parsed strictly, its URL
// expanded and its key read from the variable it names.
func TestSearchParse(t *testing.T) {
	env := fakeEnv{"EMBED_KEY": "sekrit", "EMBED_HOST": "127.0.0.1:11434"}
	tests := []struct {
		name string
		src  string
		want Search
	}{
		{"absent: lexical only", `{"mcpServers": {}}`, Search{}},
		{"empty search", `{"mcpServers": {}, "context": {"search": {}}}`, Search{}},
		{"minimal", `{"mcpServers": {}, "context": {"search": {"embeddings": {"url": "http://127.0.0.1:11434/v1", "model": "nomic-embed-text"}}}}`,
			Search{Embeddings: &Embeddings{URL: "http://127.0.0.1:11434/v1", Model: "nomic-embed-text"}}},
		{"everything set",
			`{"mcpServers": {}, "context": {"search": {"embeddings": {"url": "http://${EMBED_HOST}", "model": "m", "apiKeyEnv": "EMBED_KEY",
				"minSimilarity": 0.35, "timeoutMs": 500, "strict": true}}}}`,
			Search{Embeddings: &Embeddings{URL: "http://127.0.0.1:11434", Model: "m", APIKeyEnv: "EMBED_KEY", APIKey: "sekrit",
				MinSimilarity: 0.35, Timeout: 500 * time.Millisecond, Strict: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mustParse(t, tt.src, env)
			if diff := cmp.Diff(tt.want, cfg.Context.Search); diff != "" {
				t.Errorf("Search (-want +got):\n%s", diff)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestSearchParseErrors(t *testing.T) {
	const F = testFile + ": "
	const E = F + "$.context.search.embeddings"
	src := func(body string) string {
		return `{"mcpServers": {}, "context": {"search": {"embeddings": {` + body + `}}}}`
	}
	ok := `"url": "http://127.0.0.1:1/v1", "model": "m"`
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"search not an object", `{"mcpServers": {}, "context": {"search": true}}`, F + `$.context.search: want object, got boolean`},
		{"unknown search field", `{"mcpServers": {}, "context": {"search": {"embedding": {}}}}`,
			F + `$.context.search.embedding: unknown field "embedding" (did you mean "embeddings"?)`},
		{"embeddings not an object", `{"mcpServers": {}, "context": {"search": {"embeddings": "http://x"}}}`,
			E + `: want object, got string`},
		{"unknown field", src(ok + `, "modle": "x"`), E + `.modle: unknown field "modle" (did you mean "model"?)`},
		{"no url", src(`"model": "m"`), E + `: needs "url", the embeddings server's address`},
		{"no model", src(`"url": "http://127.0.0.1:1"`), E + `: needs "model", the embedding model's name`},
		{"empty model", src(`"url": "http://127.0.0.1:1", "model": ""`), E + `.model: must not be empty`},
		{"not http", src(`"url": "ftp://127.0.0.1/", "model": "m"`), E + `.url: must be an http:// or https:// URL, e.g. http://127.0.0.1:11434/v1`},
		{"unset url variable", src(`"url": "${NOPE}", "model": "m"`), E + `.url: environment variable "NOPE" is not set`},
		{"unset key variable", src(ok + `, "apiKeyEnv": "NOPE"`), E + `.apiKeyEnv: environment variable "NOPE" is not set`},
		{"empty key variable", src(ok + `, "apiKeyEnv": "EMPTY"`), E + `.apiKeyEnv: environment variable "EMPTY" is empty`},
		{"minSimilarity above 1", src(ok + `, "minSimilarity": 1.5`), E + `.minSimilarity: must be between 0 and 1`},
		{"minSimilarity negative", src(ok + `, "minSimilarity": -0.1`), E + `.minSimilarity: must be between 0 and 1`},
		{"minSimilarity a string", src(ok + `, "minSimilarity": "0.3"`), E + `.minSimilarity: want number, got string`},
		{"timeout too long", src(ok + `, "timeoutMs": 60001`), E + `.timeoutMs: must be at most 60000 milliseconds`},
		{"timeout zero", src(ok + `, "timeoutMs": 0`), E + `.timeoutMs: ` + timeoutRangeMsg},
		{"strict a string", src(ok + `, "strict": "yes"`), E + `.strict: want boolean, got string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseErr(t, tt.src, fakeEnv{"EMPTY": ""})
			if !strings.Contains(got, tt.want) {
				t.Errorf("error = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

// TestSearchValidate: a hand-built Config's embeddings are checked too.
func TestSearchValidate(t *testing.T) {
	cfg := &Config{Context: Context{Search: Search{Embeddings: &Embeddings{URL: "127.0.0.1:1", MinSimilarity: 2, Timeout: time.Hour}}}}
	err := cfg.Validate()
	for _, want := range []string{
		"$.context.search.embeddings.url: must be an http",
		"$.context.search.embeddings.model: must not be empty",
		"$.context.search.embeddings.minSimilarity: must be between 0 and 1",
		"$.context.search.embeddings.timeoutMs: must be between",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to contain %q", err, want)
		}
	}
}

// TestEmbeddingsRedacted: no way of printing the settings shows the key or
// the URL's password or query values.
func TestEmbeddingsRedacted(t *testing.T) {
	e := Embeddings{URL: "https://user:hunter2@127.0.0.1/v1?api_key=qwerty", Model: "m", APIKeyEnv: "K", APIKey: "sekrit"}
	var log strings.Builder
	slog.New(slog.NewTextHandler(&log, nil)).Info("x", "e", e)
	js, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{e.String(), fmt.Sprintf("%v %+v %#v %s", e, e, e, &e), log.String(), string(js)} {
		for _, secret := range []string{"sekrit", "hunter2", "qwerty"} {
			if strings.Contains(out, secret) {
				t.Errorf("%q shows %q", out, secret)
			}
		}
		if !strings.Contains(out, "127.0.0.1") {
			t.Errorf("%q does not show the host", out)
		}
	}
}
