package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/clientconf"
	"github.com/switchboard-mcp/switchboard/internal/names"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Shell completion: `switchboard completion bash|zsh|fish` prints cobra's
// script, which asks the hidden `switchboard __complete ARGS...` for the
// candidates. Commands and flags come from the tree; fixed flag values
// and the names below come from here. Server names are read from the
// configuration and the working directory's project file, tool names from
// the catalogues saved in the state store: completing never starts a
// server.

// completionTimeout bounds reading what a completion offers (the
// configuration and the saved catalogues); a shell waits for it.
const completionTimeout = 2 * time.Second

// fixedValues are the values of flags that take one of a fixed set.
func fixedValues() map[string][]string {
	return map[string][]string{
		"scope":      {"user", "project"},
		"transport":  {"http", "sse"},
		"format":     host.Formats(),
		"log-format": {logText, logJSON},
		"from":       clientIDs(), // or a file, which the shell completes
	}
}

// clientIDs are the clients import --from, connect and disconnect know.
func clientIDs() []string {
	var ids []string
	for _, c := range clientconf.Clients() {
		ids = append(ids, c.ID)
	}
	return ids
}

// complete sets what each command completes. Flag values are registered
// only for a completion request: cobra keeps them in a process-wide table
// that nothing empties.
func (t *tree) complete(request bool) {
	values := fixedValues()
	for c, cmd := range t.cmds {
		c.ValidArgsFunction = t.completeArgs(cmd)
		if !request {
			continue
		}
		for name, vs := range values {
			if c.LocalFlags().Lookup(name) == nil {
				continue
			}
			directive := cobra.ShellCompDirectiveNoFileComp
			if name == "from" {
				directive = cobra.ShellCompDirectiveDefault
			}
			c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(vs, directive)) //nolint:errcheck // each flag once per tree
		}
	}
	if request {
		t.root.SetOut(candidates{t.run.env.Stdout})
	}
}

// completeLeading completes the value of a command's flag given before
// the command's name ("switchboard --scope <TAB>"), which cobra, not
// knowing the command yet, cannot: args are those of __complete. ok is
// false when args ask for something else.
func (t *tree) completeLeading(args []string) (out []string, ok bool) {
	if len(args) < 3 {
		return nil, false
	}
	for _, a := range args[1 : len(args)-2] {
		if !strings.HasPrefix(a, "-") {
			return nil, false // a command's name, or a flag's value
		}
	}
	name, ok := strings.CutPrefix(args[len(args)-2], "--")
	vs := fixedValues()[name]
	if !ok || vs == nil {
		return nil, false
	}
	return matching(vs, args[len(args)-1]), true
}

// candidates writes cobra's completions as a person should see them: a
// one-letter flag as itself (-v), not also as --v (pflag gives a Go flag
// of one letter both spellings), and descriptions without the backquotes
// that name a flag's argument in its help. cobra writes one candidate per
// Write.
type candidates struct{ w io.Writer }

func (c candidates) Write(p []byte) (int, error) {
	oneLetter := len(p) >= 3 && p[0] == '-' && p[1] == '-' && (unicode.IsLetter(rune(p[2])) || unicode.IsDigit(rune(p[2])))
	if oneLetter && (len(p) == 3 || p[3] == '\t' || p[3] == '\n') {
		return len(p), nil
	}
	if _, err := c.w.Write(bytes.ReplaceAll(p, []byte("`"), nil)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// completeArgs completes cmd's positional arguments.
func (t *tree) completeArgs(cmd *command) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if cmd.completeFiles {
			return nil, cobra.ShellCompDirectiveDefault
		}
		if cmd.complete == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return matching(cmd.complete(t.run, args), prefix), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeHelp completes help's argument: the commands' names.
func (t *tree) completeHelp(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []string
	for _, c := range t.list {
		if !c.hidden {
			out = append(out, c.name)
		}
	}
	return matching(out, prefix), cobra.ShellCompDirectiveNoFileComp
}

// matching are the candidates that start with prefix, sorted, each once.
func matching(candidates []string, prefix string) []cobra.Completion {
	var match []cobra.Completion
	for _, s := range candidates {
		if strings.HasPrefix(s, prefix) {
			match = append(match, s)
		}
	}
	slices.Sort(match)
	return slices.Compact(match)
}

// firstServer completes a command's first argument, a configured server.
func firstServer(r *run, args []string) []string {
	if len(args) > 0 {
		return nil
	}
	return r.configuredServers()
}

// firstClient completes a command's first argument, a client.
func firstClient(_ *run, args []string) []string {
	if len(args) > 0 {
		return nil
	}
	return clientIDs()
}

// completionConfig loads the configuration as r's flags name it, for a
// completion: on a copy of r that writes no warning (the shell would show
// it) and gives up after completionTimeout. cfg is nil when it cannot be
// loaded; done releases q.
func (r *run) completionConfig() (q *run, cfg *config.Config, done func()) {
	q = &run{cmd: r.cmd, env: r.env, home: r.home, cfgFile: r.cfgFile, storeURL: r.storeURL, noProject: r.noProject}
	q.env.Stderr = io.Discard
	ctx, cancel := context.WithTimeout(r.ctx, completionTimeout)
	q.ctx = ctx
	cfg, err := q.loadConfig()
	if err != nil {
		cfg = nil
	}
	return q, cfg, cancel
}

// configuredServers are the servers of the configuration and of the working
// directory's project file; none when it cannot be read.
func (r *run) configuredServers() []string {
	_, cfg, done := r.completionConfig()
	defer done()
	if cfg == nil {
		return nil
	}
	var out []string
	for _, s := range cfg.Servers {
		out = append(out, s.Name)
	}
	return out
}

// toolNames are the model-facing names of the enabled servers' tools, as
// their catalogues were last saved in the state store; none when there is
// no store yet (one is never created for a completion).
func (r *run) toolNames() []string {
	q, cfg, done := r.completionConfig()
	defer done()
	if cfg == nil {
		return nil
	}
	if q.storeURL == "" && cfg.Store.Postgres == "" {
		home, err := q.homeDir()
		if err != nil {
			return nil
		}
		if _, err := os.Stat(filepath.Join(home, StateFile)); err != nil {
			return nil
		}
	}
	st, err := q.openStore(cfg)
	if err != nil {
		return nil
	}
	defer st.Close()
	var entries []names.Entry
	for _, s := range cfg.Servers {
		if !s.Enabled {
			continue
		}
		tools, err := savedTools(q.ctx, st, s.Name)
		if err != nil {
			continue
		}
		for _, tool := range tools {
			entries = append(entries, names.Entry{ID: names.ID{Server: s.Name, Name: tool}, Prefix: s.Prefix})
		}
	}
	assigned, _ := names.Assign(entries)
	out := make([]string, 0, len(assigned))
	for _, n := range assigned {
		out = append(out, n)
	}
	return out
}

// savedTools are the tool names of server's saved catalogue.
func savedTools(ctx context.Context, st store.Store, server string) ([]string, error) {
	c, err := st.Catalog(ctx, server)
	if err != nil {
		return nil, err
	}
	var cat catalog.Catalog
	if err := json.Unmarshal(c.Data, &cat); err != nil {
		return nil, fmt.Errorf("saved catalogue of %q: %w", server, err)
	}
	var out []string
	for _, t := range cat.Tools {
		out = append(out, t.Name)
	}
	return out, nil
}
