package gateway_test

import (
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
)

// TestSessionCapsByClient: the gateway counts legacy sessions by caller,
// over the endpoint and its profiles together. A named client past its
// own cap loses its idlest session; past the global cap another client's
// new session is refused with 503 and Retry-After, and nobody's is
// closed for it.
func TestSessionCapsByClient(t *testing.T) {
	t.Parallel()
	const aToken, bToken = "client-a-token-0123456789abcdef", "client-b-token-0123456789abcdef"
	top := map[string]any{
		"profiles": map[string]any{"p": map[string]any{"servers": []string{"demo"}}},
		"clients": map[string]any{
			"a": map[string]any{"tokenEnv": "A_TOKEN"},
			"b": map[string]any{"tokenEnv": "B_TOKEN"},
		},
	}
	gw := newAuthGatewayWith(t, top, map[string]string{"A_TOKEN": aToken, "B_TOKEN": bToken}, nil,
		gateway.HTTPOptions{MaxSessions: 3, MaxSessionsPerClient: 2},
		func(string) *gateway.AuthOptions { return &gateway.AuthOptions{} })
	endpoint := gw.base + "/mcp"

	first, err := connectAsVersion(t, endpoint, aToken, "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	second, err := connectAsVersion(t, gw.base+"/mcp/p", aToken, "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Ping(t.Context(), nil); err != nil { // used after the first
		t.Fatal(err)
	}
	b, err := connectAsVersion(t, endpoint, bToken, "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	// a's third session, at its cap of two: its idlest (the first) goes.
	third, err := connectAsVersion(t, endpoint, aToken, "2025-11-25")
	if err != nil {
		t.Fatalf("a's third session: %v", err)
	}
	if err := first.Ping(t.Context(), nil); err == nil {
		t.Error("a's idlest session still answers after a third was opened at its cap")
	}
	// b's second session, at the global cap: refused, and a keeps its own.
	resp := initialize(t, endpoint, bToken)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("past the global cap: %s, Retry-After %q; want 503 with Retry-After", resp.Status, resp.Header.Get("Retry-After"))
	}
	for name, cs := range map[string]*mcp.ClientSession{"a's second": second, "a's third": third, "b's": b} {
		if err := cs.Ping(t.Context(), nil); err != nil {
			t.Errorf("%s session: %v", name, err)
		}
	}
}
