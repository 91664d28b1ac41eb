package cli

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

func restartCommand(*run) *command {
	return &command{
		name: "restart", args: "SERVER",
		summary:  "restart a server of the running gateway (switchboard serve, for the same home)",
		examples: []string{"switchboard restart demo"},
		live:     func() liveFunc { return (*run).restartOn },
		run:      runRestart,
		complete: firstServer,
	}
}

// runRestart runs when no gateway runs for the home: there is nothing to
// restart.
func runRestart(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	return r.failf(ExitUsage, "no_gateway", "restart: no gateway runs for this home (start one with 'switchboard serve'); a command's own servers start and stop with it")
}

// restartOn restarts the named server of the gateway c.
func (r *run) restartOn(c *control.Client) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	name := r.args[0]
	if err := c.Restart(r.ctx, name); err != nil {
		if hint := r.serverHint(name); hint != "" && fault.CodeOf(err) == fault.CodeNotFound {
			f := failureOf(err, codeError)
			f.Message += hint
			return r.report(ExitUsage, f)
		}
		return r.fail(err)
	}
	st, err := c.Status(r.ctx)
	if err != nil {
		return r.fail(err)
	}
	for _, s := range st.Servers {
		if s.Name != name {
			continue
		}
		if r.json {
			return r.printJSON(s)
		}
		pid := ""
		if s.PID != 0 {
			pid = fmt.Sprintf(" (pid %d)", s.PID)
		}
		fmt.Fprintf(r.env.Stdout, "restarted %s: %s%s\n", launcher.Escape(name), s.State, pid)
	}
	return ExitOK
}
