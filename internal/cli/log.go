package cli

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// logFlags are the flags of log.
type logFlags struct {
	limit  int    // -n
	caller string // --client
	script string // --run
}

func logCommand(*run) *command {
	f := &logFlags{limit: 50}
	return &command{
		name: "log", args: "[SERVER[:TOOL]] [-n N]",
		summary:  "show recent tool calls from the audit log (argument shapes only, never values)",
		examples: []string{"switchboard log", "switchboard log demo:echo -n 10", "switchboard log --json"},
		flags: func(fs *pflag.FlagSet) {
			fs.IntVarP(&f.limit, "n", "n", f.limit, "show at most `N` calls")
			fs.StringVar(&f.caller, "client", "", "show only the calls of the gateway client `NAME`")
			fs.StringVar(&f.script, "run", "", "show only the rows of the script run `ID` (code mode): the script's and its calls'")
		},
		live: func() liveFunc {
			return func(r *run, c *control.Client) int {
				if !r.wantArgs(0, 1) {
					return ExitUsage
				}
				calls, err := c.Calls(r.ctx, f.filter(r))
				if err != nil {
					return r.fail(err)
				}
				return r.showCalls(calls)
			}
		},
		run:      f.run,
		complete: firstServer,
	}
}

// runLog shows recent calls from the audit log.
func (f *logFlags) run(r *run) int {
	if !r.wantArgs(0, 1) {
		return ExitUsage
	}
	return r.withStore(func(st store.Store) int {
		filter := f.filter(r)
		calls, err := st.Calls(r.ctx, filter)
		if err != nil {
			return r.fail(err)
		}
		if len(calls) == 0 && len(r.args) == 1 {
			if hint := r.serverHint(r.args[0]); hint != "" {
				fmt.Fprintf(r.env.Stderr, "note: no server %q is configured%s\n", launcher.Escape(filter.Server), hint)
			}
		}
		return r.showCalls(calls)
	})
}

// filter is log's filter: its argument, SERVER or SERVER:TOOL, -n,
// --client and --run.
func (f *logFlags) filter(r *run) store.CallFilter {
	cf := store.CallFilter{Limit: f.limit, Caller: f.caller, Run: f.script}
	if len(r.args) == 1 {
		server, tool, one := control.Cut(r.args[0])
		cf.Server = server
		if one {
			cf.Tool = server + ":" + tool
		}
	}
	return cf
}

// showCalls prints calls of the audit log.
func (r *run) showCalls(calls []store.Call) int {
	if r.json {
		entries := make([]control.CallEntry, 0, len(calls))
		for _, c := range calls {
			entries = append(entries, control.EntryOf(c))
		}
		return r.printJSON(entries)
	}
	var rows [][]string
	for _, c := range calls {
		code := c.Code
		if code == "" {
			code = "-"
		}
		rows = append(rows, []string{c.Time.Local().Format(time.DateTime), c.Tool, c.Outcome, code,
			c.Latency.Round(time.Millisecond).String(), orDash(c.Caller), orDash(c.Profile), oneLine(c.ArgShape, 60)})
	}
	r.table("TIME\tTOOL\tOUTCOME\tCODE\tLATENCY\tCALLER\tPROFILE\tARGUMENTS", rows)
	return ExitOK
}
