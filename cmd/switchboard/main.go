// Command switchboard is one host for all your MCP servers: it launches
// and supervises them, and lists, calls and reads what they offer under
// one namespace. See internal/cli for the commands and the README for a
// tour.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	// First: a copy of this program started as a server's shim runs only
	// the shim.
	launcher.MaybeRunShim()
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "switchboard: cannot find its own executable: %v\n", err)
		os.Exit(cli.ExitUsage)
	}
	os.Exit(cli.Run(context.Background(), cli.Env{
		Args:       os.Args[1:],
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Executable: exe,
		Version:    version,
	}))
}
