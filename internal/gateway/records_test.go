package gateway_test

import (
	"context"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestCallerInRecords: a call's record names the caller as it
// authenticated and the name its client gave itself, in both eras; a
// caller the gateway cannot tell apart (the static token's) is recorded
// as no one in particular, never as its session.
func TestCallerInRecords(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := parseDoc(t, map[string]any{"mcpServers": map[string]any{
		"s": map[string]any{"command": exe, "env": testkit.ChildEnv(testkit.ModeServer), "trust": "trusted", "protocolVersion": "2025-11-25"},
	}}, nil)
	var mu sync.Mutex
	var recs []host.CallRecord
	h, syncs := openHost(t, cfg, host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, OnCall: func(r host.CallRecord) {
		mu.Lock()
		recs = append(recs, r)
		mu.Unlock()
	}})
	g := gateway.New(h, &gateway.Options{Version: "test"})
	syncs(g)
	base := serveHTTP(t, g, gateway.HTTPOptions{Front: frontdoor.Options{Token: token}})
	for _, c := range []struct{ name, version string }{{"Cursor", "2025-11-25"}, {"Claude Code", ""}} {
		client := mcp.NewClient(&mcp.Implementation{Name: c.name, Version: "1"}, nil)
		var opts *mcp.ClientSessionOptions
		if c.version != "" {
			opts = &mcp.ClientSessionOptions{ProtocolVersion: c.version}
		}
		cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{http.DefaultTransport}}}, opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		defer cs.Close()
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "s__echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var got []string
	for _, r := range recs {
		got = append(got, r.Client+"|"+r.ClientName)
	}
	if len(got) != 2 || got[0] != "|Cursor" || got[1] != "|Claude Code" {
		t.Errorf("records (client|client name) %q, want %q", got, []string{"|Cursor", "|Claude Code"})
	}
}
