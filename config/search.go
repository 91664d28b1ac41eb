package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"strconv"
	"time"
)

// Search holds the tool search settings ("context.search"). Its zero value
// is the default: the lexical index alone, offline.
type Search struct {
	// Embeddings, when set, adds the semantic tier ("embeddings"): tools
	// and requests are embedded by a model served over the
	// OpenAI-compatible /v1/embeddings API, and the nearest tools are fused
	// with the lexical ranking.
	Embeddings *Embeddings
}

// Embeddings configures the semantic tier of tool search
// ("context.search.embeddings"). Tool vectors are computed in the
// background when the catalogue changes and kept in the store under the
// model and the tool's definition hash; a request is embedded at each
// search. A failed embedding falls back to the lexical results with a
// warning, unless Strict.
//
// APIKey may be a secret: String, GoString, LogValue and MarshalJSON never
// show it, and show URL redacted.
type Embeddings struct {
	// URL is the server's embeddings endpoint or its base ("url", with
	// ${VAR} references expanded), http or https: a path ending in
	// "/embeddings" is used as it is, one ending in "/v1" gets
	// "/embeddings" appended, any other "/v1/embeddings" (Ollama:
	// "http://127.0.0.1:11434").
	URL string
	// Model names the embedding model ("model"), e.g. "nomic-embed-text".
	Model string
	// APIKeyEnv names the environment variable holding the API key, sent
	// as a bearer token ("apiKeyEnv"); "" sends none. The variable must be
	// set when the configuration is loaded.
	APIKeyEnv string
	// APIKey is the value of APIKeyEnv, resolved at load.
	APIKey string
	// MinSimilarity drops the tools whose cosine similarity to a request
	// is below it from the semantic ranking ("minSimilarity", 0 to 1);
	// they may still be found lexically. 0 drops only those pointing
	// away from the request.
	MinSimilarity float64
	// Timeout bounds the embedding of one request ("timeoutMs"); 0 means
	// DefaultEmbeddingTimeout.
	Timeout time.Duration
	// Strict makes a failed embedding of a request a search error
	// ("strict") instead of a fall-back to the lexical results.
	Strict bool
}

// Embedding limits.
const (
	// DefaultEmbeddingTimeout is how long a search waits for the vector
	// of its request: short, since lexical results are ready.
	DefaultEmbeddingTimeout = 2 * time.Second
	// MaxEmbeddingTimeout is the largest timeoutMs accepted.
	MaxEmbeddingTimeout = time.Minute
)

var (
	searchFields     = []string{"embeddings"}
	embeddingsFields = []string{"url", "model", "apiKeyEnv", "minSimilarity", "timeoutMs", "strict"}
)

// QueryTimeout returns the effective Timeout.
func (e *Embeddings) QueryTimeout() time.Duration {
	if e.Timeout == 0 {
		return DefaultEmbeddingTimeout
	}
	return e.Timeout
}

// RedactedURL is URL with its password and query values replaced by
// "xxxxx".
func (e Embeddings) RedactedURL() string {
	u, err := url.Parse(e.URL)
	if err != nil || u.Scheme == "" {
		return "[redacted: not a URL]"
	}
	if q := u.Query(); len(q) > 0 {
		for k := range q {
			q.Set(k, "xxxxx")
		}
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// String describes the tier by model and redacted URL.
func (e Embeddings) String() string {
	return fmt.Sprintf("embeddings %q at %s", e.Model, e.RedactedURL())
}

// GoString is like String, so that %#v cannot print the key either.
func (e Embeddings) GoString() string {
	return fmt.Sprintf("config.Embeddings{URL: %q, Model: %q, APIKeyEnv: %q /* key redacted */}", e.RedactedURL(), e.Model, e.APIKeyEnv)
}

// LogValue logs the model, the redacted URL and the key's variable.
func (e Embeddings) LogValue() slog.Value {
	return slog.GroupValue(slog.String("model", e.Model), slog.String("url", e.RedactedURL()), slog.String("apiKeyEnv", e.APIKeyEnv))
}

// MarshalJSON writes the configuration's shape with the URL redacted and
// the key's variable, never the key.
func (e Embeddings) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		URL           string  `json:"url"`
		Model         string  `json:"model"`
		APIKeyEnv     string  `json:"apiKeyEnv,omitempty"`
		MinSimilarity float64 `json:"minSimilarity,omitempty"`
		TimeoutMs     int64   `json:"timeoutMs,omitempty"`
		Strict        bool    `json:"strict,omitempty"`
	}{e.RedactedURL(), e.Model, e.APIKeyEnv, e.MinSimilarity, millis(e.Timeout), e.Strict})
}

// checkEmbeddingsURL returns what is wrong with an embeddings URL, or "".
// It never quotes the URL, which may hold a password.
func checkEmbeddingsURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must be an http:// or https:// URL, e.g. http://127.0.0.1:11434/v1"
	}
	return ""
}

// decodeSearch decodes "context.search".
func (d *decoder) decodeSearch(n *node, p *jsonPath) Search {
	var s Search
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return s
	}
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "embeddings":
			s.Embeddings = d.decodeEmbeddings(m.val, fp)
		default:
			d.unknown(fp, m.key, searchFields, nil, "")
		}
	}
	return s
}

// decodeEmbeddings decodes "context.search.embeddings"; nil when it is
// not an object.
func (d *decoder) decodeEmbeddings(n *node, p *jsonPath) *Embeddings {
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return nil
	}
	e := &Embeddings{}
	var hasURL, hasModel bool
	for _, m := range n.members {
		fp := p.k(m.key)
		switch m.key {
		case "url":
			hasURL = true
			if v, ok := d.expandedURL(m.val, fp, checkEmbeddingsURL); ok {
				e.URL = v
			}
		case "model":
			hasModel = true
			if v, ok := d.str(m.val, fp, ""); ok {
				if v == "" {
					d.add(fp, "", "must not be empty", nil)
				}
				e.Model = v
			}
		case "apiKeyEnv":
			v, ok := d.str(m.val, fp, "")
			if !ok {
				continue
			}
			if v == "" {
				d.add(fp, "", "must name an environment variable", nil)
				continue
			}
			e.APIKeyEnv = v
			key, set := d.lookup(v)
			switch {
			case !set:
				d.add(fp, "", fmt.Sprintf("environment variable %q is not set", v), nil)
			case key == "":
				d.add(fp, "", fmt.Sprintf("environment variable %q is empty", v), nil)
			case checkHeaderValue(key) != "":
				d.add(fp, "", fmt.Sprintf("the value of environment variable %q cannot be sent in a header (it contains control characters)", v), nil)
			default:
				e.APIKey = key
			}
		case "minSimilarity":
			e.MinSimilarity, _ = d.float(m.val, fp, 0, 1)
		case "timeoutMs":
			if v, ok := d.millis(m.val, fp, ""); ok {
				if v > MaxEmbeddingTimeout {
					d.add(fp, "", fmt.Sprintf("must be at most %d milliseconds", MaxEmbeddingTimeout/time.Millisecond), nil)
					continue
				}
				e.Timeout = v
			}
		case "strict":
			e.Strict, _ = d.boolean(m.val, fp, "")
		default:
			d.unknown(fp, m.key, embeddingsFields, nil, "")
		}
	}
	if !hasURL {
		d.add(p, "", `needs "url", the embeddings server's address`, nil)
	}
	if !hasModel {
		d.add(p, "", `needs "model", the embedding model's name`, nil)
	}
	return e
}

// float decodes a number in [lo, hi].
func (d *decoder) float(n *node, p *jsonPath, lo, hi float64) (float64, bool) {
	if n.kind != kindNumber {
		d.wrongType(n, p, "", "number")
		return 0, false
	}
	v, err := strconv.ParseFloat(n.str, 64)
	if err != nil || math.IsNaN(v) || v < lo || v > hi {
		d.add(p, "", fmt.Sprintf("must be between %g and %g", lo, hi), nil)
		return 0, false
	}
	return v, true
}

// validateSearch checks a hand-built Config's search settings.
func (c *Config) validateSearch(add func(p *jsonPath, msg string)) {
	e := c.Context.Search.Embeddings
	if e == nil {
		return
	}
	ep := (*jsonPath)(nil).k("context").k("search").k("embeddings")
	if msg := checkEmbeddingsURL(e.URL); msg != "" {
		add(ep.k("url"), msg)
	}
	if e.Model == "" {
		add(ep.k("model"), "must not be empty")
	}
	if e.MinSimilarity < 0 || e.MinSimilarity > 1 || math.IsNaN(e.MinSimilarity) {
		add(ep.k("minSimilarity"), "must be between 0 and 1")
	}
	if e.Timeout < 0 || e.Timeout > MaxEmbeddingTimeout {
		add(ep.k("timeoutMs"), fmt.Sprintf("must be between 1 and %d milliseconds (0 means the default)", MaxEmbeddingTimeout/time.Millisecond))
	}
}
