package mcpregistry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/mcpregistry"
	"github.com/switchboard-mcp/switchboard/internal/testkit/registrytest"
)

func client(t *testing.T, url string, opts *mcpregistry.Options) *mcpregistry.Client {
	t.Helper()
	c, err := mcpregistry.New(url, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func names(p *mcpregistry.Page) []string {
	var out []string
	for _, e := range p.Servers {
		out = append(out, e.Server.Name+"@"+e.Server.Version)
	}
	return out
}

func TestListSearchAndPages(t *testing.T) {
	reg := registrytest.Start(t)
	c := client(t, reg.URL, nil)
	ctx := context.Background()

	p, err := c.List(ctx, mcpregistry.ListOptions{Search: "filesystem"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"io.github.modelcontextprotocol/filesystem@1.0.1", "io.github.modelcontextprotocol/filesystem@1.0.2"}
	if diff := cmp.Diff(want, names(p)); diff != "" {
		t.Errorf("search filesystem (-want +got):\n%s", diff)
	}
	if p.NextCursor != "" {
		t.Errorf("one page, yet NextCursor %q", p.NextCursor)
	}

	p, err = c.List(ctx, mcpregistry.ListOptions{Search: "filesystem", Latest: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[1:], names(p)); diff != "" {
		t.Errorf("latest only (-want +got):\n%s", diff)
	}
	if o := p.Servers[0].Meta.Official; o == nil || !o.IsLatest || o.Status != "active" {
		t.Errorf("official metadata = %+v", o)
	}

	// Every server, two at a time, by the cursors.
	var all []string
	cursor := ""
	for range 20 {
		p, err := c.List(ctx, mcpregistry.ListOptions{Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Servers) > 2 {
			t.Fatalf("limit 2, got %d", len(p.Servers))
		}
		all = append(all, names(p)...)
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	if len(all) != len(registrytest.Docs(t)) {
		t.Errorf("paged through %d servers, want %d: %v", len(all), len(registrytest.Docs(t)), all)
	}
	if reqs := reg.Requests(); !strings.Contains(strings.Join(reqs, " "), "cursor=") {
		t.Errorf("no request carried a cursor: %v", reqs)
	}
}

func TestGet(t *testing.T) {
	reg := registrytest.Start(t)
	c := client(t, reg.URL, nil)
	ctx := context.Background()
	for _, tc := range []struct{ version, want string }{{"", "1.0.2"}, {"latest", "1.0.2"}, {"1.0.1", "1.0.1"}} {
		e, err := c.Get(ctx, "io.github.modelcontextprotocol/filesystem", tc.version)
		if err != nil {
			t.Fatalf("version %q: %v", tc.version, err)
		}
		if e.Server.Version != tc.want {
			t.Errorf("version %q: got %s, want %s", tc.version, e.Server.Version, tc.want)
		}
	}
	e, err := c.Get(ctx, "io.github.modelcontextprotocol/filesystem", "1.0.2")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(e.Server.Packages); got != 2 {
		t.Fatalf("packages: %d", got)
	}
	oci := e.Server.Packages[1]
	if oci.RegistryType != "oci" || oci.RuntimeArguments[0].Variables["target_path"].Default != "/project" {
		t.Errorf("OCI package decoded as %+v", oci)
	}
	if diff := cmp.Diff([]string{"stdio"}, e.Server.Transports()); diff != "" {
		t.Errorf("transports (-want +got):\n%s", diff)
	}
	if reqs := reg.Requests(); !strings.Contains(reqs[0], "/v0.1/servers/io.github.modelcontextprotocol%2Ffilesystem/versions/latest") {
		t.Errorf("request %q: the name is not escaped into one path segment", reqs[0])
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	reason := func(err error) mcpregistry.Reason {
		var re *mcpregistry.Error
		if !errors.As(err, &re) {
			t.Fatalf("%v is not an *mcpregistry.Error", err)
		}
		return re.Reason
	}

	reg := registrytest.Start(t)
	c := client(t, reg.URL, nil)
	_, err := c.Get(ctx, "io.github.example/nothing", "")
	if reason(err) != mcpregistry.NotFound || !strings.Contains(err.Error(), reg.URL) || !strings.Contains(err.Error(), "io.github.example/nothing@latest") {
		t.Errorf("unknown server: %v", err)
	}
	_, err = c.Get(ctx, "io.github.modelcontextprotocol/filesystem", "9.9.9")
	if reason(err) != mcpregistry.NotFound {
		t.Errorf("unknown version: %v", err)
	}

	// Too large: 64 bytes allowed.
	small := client(t, reg.URL, &mcpregistry.Options{MaxBytes: 64})
	_, err = small.List(ctx, mcpregistry.ListOptions{})
	if reason(err) != mcpregistry.BadDocument || !strings.Contains(err.Error(), "larger than 64 bytes") {
		t.Errorf("huge answer: %v", err)
	}

	for _, body := range []string{`<html>`, `{"servers": 3}`, `{"server":{"name":"a/b","version":"1"}} trailing`,
		`{"server":{"name":"io.github.x/y","version":"1.0","packages":[{"registryType":"npm","identifier":"a\u0000b","version":"1"}]}}`} {
		reg.Spoil([]byte(body))
		if _, err := c.List(ctx, mcpregistry.ListOptions{}); reason(err) != mcpregistry.BadDocument {
			t.Errorf("list answered %q: %v", body, err)
		}
		if _, err := c.Get(ctx, "io.github.x/y", ""); reason(err) != mcpregistry.BadDocument {
			t.Errorf("get answered %q: %v", body, err)
		}
	}
	// Another server's document.
	reg.Spoil([]byte(`{"server":{"name":"io.github.x/other","version":"1.0"}}`))
	if _, err := c.Get(ctx, "io.github.x/y", ""); reason(err) != mcpregistry.BadDocument || !strings.Contains(err.Error(), "io.github.x/other") {
		t.Errorf("another server's document: %v", err)
	}

	// Nothing listening.
	gone := client(t, "http://127.0.0.1:1", &mcpregistry.Options{Timeout: 2 * time.Second})
	if _, err := gone.List(ctx, mcpregistry.ListOptions{}); reason(err) != mcpregistry.Unreachable || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("nothing listening: %v", err)
	}
}

func TestParseRef(t *testing.T) {
	for _, tc := range []struct{ ref, name, version, err string }{
		{"io.github.a/b", "io.github.a/b", "", ""},
		{"io.github.a/b@1.2.3", "io.github.a/b", "1.2.3", ""},
		{"b", "", "", "want NAMESPACE/NAME"},
		{"io.github.a/b@", "", "", "version"},
		{"a/b/c", "", "", "want NAMESPACE/NAME"},
	} {
		name, version, err := mcpregistry.ParseRef(tc.ref)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.ref, err, tc.err)
			}
			continue
		}
		if err != nil || name != tc.name || version != tc.version {
			t.Errorf("%q: %q %q %v", tc.ref, name, version, err)
		}
	}
}

func TestNewRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"ftp://x", "registry.example", "https://", "https://x?y=1"} {
		if _, err := mcpregistry.New(u, nil); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
}

func TestTimeout(t *testing.T) {
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // no answer until the client gives up
	}))
	t.Cleanup(stall.Close)
	c := client(t, stall.URL, &mcpregistry.Options{Timeout: 200 * time.Millisecond})
	_, err := c.Get(context.Background(), "io.github.x/y", "1.0")
	var re *mcpregistry.Error
	if !errors.As(err, &re) || re.Reason != mcpregistry.Unreachable || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a registry that does not answer: %v", err)
	}
}

func TestRedirectToAnotherHostRefused(t *testing.T) {
	reg := registrytest.Start(t)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(reg.URL, "127.0.0.1", "localhost", 1)+r.URL.RequestURI(), http.StatusFound)
	}))
	t.Cleanup(redirect.Close)
	_, err := client(t, redirect.URL, nil).List(context.Background(), mcpregistry.ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "redirect to another host refused") {
		t.Fatalf("redirect: %v", err)
	}
}
