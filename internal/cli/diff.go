package cli

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

func diffCommand(*run) *command {
	return &command{
		name: "diff", args: "SERVER[:TOOL]",
		summary:  "show what changed in held tool definitions since they were approved",
		examples: []string{"switchboard diff demo", "switchboard diff demo:echo"},
		run:      runDiff,
		complete: firstServer,
	}
}

// runDiff shows, for each held definition of a server, what changed since
// it was approved.
func runDiff(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	return r.withStore(func(st store.Store) int {
		held, err := control.Diffs(r.ctx, st, r.args[0])
		if err != nil {
			return r.fail(err)
		}
		for _, h := range held {
			// drift.Diff escapes what it shows (reversibly, and more than
			// Escape does); Escape leaves its output as it is.
			fmt.Fprintf(r.env.Stdout, "== %s\n%s\n", launcher.Escape(h.Label), launcher.Escape(h.Diff))
		}
		if len(held) == 0 {
			fmt.Fprintf(r.env.Stdout, "no held definitions for %s%s\n", launcher.Escape(r.args[0]), r.serverHint(r.args[0]))
		}
		return ExitOK
	})
}
