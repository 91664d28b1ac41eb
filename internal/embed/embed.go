// Package embed is the client of an embedding model served over the
// OpenAI-compatible /v1/embeddings API (Ollama, LM Studio, vLLM and
// OpenAI itself serve it), and the vector arithmetic of the semantic
// tier of tool search: unit vectors, cosine similarity, the nearest
// neighbours of a query, and the encoding a vector is stored in.
package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/bytesize"
)

// Limits of one request and its answer.
const (
	// DefaultBatch is how many texts one request carries.
	DefaultBatch = 64
	// MaxInput is the most bytes of one text sent; a longer text is cut
	// at a rune boundary.
	MaxInput = 8 << 10
	// MaxResponse bounds the body of one answer read.
	MaxResponse = 64 << 20
	// MaxDimensions bounds the length of one vector accepted.
	MaxDimensions = 16384
	// DefaultRequestTimeout bounds one request when the caller's context
	// has no earlier deadline.
	DefaultRequestTimeout = 60 * time.Second
)

// Options configure a Client.
type Options struct {
	// URL is the server's embeddings endpoint, or a base it is found
	// under: a URL whose path ends in "/embeddings" is used as it is, one
	// ending in "/v1" gets "/embeddings" appended, any other gets
	// "/v1/embeddings" ("http://127.0.0.1:11434" for Ollama).
	URL string
	// Model names the embedding model, sent with every request.
	Model string
	// APIKey, when set, is sent as a bearer token. It never appears in an
	// error.
	APIKey string
	// Batch is how many texts one request carries; 0 means DefaultBatch.
	Batch int
	// HTTPClient sends the requests; nil means a client of its own with
	// DefaultRequestTimeout.
	HTTPClient *http.Client
}

// Client asks an embedding model for vectors. It is safe for concurrent
// use.
type Client struct {
	endpoint string
	shown    string // endpoint without password or query, for errors
	model    string
	key      string
	batch    int
	http     *http.Client
}

// New returns a client for o.
func New(o Options) (*Client, error) {
	ep, err := Endpoint(o.URL)
	if err != nil {
		return nil, err
	}
	if o.Model == "" {
		return nil, errors.New("embed: no model")
	}
	c := &Client{endpoint: ep, shown: shown(ep), model: o.Model, key: o.APIKey, batch: o.Batch, http: o.HTTPClient}
	if c.batch <= 0 {
		c.batch = DefaultBatch
	}
	if c.http == nil {
		c.http = &http.Client{Timeout: DefaultRequestTimeout}
	}
	return c, nil
}

// Endpoint returns the embeddings endpoint of a configured URL (see
// Options.URL), or an error if it is not an http or https URL.
func Endpoint(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("embed: the URL must be an http:// or https:// URL")
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/embeddings"):
	case strings.HasSuffix(p, "/v1"):
		p += "/embeddings"
	default:
		p += "/v1/embeddings"
	}
	u.Path, u.RawPath = p, ""
	return u.String(), nil
}

// shown is an endpoint fit for an error: no password, no query.
func shown(ep string) string {
	u, err := url.Parse(ep)
	if err != nil {
		return "the embeddings endpoint"
	}
	u.RawQuery, u.ForceQuery = "", false
	return u.Redacted()
}

// Model returns the model the client asks.
func (c *Client) Model() string { return c.model }

type request struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type response struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// Embed returns the vector of each text, in order, asking in batches of
// Options.Batch texts. Every vector has the same length.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.batch {
		end := min(start+c.batch, len(texts))
		vs, err := c.embed(ctx, texts[start:end])
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && len(vs[0]) != len(out[0]) {
			return nil, fmt.Errorf("embed: the model answered vectors of %d and of %d dimensions", len(out[0]), len(vs[0]))
		}
		out = append(out, vs...)
	}
	return out, nil
}

// embed asks for one batch.
func (c *Client) embed(ctx context.Context, texts []string) ([][]float32, error) {
	in := make([]string, len(texts))
	for i, t := range texts {
		in[i] = cut(t, MaxInput)
		if in[i] == "" {
			in[i] = " " // some servers refuse an empty input
		}
	}
	body, err := json.Marshal(request{Model: c.model, Input: in})
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// A *url.Error quotes the whole URL: name it redacted instead.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("embed: %s: %w", c.shown, err)
	}
	defer resp.Body.Close()
	data, err := bytesize.ReadAll(resp.Body, MaxResponse)
	tooLarge := errors.Is(err, bytesize.ErrTooLarge)
	if err != nil && !tooLarge {
		return nil, fmt.Errorf("embed: %s: reading the answer: %w", c.shown, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embed: %s: %s: %s", c.shown, resp.Status, snippet(data))
	}
	if tooLarge {
		return nil, fmt.Errorf("embed: %s: the answer is %w", c.shown, err)
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("embed: %s: the answer is not an embeddings list: %v", c.shown, err)
	}
	if len(r.Data) != len(texts) {
		return nil, fmt.Errorf("embed: %s: %d vectors for %d texts", c.shown, len(r.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, d := range r.Data {
		switch {
		case d.Index < 0 || d.Index >= len(out) || out[d.Index] != nil:
			return nil, fmt.Errorf("embed: %s: a vector has index %d, out of range or repeated", c.shown, d.Index)
		case len(d.Embedding) == 0 || len(d.Embedding) > MaxDimensions:
			return nil, fmt.Errorf("embed: %s: a vector of %d dimensions", c.shown, len(d.Embedding))
		case len(d.Embedding) != len(r.Data[0].Embedding):
			return nil, fmt.Errorf("embed: %s: vectors of %d and of %d dimensions", c.shown, len(r.Data[0].Embedding), len(d.Embedding))
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// cut returns s cut to at most n bytes at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// snippet is the start of an error answer, fit for a log line.
func snippet(b []byte) string {
	s := strings.ToValidUTF8(cut(string(b), 200), "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return fmt.Sprintf("%q", strings.TrimSpace(s))
}
