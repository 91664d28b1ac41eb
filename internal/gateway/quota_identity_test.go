package gateway_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/jwtauth"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit/issuer"
)

// TestQuotaPerIdentity: a JWT caller's quota is its identity's, not its
// session's: counted in the store, it holds when the caller opens a new
// session, on another replica sharing the store too, while another
// identity keeps a budget of its own.
func TestQuotaPerIdentity(t *testing.T) {
	t.Parallel()
	is := issuer.New(t)
	demo := demoUpstream(t)
	doc := map[string]any{
		"mcpServers": map[string]any{"demo": map[string]any{"url": demo, "trust": "trusted"}},
		"policy":     map[string]any{"quota": map[string]any{"calls": 2, "perMs": 3600000}},
	}
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var endpoints [2]string
	for i := range endpoints {
		h, syncs := openHost(t, parseDoc(t, doc, nil), *hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, db))
		if err := h.Ready(ctx, "demo"); err != nil {
			t.Fatal(err)
		}
		g := gateway.New(h, &gateway.Options{Version: "test"})
		syncs(g)
		g.Sync()
		ln := listen(t)
		endpoints[i] = "http://" + ln.Addr().String() + "/mcp"
		v, err := jwtauth.New(ctx, jwtauth.Options{Issuer: is.URL, Audience: endpoints[i]})
		if err != nil {
			t.Fatal(err)
		}
		serveOn(t, g, ln, gateway.HTTPOptions{Auth: &gateway.AuthOptions{JWT: v, Issuer: is.URL, Resource: endpoints[i]}})
	}
	call := func(endpoint, sub string) *mcp.CallToolResult {
		t.Helper()
		cs := connectWith(t, endpoint, is.Mint(t, issuer.Token{Subject: sub, Audience: []string{endpoint}}), "", nil)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Each call on a session of its own; the second on another replica.
	if call(endpoints[0], "ann").IsError || call(endpoints[1], "ann").IsError {
		t.Fatal("ann's first two calls refused")
	}
	for i, ep := range endpoints {
		if res := call(ep, "ann"); !res.IsError || !strings.Contains(text(t, res), "rate_limited") {
			t.Fatalf("ann's third call, on a new session of replica %d: %s; want rate_limited", i, text(t, res))
		}
	}
	if res := call(endpoints[1], "bob"); res.IsError {
		t.Fatalf("bob's first call: %s", text(t, res))
	}
}
