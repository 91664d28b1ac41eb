package gateway_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// serveStored opens a host on servers with the state database st, and a
// gateway over it, and returns a client connected in memory (as over
// stdio), the host and the gateway's log.
func serveStored(t *testing.T, servers map[string]any, st store.Store) (*mcp.ClientSession, *host.Host, *testkit.Buffer) {
	t.Helper()
	cfg := parseServers(t, servers)
	h, syncs := openHost(t, cfg, *hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	logs := new(testkit.Buffer)
	g := gateway.New(h, &gateway.Options{Version: "test", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	syncs(g)
	return inMemory(t, g, nil, ""), h, logs
}

func parseServers(t *testing.T, servers map[string]any) *config.Config {
	t.Helper()
	return parseDoc(t, map[string]any{"mcpServers": servers}, nil)
}

func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestHeldToolThroughTheGateway: a call of a tool held back because its
// definition changed (the sleeper changes echo's description on its
// second start) is an isError result with definition_changed that names
// the tool held for review, not "unknown tool", and never the command
// that approves it: that is a person's to run.
func TestHeldToolThroughTheGateway(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t)
	env := testkit.ChildEnv(testkit.ModeSleeper)
	env[testkit.MarkVar] = filepath.Join(t.TempDir(), "starts")
	servers := map[string]any{"sleeper": map[string]any{"command": exe, "env": env}}

	// The first start pins echo's definition.
	cfg := parseServers(t, servers)
	h, err := host.Open(context.Background(), cfg, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Call(context.Background(), "sleeper__echo", json.RawMessage(`{"text":"first"}`), nil); err != nil {
		t.Fatal(err)
	}
	h.Close()

	cs, h, _ := serveStored(t, servers, st)
	ctx := context.Background()
	// The second start (on first use) shows the changed echo.
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sleeper__slow", Arguments: map[string]any{"steps": 1, "delay_ms": 1}}); err != nil || res.IsError {
		t.Fatalf("slow: %+v, %v", res, err)
	}
	if !proc.Eventually(5*time.Second, func() bool {
		return !slices.ContainsFunc(h.Tools(), func(t host.Tool) bool { return t.Name == "sleeper__echo" })
	}) {
		t.Fatal("echo is not held back")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sleeper__echo", Arguments: map[string]any{"text": "x"}})
	if err != nil {
		t.Fatalf("call of the held tool: %v, want an isError result", err)
	}
	if got := text(t, res); !res.IsError || !strings.Contains(got, "held for review") || !strings.Contains(got, "sleeper__echo") || strings.Contains(got, "approve ") {
		t.Errorf("call of the held tool: isError %v, %q; want the tool named held for review, and no approve command", res.IsError, got)
	}
	if code := errorCode(res); code != "definition_changed" {
		t.Errorf("code %q, want definition_changed", code)
	}
	// A name that is nobody's is still unknown.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sleeper__nothing", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("unknown tool: %v, want unknown tool", err)
	}
}

// TestInjectionHeldThroughTheGateway: the poisoned tools of an untrusted
// server are not listed to the client, and a call of one is an isError
// result with held_injection saying it is held for review, never how to
// release it; the server's benign tool is listed and works.
func TestInjectionHeldThroughTheGateway(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	servers := map[string]any{"hostile": map[string]any{"command": exe, "env": hostile.ChildEnv(hostile.ModePoison)}}
	cs, _, _ := serveStored(t, servers, openStore(t))
	ctx := context.Background()
	listed := map[string]bool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed[tool.Name] = true
	}
	if listed["hostile__add_numbers"] || !listed["hostile__ok_echo"] {
		t.Errorf("tools/list = %v: want hostile__ok_echo and not the poisoned hostile__add_numbers", listed)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hostile__add_numbers", Arguments: map[string]any{"a": 1, "b": 2}})
	if err != nil {
		t.Fatalf("call of the held tool: %v, want an isError result", err)
	}
	if got := text(t, res); !res.IsError || !strings.Contains(got, "held for review") || strings.Contains(got, "approve ") || strings.Contains(got, "onInjection") {
		t.Errorf("call of the held tool: isError %v, %q; want it held for review, and not how to release it", res.IsError, got)
	}
	if code := errorCode(res); code != "held_injection" {
		t.Errorf("code %q, want held_injection", code)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hostile__ok_echo", Arguments: map[string]any{"text": "benign"}}); err != nil || res.IsError || text(t, res) != "benign" {
		t.Errorf("ok_echo: %+v, %v", res, err)
	}
}

// TestStderrNeverReachesTheClient: a server that fails to start on first
// use (advertised from its saved catalogue) and says why on stderr: the
// client gets the code and a message naming the server, not the stderr;
// the host's status and the gateway's log keep it for the operator.
func TestStderrNeverReachesTheClient(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t)
	servers := map[string]any{"e": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeExit), "startupAttempts": 1}}
	cfg := parseServers(t, servers)
	cat, err := json.Marshal(&catalog.Catalog{Tools: []*mcp.Tool{{Name: "echo", InputSchema: map[string]any{"type": "object"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SaveCatalog(context.Background(), &store.Catalog{Server: "e", Fingerprint: cfg.Servers[0].Fingerprint(), Data: cat}); err != nil {
		t.Fatal(err)
	}
	cs, h, logs := serveStored(t, servers, st)
	const secret = "cannot open database"
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "e__echo", Arguments: map[string]any{"text": "x"}})
	if err != nil || !res.IsError {
		t.Fatalf("call of the failing server: %+v, %v; want an isError result", res, err)
	}
	if got := text(t, res); strings.Contains(got, secret) || strings.Contains(got, "stderr") || !strings.Contains(got, `server "e"`) {
		t.Errorf("isError text %q: want the server named and its stderr left out", got)
	}
	if code := errorCode(res); code == "" {
		t.Error("no code in the result's _meta")
	}
	if !strings.Contains(logs.String(), secret) {
		t.Errorf("the gateway's log lacks the stderr: %s", logs.String())
	}
	for _, s := range h.Servers() {
		if s.Name == "e" && !strings.Contains(s.LastError, secret) {
			t.Errorf("status of e: last error %q lacks the stderr", s.LastError)
		}
	}
}

// TestNewToolBehindSavedCatalogue: a server given a new tool behind an
// unchanged configuration is advertised from its saved catalogue, which
// lacks the tool, so the gateway has not registered it; a client's call of
// it has the server discovered again and runs, and later lists show it.
func TestNewToolBehindSavedCatalogue(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools")
	write := func(lines string) {
		if err := os.WriteFile(tools, []byte(lines), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("echo\tEcho.\n")
	env := testkit.ChildEnv(testkit.ModeListed)
	env[testkit.ToolsVar], env[testkit.MarkVar] = tools, filepath.Join(dir, "mark")
	servers := map[string]any{"s": map[string]any{"command": exe, "env": env}}
	st := openStore(t)

	// The first run saves the catalogue.
	h, err := host.Open(context.Background(), parseServers(t, servers), hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	if err != nil {
		t.Fatal(err)
	}
	h.Close()

	write("echo\tEcho.\nfresh\tA tool added since.\n")
	cs, _, _ := serveStored(t, servers, st)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s__fresh", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatalf("call of the new tool: %v", err)
	}
	if got := text(t, res); res.IsError || got != "fresh: hi" {
		t.Errorf("call of the new tool: isError %v, %q; want %q", res.IsError, got, "fresh: hi")
	}
	if !proc.Eventually(5*time.Second, func() bool {
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			return false
		}
		for _, tool := range lt.Tools {
			if tool.Name == "s__fresh" {
				return true
			}
		}
		return false
	}) {
		t.Error("the new tool is not listed after the call found it")
	}
	// A name that is nobody's is still unknown.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s__nothing", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("unknown tool: %v, want unknown tool", err)
	}
}
