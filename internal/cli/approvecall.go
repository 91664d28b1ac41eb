package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// approve-call and deny-call decide on a tool call held for a person's
// approval (policy.approve, the data-flow rule; see docs/APPROVALS.md);
// approve-call without an ID lists the calls waiting. They ask the gateway
// serving the home when one runs, else read and write the store. The
// decision is recorded as "cli:<the user's login name>".

func approveCallCommand(*run) *command {
	return decideCallCommand(true)
}

func denyCallCommand(*run) *command {
	return decideCallCommand(false)
}

func decideCallCommand(approve bool) *command {
	c := &command{
		name: "deny-call", args: "ID",
		summary:  "deny a tool call held for a person's approval",
		examples: []string{"switchboard deny-call k3jq7d2mx9pa4b6c"},
	}
	if approve {
		c.name, c.args = "approve-call", "[ID]"
		c.summary = "approve a tool call held for a person's approval; without an ID, list the calls waiting"
		c.examples = []string{"switchboard approve-call", "switchboard approve-call k3jq7d2mx9pa4b6c"}
	}
	min := 1
	if approve {
		min = 0
	}
	c.live = func() liveFunc {
		return func(r *run, cl *control.Client) int {
			if !r.wantArgs(min, 1) {
				return ExitUsage
			}
			if len(r.args) == 0 {
				list, err := cl.HeldCalls(r.ctx, store.ApprovalPending)
				if err != nil {
					return r.fail(err)
				}
				return r.showHeldCalls(list)
			}
			got, err := cl.DecideCall(r.ctx, r.args[0], approve, decider())
			return r.showDecided(got, approve, err)
		}
	}
	c.run = func(r *run) int {
		if !r.wantArgs(min, 1) {
			return ExitUsage
		}
		return r.withStore(func(st store.Store) int {
			if len(r.args) == 0 {
				list, err := host.HeldCallsIn(r.ctx, st, store.ApprovalPending)
				if err != nil {
					return r.fail(err)
				}
				return r.showHeldCalls(list)
			}
			got, err := host.DecideCallIn(r.ctx, st, r.args[0], approve, decider(), time.Now())
			return r.showDecided(got, approve, err)
		})
	}
	return c
}

// decider is who decides at this CLI: "cli:<login name>".
func decider() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	return host.DeciderCLI + ":" + name
}

// showHeldCalls lists held calls, with their arguments, for a person to
// decide on.
func (r *run) showHeldCalls(list []host.HeldCall) int {
	if r.json {
		if list == nil {
			list = []host.HeldCall{}
		}
		return r.printJSON(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(r.env.Stdout, "no calls are waiting for approval")
		return ExitOK
	}
	var rows [][]string
	for _, c := range list {
		rows = append(rows, []string{c.ID, c.Tool, orDash(c.Caller), c.Expires.Local().Format(time.TimeOnly), oneLine(c.Detail, 60), oneLine(string(c.Arguments), 60)})
	}
	r.table("ID\tTOOL\tCALLER\tEXPIRES\tWHY\tARGUMENTS", rows)
	return ExitOK
}

// showDecided reports a decision on a held call.
func (r *run) showDecided(c host.HeldCall, approve bool, err error) int {
	if err != nil {
		return r.fail(err)
	}
	if r.json {
		return r.printJSON(c)
	}
	verb := "denied"
	if approve {
		verb = "approved"
	}
	fmt.Fprintf(r.env.Stdout, "%s %s: %s %s\n", verb, launcher.Escape(c.ID), launcher.Escape(c.Tool), launcher.Escape(oneLine(string(c.Arguments), 120)))
	if approve {
		fmt.Fprintf(r.env.Stdout, "the same call goes through once, made again before %s\n", c.Expires.Local().Format(time.TimeOnly))
	}
	return ExitOK
}

// approver is the CLI call's host.Approver: a person at the terminal is
// shown the held call and decides on it there (recorded as
// "terminal:<login name>"); anywhere else the call stays held, for
// `switchboard approve-call`.
func (r *run) approver() host.Approver {
	return func(ctx context.Context, c host.HeldCall) error {
		f, ok := r.env.Stdin.(*os.File)
		if !ok || !isTerminal(f) {
			return errors.New("not at a terminal: `switchboard approve-call` lists the held call, and the same call made again once approved goes through")
		}
		fmt.Fprintf(r.env.Stderr, "The call of %s is held for a person's approval: %s\n  arguments: %s\nApprove it? [y/N] ",
			launcher.Escape(c.Tool), launcher.Escape(c.Detail), launcher.Escape(oneLine(string(c.Arguments), 500)))
		line, _ := bufio.NewReader(f).ReadString('\n')
		yes := false
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			yes = true
		}
		by := host.DeciderTerminal + ":" + strings.TrimPrefix(decider(), host.DeciderCLI+":")
		_, err := r.host.DecideCall(ctx, c.ID, yes, by)
		return err
	}
}
