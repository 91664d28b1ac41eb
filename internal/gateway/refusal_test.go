package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// syncBuffer is a log destination safe for the gateway's goroutines.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serveStored opens a host on servers with the state database st, and a
// gateway over it, and returns a client connected in memory (as over
// stdio), the host and the gateway's log.
func serveStored(t *testing.T, servers map[string]any, st store.Store) (*mcp.ClientSession, *host.Host, *syncBuffer) {
	t.Helper()
	cfg := parseServers(t, servers)
	var gw atomic.Pointer[gateway.Gateway]
	h, err := host.Open(context.Background(), cfg, &host.Options{StopTimeout: 500 * time.Millisecond, Store: st,
		OnChange: func() {
			if g := gw.Load(); g != nil {
				g.Sync()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	logs := newSyncBuffer()
	g := gateway.New(h, &gateway.Options{Version: "test", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	gw.Store(g)
	ct, sst := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := g.Server().Connect(ctx, sst, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, h, logs
}

func parseServers(t *testing.T, servers map[string]any) *config.Config {
	t.Helper()
	data, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data, "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
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

// TestStderrNeverReachesTheClient: a server that fails to start on first
// use (advertised from its saved catalogue) and says why on stderr: the
// client gets the code and a message naming the server, not the stderr;
// the host's status and the gateway's log keep it for the operator.
func TestStderrNeverReachesTheClient(t *testing.T) {
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
