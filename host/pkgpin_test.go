package host_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// fakeRegistry serves a packument of "pkg" on loopback, its latest
// version settable, or 503 while down.
type fakeRegistry struct {
	mu     sync.Mutex
	latest string
	down   bool
	hits   int
}

func (f *fakeRegistry) set(latest string, down bool) {
	f.mu.Lock()
	f.latest, f.down = latest, down
	f.mu.Unlock()
}

func (f *fakeRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hits++
	if f.down || r.URL.Path != "/pkg" {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	versions := map[string]any{}
	for _, v := range []string{"1.0.15", "1.0.16"} {
		versions[v] = map[string]any{"dist": map[string]string{"integrity": "sha512-" + v}}
	}
	json.NewEncoder(w).Encode(map[string]any{"dist-tags": map[string]string{"latest": f.latest}, "versions": versions})
}

// TestPackagePin: an npx launch is pinned with the exact version the
// registry resolves and launched with it; a version published behind
// "latest" holds the server, shown as a version bump, until approved,
// then runs; an unreachable registry launches the approved version.
func TestPackagePin(t *testing.T) {
	t.Parallel()
	reg := &fakeRegistry{latest: "1.0.15"}
	srv := httptest.NewServer(reg)
	defer srv.Close()
	// "npx" is the test binary under that name: a testkit server that
	// ignores its arguments, which show what it was launched with.
	dir := t.TempDir()
	npx := filepath.Join(dir, "npx")
	if err := os.Symlink(self(t), npx); err != nil {
		t.Fatal(err)
	}
	tag := "pkgpin-" + filepath.Base(dir)
	env := testkit.ChildEnv(testkit.ModeServer)
	env["npm_config_registry"] = srv.URL
	cfg := parse(t, map[string]any{"pkg": map[string]any{"command": npx, "args": []string{"-y", "pkg", tag}, "env": env}}, nil)
	st := openStore(t)
	ctx := context.Background()
	launchedWith := func(version string) bool {
		for _, p := range tagged(tag) {
			if strings.Contains(strings.Join(p.Cmdline, " "), "pkg@"+version) {
				return true
			}
		}
		return false
	}

	rec := &recorder{}
	h := openLaunch(t, st, cfg, rec)
	call(t, h, "pkg__echo", `{"text":"one"}`)
	if !launchedWith("1.0.15") {
		t.Errorf("first start: not launched as pkg@1.0.15")
	}
	h.Close()

	reg.set("1.0.16", false)
	h = openLaunch(t, st, cfg, rec)
	if s := status(h, "pkg"); s.State != host.StateHeld {
		t.Fatalf("a new version behind latest: state %s, want held", s.State)
	}
	held, err := h.Held(ctx, "pkg")
	if err != nil || len(held) != 1 {
		t.Fatalf("Held = %+v, %v", held, err)
	}
	if d := held[0].Diff; !strings.Contains(d, `-   "version": "1.0.15"`) || !strings.Contains(d, `+   "version": "1.0.16"`) {
		t.Errorf("diff of the version bump:\n%s", d)
	}
	h.Close()

	reg.set("1.0.16", true)
	h = openLaunch(t, st, cfg, rec)
	call(t, h, "pkg__echo", `{"text":"outage"}`)
	if !launchedWith("1.0.15") {
		t.Errorf("registry down: not launched as the approved pkg@1.0.15")
	}
	h.Close()

	reg.set("1.0.16", false)
	h = openLaunch(t, st, cfg, rec)
	if _, err := h.Approve(ctx, "pkg"); err != nil {
		t.Fatal(err)
	}
	if !proc.Eventually(10*time.Second, func() bool { _, err := h.Tool("pkg__echo"); return err == nil }) {
		t.Fatalf("after approval: %s", status(h, "pkg").State)
	}
	call(t, h, "pkg__echo", `{"text":"bumped"}`)
	if !launchedWith("1.0.16") {
		t.Errorf("after approval: not launched as pkg@1.0.16")
	}
}

// TestPackagePrefetch: Open resolves the packages of several npx servers
// once each, concurrently (each request waits until the other has
// arrived, or 5 s), and each is launched with its version.
func TestPackagePrefetch(t *testing.T) {
	t.Parallel()
	reg := &fakeRegistry{latest: "1.0.16"}
	var arrived sync.WaitGroup
	arrived.Add(2)
	var together atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		done := make(chan struct{})
		go func() { arrived.Wait(); close(done) }()
		select {
		case <-done:
			together.Store(true)
		case <-time.After(5 * time.Second):
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	dir := t.TempDir()
	npx := filepath.Join(dir, "npx")
	if err := os.Symlink(self(t), npx); err != nil {
		t.Fatal(err)
	}
	env := testkit.ChildEnv(testkit.ModeServer)
	env["npm_config_registry"] = srv.URL
	cfg := parse(t, map[string]any{
		"p1": map[string]any{"command": npx, "args": []string{"-y", "pkg"}, "env": env},
		"p2": map[string]any{"command": npx, "args": []string{"pkg@^1"}, "env": env},
	}, nil)
	h := openLaunch(t, openStore(t), cfg, &recorder{})
	for _, name := range []string{"p1", "p2"} {
		for _, p := range h.ServerPins() {
			if p.Server == name && (p.Package == nil || p.Package.Version != "1.0.16") {
				t.Errorf("%s: package %+v, want 1.0.16", name, p.Package)
			}
		}
	}
	reg.mu.Lock()
	hits := reg.hits
	reg.mu.Unlock()
	if hits != 2 || !together.Load() {
		t.Errorf("registry asked %d times, concurrently: %v; want 2, true", hits, together.Load())
	}
}
