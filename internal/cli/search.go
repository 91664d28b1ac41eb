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
	var registry bool
	var registryURL string
	return &command{
		name: "search", args: "QUERY... [-k N] | --registry WORDS...",
		summary:  "find tools by what they do, in plain words (offline index); --registry finds servers in the MCP registry",
		examples: []string{"switchboard search add two numbers", "switchboard search --registry filesystem", "switchboard search --registry brave search --json"},
		flags: func(fs *pflag.FlagSet) {
			fs.IntVarP(&k, "k", "k", k, "show the best `N` matches (with --registry, default 20)")
			fs.BoolVar(&registry, "registry", false, "search the MCP registry's servers, by name and description, instead of the configured servers' tools")
			registryURLFlag(fs, &registryURL)
		},
		host: &hostUse{noStart: true, skip: func() bool { return registry }},
		run: func(r *run) int {
			if registry {
				if !r.cobra.Flags().Changed("k") {
					k = 20
				}
				return runSearchRegistry(r, registryURL, k)
			}
			if registryURL != "" {
				return r.usagef("--registry-url goes with --registry")
			}
			return runSearch(r, k)
		},
	}
}

func runSearch(r *run, k int) int {
	if !r.wantArgs(1, -1) {
		return ExitUsage
	}
	tools, err := r.host.Search(r.ctx, strings.Join(r.args, " "), k)
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
