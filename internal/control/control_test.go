package control_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/demo"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

func TestMain(m *testing.M) {
	testkit.MaybeRunChild()
	if len(os.Args) > 1 && os.Args[1] == "demo-server" {
		demo.ServeStdio(context.Background(), "test") //nolint:errcheck
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// api serves the control API of a real host (the demo server as a
// subprocess, a SQLite store), without a configuration editor.
func api(t *testing.T) (*httptest.Server, *host.Host) {
	t.Helper()
	exe, _ := os.Executable()
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"command": exe, "args": []string{"demo-server"}, "eager": true},
	}})
	cfg, err := config.Parse(doc, "test.json", &config.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, err := host.Open(context.Background(), cfg, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	srv := httptest.NewServer(control.New(control.Options{Host: h, Store: st}).Handler())
	t.Cleanup(srv.Close)
	return srv, h
}

// TestAPI: each operation answers JSON, and each failure its fault code
// with the matching HTTP status; the client turns them back into faults.
func TestAPI(t *testing.T) {
	srv, _ := api(t)
	tests := []struct {
		method, path, body string
		status             int
		want               string // in the body
	}{
		{"GET", "/api/servers", "", 200, `"name":"demo"`},
		{"GET", "/api/live", "", 200, `[]`},
		{"GET", "/api/held", "", 200, `[]`},
		{"GET", "/api/calls?limit=5", "", 200, `[]`},
		{"GET", "/api/calls?limit=x", "", 400, `"code":"invalid_input"`},
		{"POST", "/api/servers/nope/restart", "{}", 404, `"code":"not_found"`},
		{"POST", "/api/servers/demo/disable", "{}", 503, `does not edit its configuration`},
		{"POST", "/api/approve", "{}", 400, `"code":"invalid_input"`},
		{"POST", "/api/approve", `{"target":"demo"}`, 404, `nothing to approve for demo`},
		{"POST", "/api/reject", `{"target":"demo"}`, 400, `reject names one tool`},
		{"GET", "/api/held-calls", "", 200, `[]`},
		{"GET", "/api/held-calls?state=pending", "", 200, `[]`},
		{"POST", "/api/held-calls/nope/approve", `{"by":"alice"}`, 404, `no held call \"nope\"`},
		{"POST", "/api/held-calls/nope/deny", `not json`, 400, `"code":"invalid_input"`},
		{"GET", "/api/other", "", 404, `no such operation`},
		{"DELETE", "/api/servers", "", 404, `"message":"no such operation"`},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.want) {
			t.Errorf("%s %s: %d %s, want %d with %q", tt.method, tt.path, resp.StatusCode, b, tt.status, tt.want)
		}
	}
	c := control.NewClient(srv.URL, "")
	st, err := c.Status(context.Background())
	if err != nil || len(st.Servers) != 1 || st.Servers[0].State != host.StateReady || st.Servers[0].PID == 0 || st.Servers[0].TokenCost == 0 {
		t.Errorf("Status: %+v, %v", st, err)
	}
	if err := c.Restart(context.Background(), "nope"); fault.CodeOf(err) != fault.CodeNotFound {
		t.Errorf("Restart(nope): %v", err)
	}
	if err := c.Restart(context.Background(), "demo"); err != nil {
		t.Errorf("Restart(demo): %v", err)
	}
}

// TestRuntime: Find reaches the gateway that a runtime file names once it
// answers, with the token from the file it names; a missing file, a dead
// process or nothing answering is ErrNoGateway; the file is removed by
// its own gateway only.
func TestRuntime(t *testing.T) {
	home := t.TempDir()
	none := func(string) (string, bool) { return "", false }
	if _, _, err := control.Find(context.Background(), home, none); !errors.Is(err, control.ErrNoGateway) {
		t.Errorf("no file: %v", err)
	}
	var gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/servers" {
			gotAuth = r.Header.Get("Authorization")
			io.WriteString(w, `{"servers":[]}`)
			return
		}
		io.WriteString(w, "ok\n")
	}))
	defer srv.Close()
	tokFile := filepath.Join(home, "token")
	os.WriteFile(tokFile, []byte("the-token-0123456789abcdef\n"), 0o600)
	remove, err := control.WriteRuntime(home, control.Runtime{URL: srv.URL, PID: os.Getpid(), TokenFile: tokFile})
	if err != nil {
		t.Fatal(err)
	}
	c, rt, err := control.Find(context.Background(), home, none)
	if err != nil || rt.PID != os.Getpid() {
		t.Fatalf("Find: %v", err)
	}
	if _, err := c.Status(context.Background()); err != nil || gotAuth != "Bearer the-token-0123456789abcdef" {
		t.Errorf("Status: %v, Authorization %q", err, gotAuth)
	}
	for name, rt := range map[string]control.Runtime{
		"dead process":    {URL: srv.URL, PID: 1 << 22},
		"nothing answers": {URL: "http://127.0.0.1:1", PID: os.Getpid()},
	} {
		data, _ := json.Marshal(rt)
		os.WriteFile(filepath.Join(home, control.RuntimeFile), data, 0o600)
		if _, _, err := control.Find(context.Background(), home, none); !errors.Is(err, control.ErrNoGateway) {
			t.Errorf("%s: %v", name, err)
		}
	}
	remove() // another gateway's file now: kept
	if _, err := os.Stat(filepath.Join(home, control.RuntimeFile)); err != nil {
		t.Errorf("remove took another gateway's file: %v", err)
	}
	data, _ := json.Marshal(control.Runtime{URL: srv.URL, PID: os.Getpid(), TokenEnv: "GW_TOKEN"})
	os.WriteFile(filepath.Join(home, control.RuntimeFile), data, 0o600)
	if _, _, err := control.Find(context.Background(), home, none); err == nil || errors.Is(err, control.ErrNoGateway) || !strings.Contains(err.Error(), "$GW_TOKEN") {
		t.Errorf("token variable unset: %v", err)
	}
}
