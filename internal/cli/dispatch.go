package cli

import (
	"errors"
	"flag"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The command tree is built with cobra from the commands table and
// (*run).flags(), which stay the one definition of the commands and their
// flags: a command is a table entry and its flags a case in flags(). Each
// command gets a run of its own, so flags that two commands bind to the
// same field (log -n and search -k) keep their own defaults. cobra finds
// the command, parses flags anywhere among the arguments (before "--"),
// prints help through this package's usage, and brings shell completion
// (the hidden __complete command and the scripts of `completion`).

// persistent names the flags every command has (every flags() defines
// them), which may also come before its name: "switchboard --home DIR
// tools". A command's own flag may come there too ("switchboard --scope
// project add ...", "switchboard --stdio serve"): the root knows every
// command's flags, those hidden, so that cobra tells a flag's value from
// the command's name, and a command refuses one it does not have (exec).
var persistent = []string{"json", "v", "config", "home", "store", "no-project"}

// tree is one invocation's cobra command tree.
type tree struct {
	root *cobra.Command
	// global is bound to the root's flags, for a run with no command
	// (the usage, an unknown command, help).
	global *run
	runs   map[*cobra.Command]*run
	code   int // the exit code, set by the command that ran
}

// flagError is a flag cobra could not parse, reported as a usage error.
type flagError struct{ err error }

func (e flagError) Error() string { return e.err.Error() }

// newTree builds the command tree of the invocation r0 (no command yet).
func newTree(r0 *run) *tree {
	t := &tree{global: r0, runs: map[*cobra.Command]*run{}}
	root := &cobra.Command{
		Use:                "switchboard",
		Args:               cobra.ArbitraryArgs, // an unknown command is reported by RunE
		SilenceErrors:      true,
		SilenceUsage:       true,
		DisableSuggestions: true,
		CompletionOptions:  cobra.CompletionOptions{DisableDefaultCmd: true},
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				r0.usage(r0.env.Stderr)
				t.code = ExitUsage
				return nil
			}
			r0.json = wantsJSON(r0.env.Args)
			t.code = r0.usagef("unknown command %q%s; run 'switchboard help'", args[0], suggestCommand(args[0]))
			return nil
		},
	}
	root.SetIn(r0.env.Stdin)
	root.SetOut(r0.env.Stdout)
	root.SetErr(r0.env.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError{err} })
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		if r, ok := t.runs[c]; ok {
			r.commandUsage(r.env.Stdout, c)
			return
		}
		r0.usage(r0.env.Stdout)
	})
	root.PersistentFlags().BoolP("help", "h", false, "show this usage")
	gfs := r0.flags()
	for _, name := range persistent {
		if f := gfs.Lookup(name); f != nil {
			root.PersistentFlags().AddGoFlag(f)
		}
	}
	t.root = root
	for _, c := range commands {
		r := &run{ctx: r0.ctx, env: r0.env, cmd: c, dashAt: -1}
		fs := r.flags()
		cc := &cobra.Command{
			Use:    c.name,
			Short:  c.summary,
			Hidden: c.hidden,
			Args:   cobra.ArbitraryArgs,
			RunE: func(cc *cobra.Command, args []string) error {
				t.code = r.exec(cc, args)
				return nil
			},
		}
		cc.Flags().AddGoFlagSet(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if root.PersistentFlags().Lookup(f.Name) == nil {
				root.PersistentFlags().AddGoFlag(f)
				root.PersistentFlags().Lookup(f.Name).Hidden = true // not every command's
			}
		})
		t.runs[cc] = r
		root.AddCommand(cc)
	}
	root.SetHelpCommand(&cobra.Command{
		Use:                "help",
		Short:              "show a command's usage, flags and examples",
		DisableFlagParsing: true, // `help COMMAND --json` is help on COMMAND
		RunE: func(_ *cobra.Command, args []string) error {
			t.code = t.help(args)
			return nil
		},
		ValidArgsFunction: (&run{cmd: &command{name: "help"}}).completeArgs,
	})
	args := longFlags(r0.env.Args, t.knownFlag)
	t.complete(strings.HasPrefix(args[0], cobra.ShellCompRequestCmd))
	if args[0] == "--version" || args[0] == "-version" {
		args[0] = "version"
	}
	root.SetArgs(args)
	return t
}

// execute runs the command args name and returns its exit code.
func (t *tree) execute() int {
	c, err := t.root.ExecuteC()
	if err == nil {
		return t.code
	}
	r, ok := t.runs[c]
	if !ok {
		r = t.global
	}
	r.json = wantsJSON(t.global.env.Args)
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		var names []string
		c.LocalFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		if hint := didYouMean(name, names); hint != "" {
			msg += strings.Replace(hint, `mean "`, `mean "--`, 1)
		}
	}
	code := r.usagef("%s", msg)
	var fe flagError
	if errors.As(err, &fe) && !r.json && ok {
		r.commandUsage(r.env.Stderr, c)
	}
	return code
}

// exec runs r's command on the positional arguments cobra parsed.
func (r *run) exec(cc *cobra.Command, args []string) int {
	r.args = args
	r.dashAt = cc.ArgsLenAtDash()
	var foreign []string // another command's flags, given
	cc.InheritedFlags().VisitAll(func(f *pflag.Flag) {
		if f.Changed && f.Name != "help" {
			foreign = append(foreign, "--"+f.Name)
		}
	})
	if len(foreign) > 0 {
		return r.usagef("%s takes no %s; 'switchboard help %s' lists its flags", r.cmd.name, strings.Join(foreign, ", "), r.cmd.name)
	}
	if err := checkStoreFlag(r.storeURL); err != nil {
		return r.usagef("%v", err)
	}
	// Ctrl-C or SIGTERM cancels what is under way (a call is cancelled
	// upstream) and still runs Close, which stops every server's process
	// group: servers are in their own groups, so the terminal's signal
	// reaches only us.
	stop := r.notifySignals()
	defer stop()
	if r.cmd.name == "serve" {
		if err := checkServe(r); err != nil {
			return r.usagef("%v", err)
		}
	}
	if code, ok := r.viaGateway(); ok {
		return code
	}
	if r.cmd.needsHost {
		if code := r.open(); code != ExitOK {
			return code
		}
		defer func() {
			left := r.stillStarting()
			r.host.Close()
			r.keepStartTime(left)
			r.store.Close()
		}()
	}
	return r.cmd.run(r)
}

// longFlags rewrites the Go flag package's spelling of a long flag with
// one dash (-json, -raw, -token-env=VAR) to the two dashes pflag takes,
// for the names in known; arguments after "--" are left as they are.
func longFlags(args []string, known func(string) bool) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && len(name) > 1 && known(name) {
			a = "-" + a
		}
		out = append(out, a)
	}
	return out
}

// knownFlag reports whether some command has a flag called name: the root
// knows them all.
func (t *tree) knownFlag(name string) bool {
	return t.root.PersistentFlags().Lookup(name) != nil
}
