package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestServeWatchReloads: serve --watch picks up an edited configuration
// (a new server appears to connected clients), and an invalid edit keeps
// the running configuration with a message saying why.
func TestServeWatchReloads(t *testing.T) {
	exe, _ := os.Executable()
	write := func(path string, servers map[string]any) {
		b, _ := json.Marshal(map[string]any{"mcpServers": servers})
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a := map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer)}
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{"a": a}})
	var stderr testkit.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- cli.Run(ctx, cli.Env{
			Args:   []string{"serve", "--http", "127.0.0.1:0", "--home", t.TempDir(), "--config", path, "--watch"},
			Stdout: nopWriter{}, Stderr: &stderr, Executable: exe, Version: "test",
			LookupEnv: func(string) (string, bool) { return "", false },
		})
	}()
	re := regexp.MustCompile(`endpoint: (http://\S+)[\s\S]*token: .*kept in .*: (\S+)`)
	var m []string
	if !proc.Eventually(20*time.Second, func() bool { m = re.FindStringSubmatch(stderr.String()); return m != nil }) {
		t.Fatalf("no banner:\n%s", stderr.String())
	}
	hc := &http.Client{Transport: headerRT{"Authorization", "Bearer " + m[2]}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: m[1], HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	has := func(name string) bool {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return false
		}
		for _, tl := range res.Tools {
			if tl.Name == name {
				return true
			}
		}
		return false
	}
	// serve does not wait for its servers: a joins when it is ready.
	if !proc.Eventually(15*time.Second, func() bool { return has("a__echo") }) {
		t.Fatal("a__echo not listed")
	}
	// The mtime has a coarse resolution on some file systems: make sure
	// the size changes too.
	write(path, map[string]any{"a": a, "bb": a})
	if !proc.Eventually(15*time.Second, func() bool { return has("bb__echo") }) {
		t.Fatalf("the added server never appeared:\n%s", stderr.String())
	}
	os.WriteFile(path, []byte(`{"mcpServers": {"a": {"comand": "x"}}}`), 0o600)
	// The watch may catch the file half written (truncated, then
	// written), which is refused as empty first: wait for the reason.
	if !proc.Eventually(15*time.Second, func() bool {
		return strings.Contains(stderr.String(), "configuration not reloaded") && strings.Contains(stderr.String(), `unknown field "comand"`)
	}) {
		t.Fatalf("no message for the invalid edit:\n%s", stderr.String())
	}
	if !has("bb__echo") || !strings.Contains(stderr.String(), `unknown field "comand"`) {
		t.Errorf("the running configuration did not stay, or the reason is missing:\n%s", stderr.String())
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit %d", c)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
