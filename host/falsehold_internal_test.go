package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/ingest"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// maxFalseHolds is the share of real, honest tools that vetting may hold
// for review: a hold a user meets on every other server teaches them to
// approve blindly or to switch vetting off.
const maxFalseHolds = 0.005

// heldRealTools loads the tool lists of dir (real servers' tools/list,
// captured) into one configuration of untrusted servers, vets and scans
// them as the host does, and returns the tools that would be held, as
// "server:tool: rule: match", and the number of tools.
func heldRealTools(t *testing.T, dir string) (held []string, total int) {
	t.Helper()
	files := testkit.ToolFiles(t, dir)
	servers := map[string]any{}
	for _, tf := range files {
		servers[tf.Server] = map[string]any{"command": "true"}
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	cfg, err := config.Parse(data, "falsehold.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	cats := map[string]*catalog.Catalog{}
	for _, tf := range files {
		raw := &catalog.Catalog{}
		for _, tl := range tf.Tools {
			raw.Tools = append(raw.Tools, &mcp.Tool{Name: tl.Name, Title: tl.Title, Description: tl.Description, InputSchema: tl.InputSchema})
		}
		total += len(raw.Tools)
		cats[tf.Server] = ingest.Vet(cfg.Server(tf.Server), cfg.Security, raw).Catalog
	}
	flagged, _ := scanServers(cfg.Servers, cats)
	for server, sc := range flagged {
		for tool, flags := range sc.byTool {
			if !ingest.Directive(flags) {
				continue
			}
			var why []string
			for _, f := range flags {
				why = append(why, f.String())
			}
			held = append(held, server+":"+tool+": "+strings.Join(why, "; "))
		}
	}
	slices.Sort(held)
	return held, total
}

// TestFalseHoldsOnRealServers: of the tools of the search dev set's real
// servers (59 npm servers, all in one configuration, all untrusted), at
// most maxFalseHolds are held for an injection pattern. Every tool there
// is honest, so every hold is a false one.
//
// A set nobody tuned on is measured the same way: capture the tool lists
// of other servers into a directory with the dev set's dump command
// (internal/search/testdata/devset/dump, its -dir naming a servers.json
// of your own) and name that directory in SWITCHBOARD_UNSEEN_TOOLS.
func TestFalseHoldsOnRealServers(t *testing.T) {
	t.Parallel()
	dirs := []string{
		filepath.Join("..", "internal", "search", "testdata", "devset", "tools"),
		filepath.Join("..", "internal", "search", "testdata", "tools"),
		filepath.Join("testdata", "falsehold", "tools"), // see its README
	}
	if dir := os.Getenv("SWITCHBOARD_UNSEEN_TOOLS"); dir != "" {
		dirs = append(dirs, dir)
	}
	for _, dir := range dirs {
		held, total := heldRealTools(t, dir)
		rate := float64(len(held)) / float64(total)
		t.Logf("%s: %d of %d tools held (%.2f %%)", dir, len(held), total, 100*rate)
		for _, h := range held {
			t.Logf("  held %s", h)
		}
		if rate > maxFalseHolds {
			t.Errorf("%s: %d of %d real tools held (%.2f %%), want at most %.1f %%", dir, len(held), total, 100*rate, 100*maxFalseHolds)
		}
	}
}
