// Package registrytest is an MCP registry for tests: the v0.1 API
// (GET /v0.1/servers with search, limit, cursor and version=latest; GET
// /v0.1/servers/{name}/versions/{version}, "latest" included) served on
// 127.0.0.1 from recorded server.json documents (servers/*.json, embedded),
// with answers spoiled on request (too large, not JSON).
//
// Only tests import this package.
package registrytest

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

//go:embed servers/*.json
var recorded embed.FS

// Doc is one recorded server.json.
type Doc struct {
	Name, Version string
	Raw           json.RawMessage
}

// Docs returns the recorded documents, in the order of their names and
// then versions (the last version of a name is its latest).
func Docs(t testing.TB) []Doc {
	t.Helper()
	files, err := fs.Glob(recorded, "servers/*.json")
	if err != nil {
		t.Fatal(err)
	}
	var docs []Doc
	for _, f := range files {
		raw, err := recorded.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct{ Name, Version string }
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		docs = append(docs, Doc{d.Name, d.Version, raw})
	}
	slices.SortStableFunc(docs, func(a, b Doc) int { return strings.Compare(a.Name, b.Name) })
	return docs
}

// Find returns the recorded document of name at version.
func Find(t testing.TB, name, version string) json.RawMessage {
	t.Helper()
	for _, d := range Docs(t) {
		if d.Name == name && d.Version == version {
			return d.Raw
		}
	}
	t.Fatalf("no recorded server.json of %s@%s", name, version)
	return nil
}

// Registry is a running test registry.
type Registry struct {
	URL  string
	docs []Doc

	mu sync.Mutex
	// spoil, when set, is the body of every answer (status 200).
	spoil []byte
	// requests are the request URIs served, in order.
	requests []string
}

// Start serves the recorded documents (and extra ones) until the test
// ends.
func Start(t testing.TB, extra ...Doc) *Registry {
	t.Helper()
	docs := append(Docs(t), extra...)
	slices.SortStableFunc(docs, func(a, b Doc) int { return strings.Compare(a.Name, b.Name) })
	r := &Registry{docs: docs}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Spoil has every later answer be body, with status 200.
func (r *Registry) Spoil(body []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spoil = body
}

// Requests returns the request URIs served so far.
func (r *Registry) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests = append(r.requests, req.URL.RequestURI())
	spoil := r.spoil
	r.mu.Unlock()
	if req.Method != http.MethodGet {
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if spoil != nil {
		w.Write(spoil) //nolint:errcheck // the client's to notice
		return
	}
	path := req.URL.EscapedPath()
	if path == "/v0.1/servers" {
		r.list(w, req.URL.Query())
		return
	}
	rest, ok := strings.CutPrefix(path, "/v0.1/servers/")
	escName, escVersion, ok2 := strings.Cut(rest, "/versions/")
	name, err1 := url.PathUnescape(escName)
	version, err2 := url.PathUnescape(escVersion)
	if !ok || !ok2 || err1 != nil || err2 != nil {
		notFound(w)
		return
	}
	var found *Doc
	for i, d := range r.docs {
		if d.Name == name && (d.Version == version || version == "latest" && r.latest(i)) {
			found = &r.docs[i]
		}
	}
	if found == nil {
		notFound(w)
		return
	}
	fmt.Fprintf(w, `{"server":%s,"_meta":%s}`, found.Raw, meta(r.latest(slices.IndexFunc(r.docs, func(d Doc) bool { return d.Name == found.Name && d.Version == found.Version }))))
}

// latest reports whether docs[i] is the last version of its name.
func (r *Registry) latest(i int) bool {
	return i == len(r.docs)-1 || r.docs[i+1].Name != r.docs[i].Name
}

func meta(latest bool) string {
	return fmt.Sprintf(`{"io.modelcontextprotocol.registry/official":{"status":"active","publishedAt":"2025-10-01T10:00:00Z","updatedAt":"2025-10-01T10:00:00Z","isLatest":%t}}`, latest)
}

// list answers a page: the servers whose name contains search, after the
// cursor (an index, opaque to clients), at most limit (default 30).
func (r *Registry) list(w http.ResponseWriter, q url.Values) {
	limit := 30
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100 {
			http.Error(w, `{"title":"Unprocessable Entity","status":422}`, http.StatusUnprocessableEntity)
			return
		}
		limit = n
	}
	start := 0
	if c := q.Get("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "c"))
		if err != nil || n < 0 {
			http.Error(w, `{"title":"Bad Request","status":400}`, http.StatusBadRequest)
			return
		}
		start = n
	}
	var items []string
	next := ""
	for i := start; i < len(r.docs); i++ {
		d := r.docs[i]
		if !strings.Contains(d.Name, q.Get("search")) || q.Get("version") == "latest" && !r.latest(i) {
			continue
		}
		if len(items) == limit {
			next = "c" + strconv.Itoa(i)
			break
		}
		items = append(items, fmt.Sprintf(`{"server":%s,"_meta":%s}`, d.Raw, meta(r.latest(i))))
	}
	nextJSON := ""
	if next != "" {
		nextJSON = fmt.Sprintf(`,"nextCursor":%q`, next)
	}
	fmt.Fprintf(w, `{"servers":[%s],"metadata":{"count":%d%s}}`, strings.Join(items, ","), len(items), nextJSON)
}

func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprint(w, `{"title":"Not Found","status":404,"detail":"Server not found"}`)
}
