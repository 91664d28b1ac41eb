package pkgpin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFind(t *testing.T) {
	for _, tc := range []struct {
		command string
		args    []string
		want    Spec
		ok      bool
	}{
		{"npx", []string{"-y", "@modelcontextprotocol/server-filesystem", "/srv"}, Spec{NPM, "@modelcontextprotocol/server-filesystem", "", 1}, true},
		{"/usr/bin/npx", []string{"--yes", "pkg@latest"}, Spec{NPM, "pkg", "latest", 1}, true},
		{"npx", []string{"--registry", "http://r", "pkg@^1.2"}, Spec{NPM, "pkg", "^1.2", 2}, true},
		{"npx.cmd", []string{"@s/p@1.0.0", "--flag"}, Spec{NPM, "@s/p", "1.0.0", 0}, true},
		{"bunx", []string{"pkg"}, Spec{NPM, "pkg", "", 0}, true},
		{"pnpm", []string{"dlx", "pkg@2"}, Spec{NPM, "pkg", "2", 1}, true},
		{"npm", []string{"exec", "--yes", "pkg"}, Spec{NPM, "pkg", "", 2}, true},
		{"uvx", []string{"mcp-server-fetch"}, Spec{PyPI, "mcp-server-fetch", "", 0}, true},
		{"uvx", []string{"--python", "3.12", "mcp-server-time==1.2.0"}, Spec{PyPI, "mcp-server-time", "1.2.0", 2}, true},
		{"uvx", []string{"tool@latest"}, Spec{PyPI, "tool", "latest", 0}, true},
		{"npx", []string{"-p", "pkg", "bin"}, Spec{}, false},
		{"npx", []string{"github:user/repo"}, Spec{}, false},
		{"npx", []string{"./local"}, Spec{}, false},
		{"npx", []string{"pkg@file:../x"}, Spec{}, false},
		{"uvx", []string{"--from", "git+https://x", "tool"}, Spec{}, false},
		{"uvx", []string{"tool>=1"}, Spec{}, false},
		{"pnpm", []string{"run", "x"}, Spec{}, false},
		{"node", []string{"server.js"}, Spec{}, false},
	} {
		got, ok := Find(tc.command, tc.args)
		if ok != tc.ok || got != tc.want {
			t.Errorf("Find(%s %q) = %+v, %v; want %+v, %v", tc.command, tc.args, got, ok, tc.want, tc.ok)
		}
	}
	if got := Rewrite([]string{"-y", "pkg@latest", "x"}, Spec{NPM, "pkg", "latest", 1}, "1.0.16"); !cmp.Equal(got, []string{"-y", "pkg@1.0.16", "x"}) {
		t.Errorf("Rewrite = %q", got)
	}
}

// registry serves packuments and PyPI documents on loopback.
func registry(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/pkg", func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "application/vnd.npm.install-v1+json") {
			t.Errorf("Accept %q", r.Header.Get("Accept"))
		}
		json.NewEncoder(w).Encode(map[string]any{
			"dist-tags": map[string]string{"latest": "1.0.16", "next": "2.0.0-rc.1"},
			"versions": map[string]any{
				"1.0.15":     map[string]any{"dist": map[string]string{"integrity": "sha512-a"}},
				"1.0.16":     map[string]any{"dist": map[string]string{"integrity": "sha512-b"}},
				"1.1.0":      map[string]any{"dist": map[string]string{"integrity": "sha512-c"}},
				"2.0.0-rc.1": map[string]any{"dist": map[string]string{"integrity": "sha512-d"}},
			},
		})
	})
	mux.HandleFunc("/@s%2fp", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"dist-tags": map[string]string{"latest": "0.1.0"},
			"versions": map[string]any{"0.1.0": map[string]any{"dist": map[string]string{"integrity": "sha512-s"}}}})
	})
	mux.HandleFunc("/pypi/tool/json", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"info": {"version": "3.1"}, "urls": [{"digests": {"sha256": "bb"}}, {"digests": {"sha256": "aa"}}]}`))
	})
	mux.HandleFunc("/pypi/tool/3.0/json", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"info": {"version": "3.0"}, "urls": [{"digests": {"sha256": "cc"}}]}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestResolve(t *testing.T) {
	srv := registry(t)
	r := &Resolver{}
	ctx := context.Background()
	for _, tc := range []struct {
		spec    Spec
		base    string
		version string
		integ   string
	}{
		{Spec{Registry: NPM, Name: "pkg"}, srv.URL, "1.0.16", "sha512-b"},
		{Spec{Registry: NPM, Name: "pkg", Want: "latest"}, srv.URL + "/", "1.0.16", "sha512-b"},
		{Spec{Registry: NPM, Name: "pkg", Want: "next"}, srv.URL, "2.0.0-rc.1", "sha512-d"},
		{Spec{Registry: NPM, Name: "pkg", Want: "1.0.15"}, srv.URL, "1.0.15", "sha512-a"},
		{Spec{Registry: NPM, Name: "pkg", Want: "^1"}, srv.URL, "1.1.0", "sha512-c"},
		{Spec{Registry: NPM, Name: "pkg", Want: "~1.0.0"}, srv.URL, "1.0.16", "sha512-b"},
		{Spec{Registry: NPM, Name: "@s/p"}, srv.URL, "0.1.0", "sha512-s"},
		{Spec{Registry: PyPI, Name: "tool"}, srv.URL + "/simple/", "3.1", ""},
		{Spec{Registry: PyPI, Name: "tool", Want: "3.0"}, srv.URL, "3.0", ""},
	} {
		got, err := r.Resolve(ctx, tc.spec, tc.base)
		if err != nil || got.Version != tc.version || (tc.integ != "" && got.Integrity != tc.integ) || got.Integrity == "" {
			t.Errorf("Resolve(%+v) = %+v, %v; want %s %s", tc.spec, got, err, tc.version, tc.integ)
		}
	}
	if _, err := r.Resolve(ctx, Spec{Registry: NPM, Name: "pkg", Want: "^3"}, srv.URL); err == nil {
		t.Error("a range nothing matches resolved")
	}
	if _, err := r.Resolve(ctx, Spec{Registry: NPM, Name: "missing"}, srv.URL); err == nil {
		t.Error("a package the registry does not have resolved")
	}
}

func TestRegistryURL(t *testing.T) {
	npm := Spec{Registry: NPM}
	if got := RegistryURL(npm, map[string]string{"npm_config_registry": "http://a"}, "registry=http://b"); got != "http://a" {
		t.Errorf("server env: %s", got)
	}
	if got := RegistryURL(npm, nil, "; comment\nregistry = http://b\n"); got != "http://b" {
		t.Errorf(".npmrc: %s", got)
	}
	if got := RegistryURL(npm, nil, ""); got != DefaultNPMRegistry {
		t.Errorf("default: %s", got)
	}
	if got := RegistryURL(Spec{Registry: PyPI}, map[string]string{"PIP_INDEX_URL": "http://p/simple"}, ""); got != "http://p/simple" {
		t.Errorf("pypi: %s", got)
	}
}

// BenchmarkResolve measures a resolution against a registry on loopback:
// what package pinning adds to a server's start besides the network's
// round trip.
func BenchmarkResolve(b *testing.B) {
	srv := registry(b)
	r := &Resolver{}
	for b.Loop() {
		if _, err := r.Resolve(context.Background(), Spec{Registry: NPM, Name: "pkg", Want: "^1"}, srv.URL); err != nil {
			b.Fatal(err)
		}
	}
}
