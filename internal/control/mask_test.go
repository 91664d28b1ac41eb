package control_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestServersMasked: servers that echo their configured secrets to stderr
// (one failing at start-up, one running) show none of them through the
// control API, in their status or in a restart's error; "***" stands in
// their place.
func TestServersMasked(t *testing.T) {
	exe, _ := os.Executable()
	server := func(mode string) map[string]any {
		env := testkit.ChildEnv(mode)
		env["API_TOKEN"] = "${TOK}"
		env[testkit.LeakyURLVar] = "https://alice:${PW}@127.0.0.1:9/x?api_key=querysecret-api-4"
		return map[string]any{"command": exe, "args": []string{"--api-key", "${ARG}"}, "env": env, "startupAttempts": 1, "eager": true}
	}
	secrets := map[string]string{"ARG": "argsecret-api-1", "TOK": "envsecret-api-2", "PW": "urlsecret-api-3"}
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"broken": server(testkit.ModeLeaky),
		"chatty": server(testkit.ModeLeakyServer),
	}})
	cfg, err := config.Parse(doc, "test.json", &config.LoadOptions{LookupEnv: func(k string) (string, bool) { v, ok := secrets[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Open(context.Background(), cfg, &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Ready(ctx, "chatty"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(control.New(control.Options{Host: h}).Handler())
	t.Cleanup(srv.Close)
	for _, op := range []struct{ method, path string }{
		{"GET", "/api/servers"},
		{"POST", "/api/servers/broken/restart"},
	} {
		req, _ := http.NewRequest(op.method, srv.URL+op.path, strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body := string(b)
		if !strings.Contains(body, "https://alice:***@127.0.0.1:9/x?api_key=***") || !strings.Contains(body, "--api-key ***") {
			t.Errorf("%s %s is not masked:\n%s", op.method, op.path, body)
		}
		for _, s := range append(slices.Collect(maps.Values(secrets)), "querysecret-api-4") {
			if strings.Contains(body, s) {
				t.Errorf("%s %s holds %q:\n%s", op.method, op.path, s, body)
			}
		}
	}
}
