package host_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// npxServerJS is a tiny stdio MCP server (newline-delimited JSON-RPC)
// whose one tool says which version of its package runs.
const npxServerJS = `#!/usr/bin/env node
const version = require("./package.json").version;
const rl = require("readline").createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
rl.on("line", (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return;
  switch (m.method) {
  case "initialize":
    return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion,
      capabilities: { tools: {} }, serverInfo: { name: "sb-pin-demo", version } } });
  case "tools/list":
    return send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "version",
      description: "Say which version runs.", inputSchema: { type: "object" } }] } });
  case "tools/call":
    return send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "sb-pin-demo " + version }] } });
  case "ping":
    return send({ jsonrpc: "2.0", id: m.id, result: {} });
  }
  send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "method not found" } });
});
`

// npmTarball packs the package at version as npm publishes it.
func npmTarball(t *testing.T, version string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	files := map[string]string{
		"package/package.json": `{"name": "sb-pin-demo", "version": "` + version + `", "bin": {"sb-pin-demo": "index.js"}}`,
		"package/index.js":     npxServerJS,
	}
	for _, name := range []string{"package/package.json", "package/index.js"} {
		body := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), ModTime: time.Unix(1e9, 0)}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// TestPackagePinNpx runs a real npx against a registry on loopback that
// serves a package built here: the approved version runs, a newer one
// behind "latest" is held until approved, then runs.
func TestPackagePinNpx(t *testing.T) {
	t.Parallel()
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("npx not found")
	}
	tarballs := map[string][]byte{"1.0.0": npmTarball(t, "1.0.0"), "1.0.1": npmTarball(t, "1.0.1")}
	var mu sync.Mutex
	latest := "1.0.0"
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		for v, tgz := range tarballs {
			if r.URL.Path == "/sb-pin-demo/-/sb-pin-demo-"+v+".tgz" {
				w.Write(tgz)
				return
			}
		}
		if r.URL.Path != "/sb-pin-demo" {
			http.NotFound(w, r)
			return
		}
		versions := map[string]any{}
		for v, tgz := range tarballs {
			s512 := sha512.Sum512(tgz)
			s1 := sha1.Sum(tgz)
			versions[v] = map[string]any{"name": "sb-pin-demo", "version": v, "bin": map[string]string{"sb-pin-demo": "index.js"},
				"dist": map[string]string{"integrity": "sha512-" + base64.StdEncoding.EncodeToString(s512[:]), "shasum": hex.EncodeToString(s1[:]),
					"tarball": srv.URL + "/sb-pin-demo/-/sb-pin-demo-" + v + ".tgz"}}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"name": "sb-pin-demo", "dist-tags": map[string]string{"latest": latest}, "versions": versions})
	}))
	defer srv.Close()
	dir := t.TempDir()
	npmrc := filepath.Join(dir, "npmrc")
	os.WriteFile(npmrc, nil, 0o600)
	cfg := parse(t, map[string]any{"demo": map[string]any{
		"command": npx, "args": []string{"-y", "sb-pin-demo"},
		"env": map[string]string{
			"npm_config_registry": srv.URL, "npm_config_cache": filepath.Join(dir, "cache"), "npm_config_userconfig": npmrc,
			"npm_config_update_notifier": "false", "npm_config_audit": "false", "npm_config_fund": "false",
		},
		"protocolVersion": "2025-06-18", "startupTimeoutMs": 60000,
	}}, nil)
	st := openStore(t)
	ctx := context.Background()

	start := time.Now()
	h := openLaunch(t, st, cfg, &recorder{})
	t.Logf("first open, npx fetching the package: %v", time.Since(start))
	if got := call(t, h, "demo__version", `{}`).Text; got != "sb-pin-demo 1.0.0" {
		t.Fatalf("first start runs %q, want sb-pin-demo 1.0.0", got)
	}
	h.Close()

	mu.Lock()
	latest = "1.0.1"
	mu.Unlock()
	h = openLaunch(t, st, cfg, &recorder{})
	if _, err := h.Call(ctx, "demo__version", []byte(`{}`), nil); err == nil || status(h, "demo").State != host.StateHeld {
		t.Fatalf("1.0.1 published: call %v, state %s; want held", err, status(h, "demo").State)
	}
	if _, err := h.Approve(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	if !proc.Eventually(60*time.Second, func() bool { _, err := h.Tool("demo__version"); return err == nil }) {
		t.Fatalf("after approval: %+v", status(h, "demo"))
	}
	if got := call(t, h, "demo__version", `{}`).Text; !strings.Contains(got, "1.0.1") {
		t.Fatalf("after approval runs %q, want 1.0.1", got)
	}
}
