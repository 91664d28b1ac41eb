package cli_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/control"
)

// runningGateway makes it look as if a gateway served h's home: a runtime
// file naming a loopback server that answers the liveness check.
func runningGateway(t *testing.T, h homes, rt control.Runtime) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	rt.URL, rt.PID = srv.URL, os.Getpid()
	remove, err := control.WriteRuntime(h.sb, rt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestConnectFitsTheRunningGateway: connect writes the address and the kind
// of token of the gateway that runs for the home, warns when --http names
// another address, and says that a client which keeps its own servers
// beside the gateway shows their tools twice.
func TestConnectFitsTheRunningGateway(t *testing.T) {
	t.Parallel()
	t.Run("address and token file", func(t *testing.T) {
		h := newHomes(t)
		put(t, h.user, ".cursor/mcp.json", []byte(`{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`))
		addr := runningGateway(t, h, control.Runtime{TokenFile: filepath.Join(h.sb, cli.TokenFile)})
		r := h.run(t, "connect", "cursor")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		e := readEntry(t, "cursor", filepath.Join(h.user, ".cursor/mcp.json"))
		tok, _ := os.ReadFile(filepath.Join(h.sb, cli.TokenFile))
		if e.URL != "http://"+addr+"/mcp" || e.Headers["Authorization"] != "Bearer "+strings.TrimSpace(string(tok)) {
			t.Errorf("entry = %+v", e)
		}
		if !strings.Contains(r.stdout, "still runs its own 1 server beside the gateway") || !strings.Contains(r.stdout, "connect cursor --move") {
			t.Errorf("no word of the client's own servers:\n%s", r.stdout)
		}
	})
	t.Run("another address", func(t *testing.T) {
		h := newHomes(t)
		addr := runningGateway(t, h, control.Runtime{})
		r := h.run(t, "connect", "cursor", "--http", "9555")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if want := "serves on " + addr + ", not on 127.0.0.1:9555"; !strings.Contains(r.stderr, want) {
			t.Errorf("no %q in\n%s", want, r.stderr)
		}
		if e := readEntry(t, "cursor", filepath.Join(h.user, ".cursor/mcp.json")); e.URL != "http://127.0.0.1:9555/mcp" {
			t.Errorf("entry = %+v", e)
		}
		if strings.Contains(r.stdout, "still runs its own") {
			t.Errorf("a client without servers of its own:\n%s", r.stdout)
		}
	})
	t.Run("token from a variable", func(t *testing.T) {
		h := newHomes(t)
		_, port, _ := net.SplitHostPort(runningGateway(t, h, control.Runtime{TokenEnv: "GW_TOKEN"}))
		r := h.run(t, "connect", "cursor", "--json")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		e := readEntry(t, "cursor", filepath.Join(h.user, ".cursor/mcp.json"))
		if e.URL != "http://127.0.0.1:"+port+"/mcp" || e.Headers["Authorization"] != "Bearer ${GW_TOKEN}" {
			t.Errorf("entry = %+v", e)
		}
		if _, err := os.Stat(filepath.Join(h.sb, cli.TokenFile)); err == nil {
			t.Errorf("a token was made in the home for a gateway that takes its own from a variable")
		}
	})
	t.Run("no gateway", func(t *testing.T) {
		h := newHomes(t)
		if r := h.run(t, "connect", "cursor"); r.code != 0 || strings.Contains(r.stderr, "warning") {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if e := readEntry(t, "cursor", filepath.Join(h.user, ".cursor/mcp.json")); e.URL != "http://127.0.0.1:8939/mcp" {
			t.Errorf("entry = %+v", e)
		}
	})
}
