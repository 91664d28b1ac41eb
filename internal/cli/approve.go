package cli

import (
	"errors"
	"fmt"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

func approveCommand(*run) *command {
	return &command{
		name: "approve", args: "SERVER[:TOOL]",
		summary:  "approve the held (changed or new) tool definitions and launch of a server, or one tool",
		examples: []string{"switchboard approve demo:echo", "switchboard approve demo"},
		live: func() liveFunc {
			return func(r *run, c *control.Client) int {
				if !r.wantArgs(1, 1) {
					return ExitUsage
				}
				if server, _, one := control.Cut(r.args[0]); !one {
					if held, err := c.Held(r.ctx, server); err == nil {
						r.showLaunches(held)
					}
				}
				approved, err := c.Approve(r.ctx, r.args[0])
				return r.showApproved(approved, err)
			}
		},
		run:      runApprove,
		complete: firstServer,
	}
}

// runApprove pins the held definitions of a server, or of one tool.
func runApprove(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	return r.withStore(func(st store.Store) int {
		if server, _, one := control.Cut(r.args[0]); !one {
			if held, err := control.Diffs(r.ctx, st, server); err == nil {
				r.showLaunches(held)
			}
		}
		approved, err := control.Approve(r.ctx, st, r.args[0])
		return r.showApproved(approved, err)
	})
}

// showLaunches prints the diffs of the held launches among held: what
// will run is shown before it is approved.
func (r *run) showLaunches(held []control.Held) {
	for _, h := range held {
		if h.Launch {
			// drift.Diff escapes what it shows; Escape leaves it as it is.
			fmt.Fprintf(r.env.Stdout, "== %s\n%s\n", launcher.Escape(h.Label), launcher.Escape(h.Diff))
		}
	}
}

// showApproved prints what approve approved, or why nothing.
func (r *run) showApproved(approved []string, err error) int {
	for _, l := range approved {
		fmt.Fprintf(r.env.Stdout, "approved %s\n", launcher.Escape(l))
	}
	switch {
	case fault.CodeOf(err) == fault.CodeNotFound:
		msg := err.Error()
		if fe, ok := errors.AsType[*fault.Error](err); ok && fe.Err != nil {
			msg = fe.Err.Error() // without the code: the report gives it
		}
		return r.failf(ExitUsage, string(fault.CodeNotFound), "%s%s", msg, r.serverHint(r.args[0]))
	case err != nil:
		return r.fail(err)
	}
	return ExitOK
}
