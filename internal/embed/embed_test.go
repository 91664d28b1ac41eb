package embed_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/embed"
	"github.com/switchboard-mcp/switchboard/internal/testkit/embedserver"
)

func TestEndpoint(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http://127.0.0.1:11434", "http://127.0.0.1:11434/v1/embeddings"},
		{"http://127.0.0.1:11434/", "http://127.0.0.1:11434/v1/embeddings"},
		{"http://127.0.0.1:1234/v1", "http://127.0.0.1:1234/v1/embeddings"},
		{"http://127.0.0.1:1234/v1/", "http://127.0.0.1:1234/v1/embeddings"},
		{"https://127.0.0.1/api/v1/embeddings", "https://127.0.0.1/api/v1/embeddings"},
		{"http://127.0.0.1:8000/openai", "http://127.0.0.1:8000/openai/v1/embeddings"},
		{"ftp://127.0.0.1/", ""},
		{"127.0.0.1:8000", ""},
		{"http:///v1", ""},
		{"", ""},
	} {
		got, err := embed.Endpoint(tt.in)
		if (err != nil) != (tt.want == "") || got != tt.want {
			t.Errorf("Endpoint(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestEmbed: texts are sent in batches, vectors come back in the texts'
// order whatever order the server answers in, and the key is sent as a
// bearer token.
func TestEmbed(t *testing.T) {
	srv := embedserver.Start(t)
	c, err := embed.New(embed.Options{URL: srv.URL, Model: "m", APIKey: "sekrit", Batch: 3})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"one", "two", "three", "four", "five", "six", "seven", ""}
	vs, err := c.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests(); got != 3 {
		t.Errorf("%d requests for %d texts in batches of 3, want 3", got, len(texts))
	}
	for i, text := range texts {
		if want := srv.Vector(text); !equal(vs[i], want) && text != "" {
			t.Errorf("vector %d (%q) is not the text's", i, text)
		}
	}
	if got := srv.Auth(); got != "Bearer sekrit" {
		t.Errorf("Authorization = %q, want the bearer key", got)
	}
}

// TestEmbedErrors: a refusal, a stall past the deadline and a server that
// is gone are errors that never name the key.
func TestEmbedErrors(t *testing.T) {
	srv := embedserver.Start(t)
	c, err := embed.New(embed.Options{URL: srv.URL, Model: "m", APIKey: "sekrit"})
	if err != nil {
		t.Fatal(err)
	}
	srv.Fail(http.StatusServiceUnavailable)
	_, err = c.Embed(t.Context(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "503") || strings.Contains(err.Error(), "sekrit") {
		t.Errorf("refused: err = %v, want a 503 without the key", err)
	}
	srv.Fail(0)
	srv.Delay(time.Minute)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Embed(ctx, []string{"x"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Errorf("stalled: err = %v after %v, want the deadline", err, time.Since(start))
	}
	gone, err := embed.New(embed.Options{URL: "http://user:hunter2@127.0.0.1:1/v1?api_key=qwerty", Model: "m", APIKey: "sekrit"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = gone.Embed(t.Context(), []string{"x"})
	if err == nil {
		t.Fatal("gone: no error")
	}
	for _, secret := range []string{"sekrit", "hunter2", "qwerty"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("gone: err = %v, shows %q", err, secret)
		}
	}
}

func TestVectors(t *testing.T) {
	u := embed.Unit([]float32{3, 4})
	if math.Abs(float64(u[0])-0.6) > 1e-6 || math.Abs(float64(u[1])-0.8) > 1e-6 {
		t.Errorf("Unit(3,4) = %v", u)
	}
	if embed.Unit([]float32{0, 0}) != nil || embed.Unit([]float32{float32(math.NaN()), 1}) != nil {
		t.Error("Unit of a zero or NaN vector is not nil")
	}
	vecs := map[string][]float32{
		"same":     embed.Unit([]float32{1, 0, 0}),
		"near":     embed.Unit([]float32{1, 1, 0}),
		"far":      embed.Unit([]float32{0, 0, 1}),
		"opposite": embed.Unit([]float32{-1, 0, 0}),
		"short":    embed.Unit([]float32{1, 0}),
	}
	got := embed.Nearest(embed.Unit([]float32{1, 0, 0}), vecs, 0.5, 10)
	if len(got) != 2 || got[0].ID != "same" || got[1].ID != "near" {
		t.Errorf("Nearest(min 0.5) = %v, want same, near", got)
	}
	if got := embed.Nearest(embed.Unit([]float32{1, 0, 0}), vecs, -1, 3); len(got) != 2 || got[1].ID != "near" {
		t.Errorf("Nearest(min -1) = %v, want same, near: no orthogonal or opposite vector", got)
	}
	if got := embed.Nearest(embed.Unit([]float32{1, 0.1, 0}), vecs, 0, 1); len(got) != 1 || got[0].ID != "same" {
		t.Errorf("Nearest(n 1) = %v, want same", got)
	}
	b := embed.Encode([]float32{1.5, -2, 0})
	v, err := embed.Decode(b)
	if err != nil || !equal(v, []float32{1.5, -2, 0}) {
		t.Errorf("Decode(Encode) = %v, %v", v, err)
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}} {
		if _, err := embed.Decode(bad); err == nil {
			t.Errorf("Decode(%v) is not an error", bad)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(embed.Encode([]float32{1, 2}))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := embed.Decode(b)
		if err != nil {
			return
		}
		if got := embed.Encode(v); string(got) != string(b) {
			t.Fatalf("Encode(Decode(%x)) = %x", b, got)
		}
	})
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BenchmarkNearest: the semantic ranking of one request over 10,000 tools
// of 768 dimensions (nomic-embed-text's).
func BenchmarkNearest(b *testing.B) {
	const tools, dims = 10000, 768
	vecs := make(map[string][]float32, tools)
	seed := uint32(1)
	next := func() float32 { seed = seed*1664525 + 1013904223; return float32(seed>>8)/(1<<24) - 0.5 }
	for i := range tools {
		v := make([]float32, dims)
		for j := range v {
			v[j] = next()
		}
		vecs[strconv.Itoa(i)] = embed.Unit(v)
	}
	q := make([]float32, dims)
	for j := range q {
		q[j] = next()
	}
	q = embed.Unit(q)
	for b.Loop() {
		embed.Nearest(q, vecs, 0, 50)
	}
}
