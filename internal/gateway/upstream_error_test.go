package gateway_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
)

// TestUpstreamErrorTextIsCleaned: an upstream's JSON-RPC error message
// holding ESC sequences (OSC 52, which writes a terminal's clipboard, and
// colours), C0 and C1 controls, bidi overrides and Unicode tag characters
// reaches the client inside the gateway's isError result with all of them
// stripped, its visible words kept.
func TestUpstreamErrorTextIsCleaned(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, map[string]any{"hostile": map[string]any{"command": exe, "env": hostile.ChildEnv(hostile.ModeUnicode)}})
	cs, _ := f.connect(t, "")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hostile__rpc_error", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("rpc_error: %v, want an isError result", err)
	}
	got := text(t, res)
	if !res.IsError || !strings.Contains(got, "Switchboard could not complete") || !strings.Contains(got, "Refused: Formats text.") {
		t.Errorf("rpc_error: isError %v, %q; want the cleaned message", res.IsError, got)
	}
	for _, r := range got {
		if hidden(r) {
			t.Errorf("the error text holds %U: %+q", r, got)
			break
		}
	}
}

// hidden reports whether r is a character a reader cannot see but a
// terminal or a model acts on.
func hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || (r >= 0x7f && r <= 0x9f):
		return true
	case r >= 0xe0000 && r <= 0xe007f:
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r)
}
