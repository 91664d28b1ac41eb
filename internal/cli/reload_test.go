package cli_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestServeWatchReloads: serve --watch picks up an edited configuration
// (a new server appears to connected clients), and an invalid edit keeps
// the running configuration with a message saying why.
func TestServeWatchReloads(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	write := func(path string, servers map[string]any) {
		b, _ := json.Marshal(map[string]any{"mcpServers": servers})
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a := map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer)}
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{"a": a}})
	ctx := t.Context()
	home := t.TempDir()
	g := startGateway(t, nil, "", "--home", home, "--config", path, "--watch")
	stderr := g.stderr
	cs := g.session(t, nil)
	has := func(name string) bool { return lists(ctx, cs, name) }
	// serve does not wait for its servers: a joins when it is ready.
	if !proc.Eventually(15*time.Second, func() bool { return has("a__echo") }) {
		t.Fatal("a__echo not listed")
	}
	// The mtime has a coarse resolution on some file systems: make sure
	// the size changes too.
	write(path, map[string]any{"a": a, "bb": a})
	// Added by hand: held until a person approves it.
	if !proc.Eventually(15*time.Second, func() bool { return strings.Contains(stderr.String(), "switchboard approve bb") }) {
		t.Fatalf("the added server was not held:\n%s", stderr.String())
	}
	if r := runWith(t, cli.Env{Args: []string{"approve", "bb", "--home", home, "--config", path}, LookupEnv: func(string) (string, bool) { return "", false }, Version: "test"}); r.code != 0 || !strings.Contains(r.stdout, "server launch: new, not approved before") {
		t.Fatalf("approve bb, through the gateway: exit %d\n%s%s\nwant the launch shown", r.code, r.stdout, r.stderr)
	}
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
	if c := g.stop(); c != 0 {
		t.Errorf("exit %d", c)
	}
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
