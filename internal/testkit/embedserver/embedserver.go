// Package embedserver is an embedding model for tests: an OpenAI-compatible
// /v1/embeddings endpoint on 127.0.0.1 that answers deterministic
// bag-of-words vectors, in which the words of one synonym group share a
// dimension (so that two texts with no word in common can still be near),
// counts what it is asked, and fails or stalls on request.
//
// Only tests import this package.
package embedserver

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

// Dims is the length of every vector.
const Dims = 256

// Server is a running embedding model. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the base URL, ending in "/v1".
	URL string

	groups map[string]int // word → its group's dimension

	mu       sync.Mutex
	requests int           // answered or refused
	texts    int           // texts embedded
	status   int           // answer with this status when not 0
	delay    time.Duration // wait this long before answering
	auth     string        // the last Authorization header
	inputs   []string      // every text embedded, in order
}

// Start starts a server, closed when t ends. Each synonym group's words
// (lower case) map to one dimension of their own.
func Start(t testing.TB, synonyms ...[]string) *Server {
	t.Helper()
	s := &Server{groups: map[string]int{}}
	for i, g := range synonyms {
		for _, w := range g {
			s.groups[w] = i
		}
	}
	if len(synonyms) >= Dims/2 {
		t.Fatalf("embedserver: %d synonym groups, at most %d", len(synonyms), Dims/2-1)
	}
	ts := httptest.NewServer(http.HandlerFunc(s.serve)) // on 127.0.0.1
	t.Cleanup(ts.Close)
	s.URL = ts.URL + "/v1"
	return s
}

// Vector is the vector the server gives text.
func (s *Server) Vector(text string) []float32 {
	v := make([]float32, Dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if g, ok := s.groups[w]; ok {
			v[g]++
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[Dims/2+int(h.Sum32()%(Dims/2))]++
	}
	return v
}

// Requests is how many requests reached the server.
func (s *Server) Requests() int { s.mu.Lock(); defer s.mu.Unlock(); return s.requests }

// Texts is how many texts the server embedded.
func (s *Server) Texts() int { s.mu.Lock(); defer s.mu.Unlock(); return s.texts }

// Inputs returns every text embedded so far, in order.
func (s *Server) Inputs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.inputs...)
}

// Auth is the Authorization header of the last request.
func (s *Server) Auth() string { s.mu.Lock(); defer s.mu.Unlock(); return s.auth }

// Fail makes every request answer status (0: answer normally).
func (s *Server) Fail(status int) { s.mu.Lock(); defer s.mu.Unlock(); s.status = status }

// Delay makes every request wait d before answering, or until the client
// gives up.
func (s *Server) Delay(d time.Duration) { s.mu.Lock(); defer s.mu.Unlock(); s.delay = d }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	s.auth = r.Header.Get("Authorization")
	status, delay := s.status, s.delay
	s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	err := json.NewDecoder(r.Body).Decode(&req)
	io.Copy(io.Discard, r.Body) // read to the end: the server then notices a client that gives up
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	if status != 0 {
		http.Error(w, `{"error":{"message":"model not loaded"}}`, status)
		return
	}
	if err != nil || req.Model == "" || len(req.Input) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	resp := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	// Answered last to first, each with its index, as a server may.
	for i := len(req.Input) - 1; i >= 0; i-- {
		resp.Data = append(resp.Data, item{"embedding", i, s.Vector(req.Input[i])})
	}
	s.mu.Lock()
	s.texts += len(req.Input)
	s.inputs = append(s.inputs, req.Input...)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}
