// Package peers locates the real MCP servers from npm that tests run
// against (installed by scripts/peers-install.sh).
//
// $SWITCHBOARD_PEERS names the install directory. Without it a test that
// needs a peer is skipped with a message saying how to install them, unless
// $SWITCHBOARD_REQUIRE_PEERS=1 (set by scripts/test.sh, so in CI), where a
// missing peer fails the test: CI never silently skips real peers.
//
// Only tests import this package.
package peers

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The entry points of the pinned packages, relative to the install dir.
const (
	Everything = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
	Filesystem = "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
	Memory     = "node_modules/@modelcontextprotocol/server-memory/dist/index.js"
)

// Script returns the node binary and the absolute path of a peer's entry
// point, or skips (or fails, when peers are required) the test.
func Script(t testing.TB, rel string) (node, script string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("SWITCHBOARD_REQUIRE_PEERS") == "1" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format+" (run scripts/peers-install.sh and set SWITCHBOARD_PEERS)", args...)
	}
	dir := os.Getenv("SWITCHBOARD_PEERS")
	if dir == "" {
		missing("SWITCHBOARD_PEERS is not set")
		return "", ""
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found: %v", err)
		return "", ""
	}
	script = filepath.Join(dir, rel)
	if _, err := os.Stat(script); err != nil {
		missing("peer not installed: %v", err)
		return "", ""
	}
	return node, script
}
