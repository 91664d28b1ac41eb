package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// The command tree is built with cobra. Each command is declared by a
// constructor in the file of its run function: its name, usage, examples,
// its own flags (registered on its cobra command, bound to state the
// constructor keeps), what it needs of a host and how it runs. Adding a
// flag is one line in that constructor. The flags every command has are
// the root's persistent flags, bound to the run. cobra finds the command,
// parses flags anywhere among the arguments (before "--"), prints help
// through this package's usage, and brings shell completion (the hidden
// __complete command and the scripts of `completion`).

// commandList is every command's constructor, in the order the usage
// lists them.
var commandList = []func(r *run) *command{
	serversCommand, toolsCommand, searchCommand, callCommand, resourcesCommand, templatesCommand,
	readCommand, promptsCommand, promptCommand, approveCommand, approveCallCommand, denyCallCommand, diffCommand, lockCommand, verifyCommand, restartCommand,
	logCommand, addCommand, editCommand, addJSONCommand, removeCommand, enableCommand,
	disableCommand, loginCommand, logoutCommand, getCommand, listCommand, versionCommand,
	trustProjectCommand, serveCommand, importCommand, connectCommand, disconnectCommand,
	completionCommand, demoServerCommand, fixtureCommand, conformanceClientCommand,
}

// command is one subcommand, as its constructor declares it.
type command struct {
	name     string
	args     string // usage of positional arguments
	summary  string
	examples []string
	hidden   bool // for the project's own tests; not in the usage
	// flags registers the command's own flags (nil: none).
	flags func(fs *pflag.FlagSet)
	// check validates the flags before anything starts (nil: nothing to).
	check func(r *run) error
	// live says how the command runs against the gateway that runs for
	// the home, when one does: nil (or a nil answer, as the command's
	// flags may ask) runs it here (live.go).
	live func() liveFunc
	// host, when set, has the configuration loaded and a Host opened
	// before run.
	host *hostUse
	run  func(r *run) int
	// complete completes the positional arguments (nil: none);
	// completeFiles has the shell complete file names instead.
	complete      func(r *run, args []string) []string
	completeFiles bool
}

// hostUse is how a command uses the host it has opened (open).
type hostUse struct {
	// gateway is serve's host: servers' requests are forwarded to the
	// gateway's clients, it waits for no server, and it logs.
	gateway bool
	// skip, when it returns true, opens no host: the command's flags
	// ask for something else (search --registry).
	skip    func() bool
	noStart bool // no server is started (it reads saved catalogues)
	listing bool // it lists the servers' states itself: no warnings
	// findings warns of the servers' findings (without -v).
	findings bool
	// ownServer warns only of the server its first argument names.
	ownServer bool
	// refresh, when it returns true, has every enabled server
	// discovered again first.
	refresh func() bool
	// prepare adds to the host's options, for the configuration cfg
	// (nil: nothing to); undo undoes it when the host does not open.
	// opened is told the host (nil: not).
	prepare func(cfg *config.Config, opts *host.Options) (undo func(), err error)
	opened  func(h *host.Host)
}

// serving reports whether r's command is the gateway.
func (r *run) serving() bool { return r.cmd.host != nil && r.cmd.host.gateway }

// globalFlags registers the flags every command has, persistent on the
// root, so that they come before the command's name or after it.
func (r *run) globalFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&r.json, "json", false, "print JSON for programs")
	fs.BoolVarP(&r.verbose, "v", "v", false, "verbose: more detail, debug logs on stderr")
	fs.StringVar(&r.cfgFile, "config", "", "configuration `file` (default $SWITCHBOARD_HOME/config.json)")
	fs.StringVar(&r.home, "home", "", "Switchboard's home `dir` (default $SWITCHBOARD_HOME or ~/.switchboard)")
	fs.BoolVar(&r.noProject, "no-project", false, "do not read the working directory's "+config.ProjectFileName)
	fs.StringVar(&r.storeURL, "store", "", "keep state in the PostgreSQL database at `url` (postgres://...), shared with every Switchboard using it (default: the config's \"store\", else state.db in the home)")
	fs.BoolP("help", "h", false, "show this usage")
}

// tree is one invocation's cobra command tree.
type tree struct {
	root *cobra.Command
	run  *run // the invocation, its global flags bound
	list []*command
	cmds map[*cobra.Command]*command
	code int // the exit code, set by the command that ran
	// foreign are flags given before the name of the command misnamed
	// that it does not have (relocate).
	foreign  []string
	misnamed string
}

// flagError is a flag cobra could not parse, reported as a usage error.
type flagError struct{ err error }

func (e flagError) Error() string { return e.err.Error() }

// newTree builds the command tree of the invocation r (no command yet).
func newTree(r *run) *tree {
	t := &tree{run: r, cmds: map[*cobra.Command]*command{}}
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
				t.usage(r.env.Stderr)
				t.code = ExitUsage
				return nil
			}
			r.json = wantsJSON(r.env.Args)
			t.code = r.usagef("unknown command %q%s; run 'switchboard help'", args[0], t.suggestCommand(args[0]))
			return nil
		},
	}
	root.SetIn(r.env.Stdin)
	root.SetOut(r.env.Stdout)
	root.SetErr(r.env.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError{err} })
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		if cmd, ok := t.cmds[c]; ok {
			commandUsage(r.env.Stdout, cmd, c)
			return
		}
		t.usage(r.env.Stdout)
	})
	r.globalFlags(root.PersistentFlags())
	t.root = root
	for _, newCommand := range commandList {
		cmd := newCommand(r)
		cc := &cobra.Command{
			Use:    cmd.name,
			Short:  cmd.summary,
			Hidden: cmd.hidden,
			Args:   cobra.ArbitraryArgs,
			RunE: func(cc *cobra.Command, args []string) error {
				t.code = r.exec(cmd, cc, args)
				return nil
			},
		}
		if cmd.flags != nil {
			cmd.flags(cc.Flags())
		}
		t.list = append(t.list, cmd)
		t.cmds[cc] = cmd
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
		ValidArgsFunction: t.completeHelp,
	})
	args := longFlags(r.env.Args, t.knownFlag)
	request := len(args) > 0 && strings.HasPrefix(args[0], cobra.ShellCompRequestCmd)
	t.complete(request)
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args[0] = "version"
	}
	if !request {
		args = t.relocate(args)
	}
	root.SetArgs(args)
	return t
}

// execute runs the command the arguments name and returns its exit code.
func (t *tree) execute() int {
	r := t.run
	if out, ok := t.completeLeading(r.env.Args); ok && strings.HasPrefix(r.env.Args[0], cobra.ShellCompRequestCmd) {
		for _, c := range out {
			fmt.Fprintln(r.env.Stdout, c)
		}
		fmt.Fprintf(r.env.Stdout, ":%d\n", cobra.ShellCompDirectiveNoFileComp)
		return ExitOK
	}
	if len(t.foreign) > 0 {
		r.json = wantsJSON(r.env.Args)
		return r.usagef("%s takes no %s; 'switchboard help %s' lists its flags", t.misnamed, strings.Join(t.foreign, ", "), t.misnamed)
	}
	c, err := t.root.ExecuteC()
	if err == nil {
		return t.code
	}
	r.json = wantsJSON(r.env.Args)
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		var names []string
		allFlags(c).VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		if hint := didYouMean(name, names); hint != "" {
			msg += strings.Replace(hint, `mean "`, `mean "--`, 1)
		}
	}
	code := r.usagef("%s", msg)
	var fe flagError
	cmd, ok := t.cmds[c]
	if errors.As(err, &fe) && !r.json && ok {
		commandUsage(r.env.Stderr, cmd, c)
	}
	return code
}

// exec runs the command cmd on the positional arguments cobra parsed.
func (r *run) exec(cmd *command, cc *cobra.Command, args []string) int {
	r.cmd, r.cobra, r.args = cmd, cc, args
	r.dashAt = cc.ArgsLenAtDash()
	if err := checkStoreFlag(r.storeURL); err != nil {
		return r.usagef("%v", err)
	}
	// Ctrl-C or SIGTERM cancels what is under way (a call is cancelled
	// upstream) and still runs Close, which stops every server's process
	// group: servers are in their own groups, so the terminal's signal
	// reaches only us.
	stop := r.notifySignals()
	defer stop()
	if cmd.check != nil {
		if err := cmd.check(r); err != nil {
			return r.usagef("%v", err)
		}
	}
	if code, ok := r.viaGateway(); ok {
		return code
	}
	if cmd.host != nil && (cmd.host.skip == nil || !cmd.host.skip()) {
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
	return cmd.run(r)
}

// longFlags rewrites the Go flag package's spelling of a long flag with
// one dash (-json, -raw, -token-env=VAR), which Switchboard has always
// taken, to the two dashes pflag takes, for the names in known; arguments
// after "--" are left as they are.
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

// knownFlag reports whether name is a global flag or some command's.
func (t *tree) knownFlag(name string) bool {
	return t.lookupFlag(name) != nil
}

// lookupFlag finds the global flag called name, else the first command's
// flag called name (or with that shorthand).
func (t *tree) lookupFlag(name string) *pflag.Flag {
	look := func(fs *pflag.FlagSet) *pflag.Flag {
		if f := fs.Lookup(name); f != nil {
			return f
		}
		if len(name) == 1 {
			return fs.ShorthandLookup(name)
		}
		return nil
	}
	if f := look(t.root.PersistentFlags()); f != nil {
		return f
	}
	for c := range t.cmds {
		if f := look(c.LocalFlags()); f != nil {
			return f
		}
	}
	return nil
}

// relocate moves the flags given before the command's name to after it:
// "switchboard --scope project add ...", "switchboard --stdio serve". A
// global flag may come anywhere, and cobra takes it there; a command's
// own flag is moved so that cobra does not take it, or its value, for
// the command's name. The flags the command does not have are kept in
// t.foreign, a usage error.
func (t *tree) relocate(args []string) []string {
	i := 0
	var lead []string
	var foreign []string
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" && args[i] != "-" {
		a := args[i]
		lead = append(lead, a)
		i++
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := t.lookupFlag(name)
		if f != nil && t.root.PersistentFlags().Lookup(f.Name) == nil {
			foreign = append(foreign, f.Name)
		}
		if !hasValue && f != nil && f.NoOptDefVal == "" && i < len(args) {
			lead = append(lead, args[i])
			i++
		}
	}
	if len(lead) == 0 || i == len(args) {
		return args
	}
	name := args[i]
	var cmd *cobra.Command
	for c := range t.cmds {
		if c.Name() == name {
			cmd = c
		}
	}
	if cmd == nil {
		return args // help, or an unknown command
	}
	for _, f := range foreign {
		if cmd.LocalFlags().Lookup(f) == nil {
			t.foreign = append(t.foreign, "--"+f)
		}
	}
	slices.Sort(t.foreign)
	t.foreign, t.misnamed = slices.Compact(t.foreign), name
	out := append([]string{name}, lead...)
	return append(out, args[i+1:]...)
}
