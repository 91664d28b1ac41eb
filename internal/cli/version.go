package cli

import (
	"fmt"
	"runtime/debug"
)

func versionCommand(*run) *command {
	return &command{
		name: "version", summary: "print the version",
		examples: []string{"switchboard version"},
		run:      runVersion,
	}
}

func runVersion(r *run) int {
	v := r.env.Version
	sdk := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/modelcontextprotocol/go-sdk" {
				sdk = d.Version
			}
		}
	}
	if r.json {
		return r.printJSON(map[string]string{"version": v, "goSDK": sdk})
	}
	fmt.Fprintf(r.env.Stdout, "switchboard %s (go-sdk %s; MCP 2026-07-28 and 2024-11-05…2025-11-25)\n", v, sdk)
	return ExitOK
}
