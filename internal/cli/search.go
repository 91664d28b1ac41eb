package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

func searchCommand(*run) *command {
	k := 5
	return &command{
		name: "search", args: "QUERY... [-k N]",
		summary:  "find tools by what they do, in plain words (offline index)",
		examples: []string{"switchboard search add two numbers"},
		flags: func(fs *pflag.FlagSet) {
			fs.IntVarP(&k, "k", "k", k, "show the best `N` matches")
		},
		host: &hostUse{noStart: true},
		run:  func(r *run) int { return runSearch(r, k) },
	}
}

func runSearch(r *run, k int) int {
	if !r.wantArgs(1, -1) {
		return ExitUsage
	}
	tools, err := r.host.SearchContext(r.ctx, strings.Join(r.args, " "), k)
	if err != nil {
		return r.failf(ExitUpstream, codeError, "%v", err)
	}
	r.noteUndiscovered()
	if r.json {
		if tools == nil {
			tools = []host.Tool{}
		}
		return r.printJSON(tools)
	}
	if len(tools) == 0 {
		fmt.Fprintln(r.env.Stderr, "no tool matches; `switchboard tools` lists them all")
		return ExitOK
	}
	r.toolTable(tools)
	return ExitOK
}

// noteUndiscovered names, on stderr, the servers search could not look
// into: enabled, and with no catalogue saved under their configuration
// (it starts no server).
func (r *run) noteUndiscovered() {
	for _, s := range r.host.Servers() {
		sc := r.cfg.Server(s.Name)
		if s.State != host.StateIdle || s.Tools > 0 || sc == nil {
			continue
		}
		if c, err := r.store.Catalog(r.ctx, s.Name); err == nil && c.Fingerprint == sc.Fingerprint() {
			continue
		}
		fmt.Fprintf(r.env.Stderr, "note: server %q has not been discovered yet, so its tools are not searched ('switchboard tools %s' discovers it)\n", launcher.Escape(s.Name), launcher.Escape(s.Name))
	}
}
