// Package cli is Switchboard's command line: it parses arguments, loads
// the configuration, opens a host.Host and prints for people (tables and
// text) or for programs (--json).
//
// Exit codes: 0 success, 1 the tool returned an error result, 2 usage or
// configuration error (an unknown name included), 3 upstream failure,
// 128+N interrupted by signal N (130 for Ctrl-C, 143 for SIGTERM).
// Messages go to stderr and say what to do next; with --json a failure is
// one JSON object on stdout instead (see failure). Everything a server
// wrote is printed through launcher.Escape, or launcher.EscapeJSON for
// JSON, so no character a terminal would hide or obey reaches it.
//
// Each command is declared in a file of its own (list, the other name of
// servers, in servers.go; root.go says how): a constructor that gives its
// name, usage and examples, registers its own flags on its cobra command,
// bound to state only it keeps, and returns its run function. run is the
// invocation's shared state: the environment, the global flags (root.go's
// globalFlags), the command and its arguments, the configuration, host
// and store it opened, and --scope and --no-verify, which the save of
// every editing command reads (editFlags).
//
// Nothing imports it but cmd/switchboard.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// Exit codes.
const (
	ExitOK        = 0
	ExitToolError = 1
	ExitUsage     = 2
	ExitUpstream  = 3
	// ExitInterrupted is the exit code of a run ended by Ctrl-C (128 +
	// SIGINT); SIGTERM ends one with 128 + 15.
	ExitInterrupted = 130
)

// oneShotStop bounds each stage of stopping a stdio server when a command
// other than serve ends (host.Options.StopTimeout). The servers were
// started for that one command, which has its answer or was interrupted,
// and a person waits for the prompt: a server still running that long
// after its stdin closed (busy with a call it ignores the cancellation
// of) is sent SIGTERM, and SIGKILL as long after that.
const oneShotStop = 400 * time.Millisecond

// Env is what a run of the CLI sees of the world; tests fill it in.
type Env struct {
	Args       []string // without the program name
	Stdin      io.Reader
	Stdout     io.Writer
	Stderr     io.Writer
	LookupEnv  func(string) (string, bool) // nil means os.LookupEnv
	Executable string                      // this binary, for the embedded default config
	Version    string
	// Dir is the working directory, where a project's .mcp.json is read
	// (config.LoadProject); "" means the process's.
	Dir string
	// IsTerminal reports whether a stream (Stderr) is a terminal, where
	// progress is drawn in place; nil means an *os.File that is a
	// character device.
	IsTerminal func(io.Writer) bool
	// StartupWait bounds how long a run waits for the servers it starts
	// (those without a saved catalogue) before it answers with what is
	// ready: a command other than serve before its answer, serve --stdio
	// before it reads its first request, serve --http before its
	// banner's summary (it answers meanwhile). Zero means the defaults:
	// 600 ms (startupWait), and a second for serve --stdio (stdioWait).
	// The wait ends as soon as every server is ready or has failed.
	StartupWait time.Duration
}

// run is the state of one invocation.
type run struct {
	ctx     context.Context
	env     Env
	cmd     *command
	args    []string // positional arguments
	json    bool
	verbose bool
	cfgFile string
	signal  atomic.Value // the syscall.Signal that ended ctx, if one did
	home    string
	cfg     *config.Config // the loaded configuration (commands that need the host)
	host    *host.Host
	opening time.Time   // when the host was opened: its servers started then
	store   store.Store // with host
	// storeURL is --store: a PostgreSQL URL that overrides the
	// configuration's "store".
	storeURL string
	edit     editFlags
	// dashAt is the index in args of the first argument after "--"; -1
	// without "--".
	dashAt int
	// noProject is --no-project: the working directory's .mcp.json is
	// not read.
	noProject bool
	// cobra is r's command in the command tree (root.go).
	cobra *cobra.Command
}

// Run executes the CLI and returns the exit code.
func Run(ctx context.Context, env Env) int {
	if env.LookupEnv == nil {
		env.LookupEnv = os.LookupEnv
	}
	if env.Stdin == nil {
		env.Stdin = strings.NewReader("")
	}
	r := &run{ctx: ctx, env: env, dashAt: -1, cmd: &command{}}
	t := newTree(r)
	if len(env.Args) == 0 {
		t.usage(env.Stderr)
		return ExitUsage
	}
	return t.execute()
}

// notifySignals makes SIGINT and SIGTERM cancel r.ctx and records which
// one did, for the exit code. The returned function stops the
// notification and waits for the goroutine it starts.
func (r *run) notifySignals() (stop func()) {
	ctx, cancel := context.WithCancel(r.ctx)
	r.ctx = ctx
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig := <-ch:
			r.signal.Store(sig)
			cancel()
		case <-ctx.Done():
		}
	}()
	return func() {
		signal.Stop(ch)
		cancel()
		<-done
	}
}

// interrupted returns the exit code of a run ended by a signal, and
// whether it was.
func (r *run) interrupted() (int, bool) {
	sig, ok := r.signal.Load().(syscall.Signal)
	if !ok {
		return 0, false
	}
	return 128 + int(sig), true
}

// wantsJSON reports whether --json is among args, so that a failure to
// parse them is reported as JSON too.
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

// suggestCommand is " (did you mean X?)" for the command name most likely
// meant: one it is a prefix of (or that is a prefix of it), else one at
// most two edits away; "" when none is.
func (t *tree) suggestCommand(name string) string {
	for _, c := range t.list {
		if !c.hidden && (strings.HasPrefix(c.name, name) || strings.HasPrefix(name, c.name)) {
			return fmt.Sprintf(" (did you mean %q?)", c.name)
		}
	}
	best, dist := "", 3
	for _, c := range t.list {
		if d := suggest.Distance(name, c.name); !c.hidden && d < dist {
			best, dist = c.name, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// help prints the usage of the command args names, or the general usage
// without one: `switchboard help [COMMAND]`.
func (t *tree) help(args []string) int {
	r := t.run
	var name string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			name = a
			break
		}
		// A flag given before help (switchboard --home DIR help): its
		// value is not the command.
		flag := strings.TrimLeft(a, "-")
		if strings.Contains(flag, "=") {
			continue
		}
		f := t.root.PersistentFlags().Lookup(flag)
		if f == nil && len(flag) == 1 {
			f = t.root.PersistentFlags().ShorthandLookup(flag)
		}
		if f != nil && f.NoOptDefVal == "" {
			i++
		}
	}
	if name == "" || name == "help" {
		t.usage(r.env.Stdout)
		return ExitOK
	}
	for c, cmd := range t.cmds {
		if c.Name() == name {
			commandUsage(r.env.Stdout, cmd, c)
			return ExitOK
		}
	}
	r.json = wantsJSON(args)
	return r.usagef("unknown command %q%s; run 'switchboard help'", name, t.suggestCommand(name))
}

// usage prints the general usage: the commands and the global flags.
func (t *tree) usage(w io.Writer) {
	fmt.Fprintf(w, "switchboard: one host for all your MCP servers\n\nUsage: switchboard COMMAND [flags] [args]\n\nCommands:\n")
	for _, c := range t.list {
		if !c.hidden {
			fmt.Fprintf(w, "  %-13s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintf(w, "\nFlags (any command): --json, -v, --config FILE, --home DIR, --store URL, --no-project\n")
	fmt.Fprintf(w, "'switchboard help COMMAND' shows a command's flags and examples.\n")
	fmt.Fprintf(w, "With no config file, the embedded default serves the demo server: try 'switchboard tools'.\n")
}

// commandUsage prints the usage of cmd, whose cobra command is c: its
// arguments, what it does, examples and its flags.
func commandUsage(w io.Writer, cmd *command, c *cobra.Command) {
	fmt.Fprintf(w, "Usage: switchboard %s [flags] %s\n\n%s\n", cmd.name, cmd.args, cmd.summary)
	if ex := cmd.examples; len(ex) > 0 {
		fmt.Fprintf(w, "\nExamples:\n  %s\n", strings.Join(ex, "\n  "))
	}
	fmt.Fprintf(w, "\nFlags:\n%s", flagUsages(allFlags(c).FlagUsages()))
}

// allFlags are the flags c takes: its own and the global ones, without
// --help.
func allFlags(c *cobra.Command) *pflag.FlagSet {
	fs := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
	add := func(f *pflag.Flag) {
		if f.Name != "help" {
			fs.AddFlag(f)
		}
	}
	c.LocalFlags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	return fs
}

// flagUsages tidies pflag's usage lines: a one-letter flag (-v, -k, -n)
// is shown as itself, not as "-v, --v" (a flag of one letter is both a
// shorthand and a name, as the Go flag package took it), a switch without
// pflag's "[=true|false]", and the usages are aligned again.
func flagUsages(lines string) string {
	type row struct{ flag, usage string }
	var rows []row
	width := 0
	for _, l := range strings.Split(strings.TrimRight(lines, "\n"), "\n") {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		flag, usage, _ := strings.Cut(l[indent:], "  ")
		flag = strings.Replace(flag, "[=true|false]", "", 1)
		if len(flag) >= 7 && flag[0] == '-' && flag[2:6] == ", --" && flag[1] == flag[6] && (len(flag) == 7 || flag[7] == ' ') {
			flag = flag[:2] + flag[7:]
		}
		flag = l[:indent] + flag
		width = max(width, len(flag))
		rows = append(rows, row{flag, strings.TrimLeft(usage, " ")})
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s  %s\n", width, r.flag, r.usage)
	}
	return b.String()
}

// Codes of the failures that carry no fault code: a usage error, a
// configuration error (the file, or the home directory's state store), a
// run interrupted by a signal, and any other failure (a store that could
// not be read, an address that could not be bound).
const (
	codeUsage       = "usage"
	codeConfig      = "config"
	codeInterrupted = "interrupted"
	codeError       = "error"
)

// failure is how a command reports that it could not do what was asked:
// "switchboard: MESSAGE" on stderr, with advice on the lines below, or with
// --json {"error": failure} on stdout.
type failure struct {
	Code      string `json:"code"`      // a fault code, or one of the codes above
	Message   string `json:"message"`   // what went wrong, in words
	Server    string `json:"server"`    // the server involved, "" when none
	Retryable bool   `json:"retryable"` // whether the same request may succeed later
}

// failureOf describes err: its fault code, server and retryability, or
// code when err carries no fault code.
func failureOf(err error, code string) failure {
	f := failure{Code: code, Message: err.Error()}
	var fe *fault.Error
	if errors.As(err, &fe) {
		f.Code, f.Server, f.Retryable = string(fe.Code), fe.Server, fe.Code.Retryable()
	}
	return f
}

// report prints f (and, without --json, the advice) and returns exit.
func (r *run) report(exit int, f failure, advice ...string) int {
	if r.json {
		if r.printJSON(map[string]failure{"error": f}) == ExitOK {
			return exit
		}
	}
	// The message may quote a server's (or a file's) words.
	fmt.Fprintf(r.env.Stderr, "switchboard: %s\n", launcher.Escape(f.Message))
	for _, a := range advice {
		fmt.Fprintf(r.env.Stderr, "  %s\n", a)
	}
	return exit
}

// usagef reports a usage error: exit 2, code "usage".
func (r *run) usagef(format string, args ...any) int {
	return r.report(ExitUsage, failure{Code: codeUsage, Message: fmt.Sprintf(format, args...)})
}

// failf reports a failure with exit code exit and code code.
func (r *run) failf(exit int, code, format string, args ...any) int {
	return r.report(exit, failure{Code: code, Message: fmt.Sprintf(format, args...)})
}

// configError reports a configuration that cannot be loaded: exit 2, code
// "config".
func (r *run) configError(err error) int {
	return r.report(ExitUsage, failure{Code: codeConfig, Message: err.Error()})
}

// loadConfig finds and loads the configuration, or the embedded default,
// and adds the servers of the working directory's project file (unless
// --no-project), which are unusable until its content is trusted. What
// the project file loses to the user configuration is warned about. A
// project file that cannot be read or is malformed is left out with a
// warning: it may come with any repository, and must not stop a command
// (serve above all) that the user's own configuration serves.
func (r *run) loadConfig() (*config.Config, error) {
	cfg, err := r.loadUserConfig()
	if err != nil || r.noProject {
		return cfg, err
	}
	lookup, err := r.lookupCred(nil)
	if err != nil {
		return nil, err
	}
	p, err := config.LoadProject(r.env.Dir, &config.LoadOptions{LookupEnv: r.env.LookupEnv, LookupCred: lookup})
	if err != nil {
		fmt.Fprintf(r.env.Stderr, "warning: the project file's servers are left out: %s\n", launcher.Escape(err.Error()))
		return cfg, nil
	}
	if p == nil {
		return cfg, nil
	}
	trusted := false
	if home, err := r.homeDir(); err == nil {
		if trusted, err = config.TrustedProject(home, p); err != nil {
			return nil, err
		}
	}
	cfg, warnings := cfg.WithProject(p, trusted)
	for _, w := range warnings {
		fmt.Fprintf(r.env.Stderr, "warning: %s\n", launcher.Escape(w))
	}
	return cfg, nil
}

// loadUserConfig finds and loads the configuration, or the embedded
// default, without the project file.
func (r *run) loadUserConfig() (*config.Config, error) {
	home := r.home
	if home == "" && r.cfgFile == "" {
		h, err := config.Home(r.env.LookupEnv)
		if err != nil {
			return nil, err
		}
		home = h
	}
	path, exists, err := config.Locate(home, r.cfgFile)
	if err != nil {
		return nil, err
	}
	if !exists {
		return config.Default(r.env.Executable), nil
	}
	lookup, err := r.lookupCredIn(home, nil)
	if err != nil {
		return nil, err
	}
	return config.Load(path, &config.LoadOptions{LookupEnv: r.env.LookupEnv, LookupCred: lookup})
}

// configInUse names the configuration file in use (absolute), or says
// that the embedded default is in use for want of one: "embedded default
// (no /home/me/.switchboard/config.json)". The configuration must be
// loaded.
func (r *run) configInUse() string {
	if r.cfg.Source != config.DefaultSource {
		return absPath(r.cfg.Source)
	}
	home, err := r.homeDir()
	if err != nil {
		return config.DefaultSource // not reached: the default was chosen in the home
	}
	return fmt.Sprintf("%s (no %s)", config.DefaultSource, filepath.Join(absPath(home), config.FileName))
}

// open loads the configuration and connects every server. Servers that
// fail are reported as warnings; the command goes on with the others.
func (r *run) open() int {
	cfg, err := r.loadConfig()
	if err != nil {
		return r.configError(err)
	}
	use := r.cmd.host
	// The gateway forwards servers' requests (sampling, elicitation,
	// roots) to its clients; the other commands have no one to ask.
	opts := &host.Options{ClientVersion: r.env.Version, Forward: use.gateway, OAuth: r.oauthOptions(),
		LeftoverDir: r.leftoverDir()}
	r.sandboxOptions(opts)
	opts.NoStart = use.noStart
	if !use.gateway {
		opts.StopTimeout = oneShotStop
		opts.StartupWait = r.serversWait(startupWait)
	} else {
		opts.StartupWait = -1 // it listens at once; late servers join with list_changed
		if key, ok := r.env.LookupEnv(GrantKeyEnv); ok && opts.OAuth != nil {
			// Seals each caller's own grants in the store (docs/OAUTH.md).
			opts.OAuth.GrantKey = key
		}
	}
	undo := func() {}
	if use.prepare != nil {
		u, err := use.prepare(cfg, opts)
		if err != nil {
			return r.usagef("%v", err)
		}
		undo = u
	} else if r.verbose {
		opts.Logger = slog.New(slog.NewTextHandler(r.env.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	st, err := r.openStore(cfg)
	if err != nil {
		undo()
		return r.configError(err)
	}
	r.store = st
	hostlink.WithStore(opts, st)
	r.opening = time.Now()
	h, err := host.Open(r.ctx, cfg, opts)
	if err != nil {
		st.Close()
		undo()
		if code, ok := r.interrupted(); ok {
			return r.report(code, failure{Code: codeInterrupted, Message: "interrupted"})
		}
		return r.report(ExitUpstream, failureOf(err, codeError))
	}
	r.cfg, r.host = cfg, h
	if use.opened != nil {
		use.opened(h)
	}
	if use.refresh != nil && use.refresh() {
		// A failure is in the server's status, reported below (or by
		// the servers command) like a failure at start.
		hostlink.Of(h).Refresh(r.ctx) //nolint:errcheck // see above
	}
	if !use.listing && !use.gateway {
		r.noteStarting()
	}
	if use.findings && !r.verbose { // -v: the host's log has them, and servers -v lists them
		r.warnFindings()
	}
	if !use.listing {
		for _, s := range h.Servers() {
			if use.ownServer && (len(r.args) == 0 || s.Name != r.args[0]) {
				continue // get shows its server's state; the others are not its business
			}
			switch {
			case s.State == host.StateMisconfigured:
				reason, _ := strings.CutPrefix(s.LastError, fmt.Sprintf("server %q: ", s.Name))
				fmt.Fprintf(r.env.Stderr, "warning: server %q is misconfigured and not started: %s\n  (the others work)\n", s.Name, launcher.Escape(firstLine(reason)))
			case (s.State == host.StateFailed || s.State == host.StateBackoff) && s.LastError != "":
				fmt.Fprintf(r.env.Stderr, "warning: server %q is unavailable: %s\n  (the others work; 'switchboard servers -v' shows its stderr)\n", s.Name, launcher.Escape(firstLine(s.LastError)))
			}
		}
	}
	return ExitOK
}

// fail reports err with the exit code for its fault code: 2 for a name
// not found or arguments refused, 3 for the rest; 128+N, code
// "interrupted", when signal N ended the run, whatever err says.
func (r *run) fail(err error) int {
	if code, ok := r.interrupted(); ok {
		return r.report(code, failure{Code: codeInterrupted, Message: "interrupted"})
	}
	if errors.Is(err, context.Canceled) {
		return r.report(ExitUpstream, failure{Code: codeInterrupted, Message: "interrupted"})
	}
	f := failureOf(err, codeError)
	switch fault.Code(f.Code) {
	case fault.CodeNotFound, fault.CodeInvalidInput:
		return r.report(ExitUsage, f)
	case fault.CodeUnavailable:
		return r.report(ExitUpstream, f, "'switchboard servers -v' shows the server's state and stderr")
	case fault.CodeTimeout:
		return r.report(ExitUpstream, f, "raise the server's callTimeoutMs in the configuration if it needs longer")
	case fault.CodeUnknownOutcome:
		return r.report(ExitUpstream, f, "the connection broke mid-call: the tool may or may not have run; check before calling again")
	}
	var held *host.HeldError
	if errors.As(err, &held) {
		return r.report(ExitUpstream, f, held.Release())
	}
	return r.report(ExitUpstream, f)
}

// printJSON writes v as indented JSON on stdout. Characters encoding/json
// leaves as they are but a terminal would hide or obey (bidi controls,
// zero-width and tag characters, C1 controls) are written as \u escapes.
func (r *run) printJSON(v any) int {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	if err == nil {
		_, err = r.env.Stdout.Write(launcher.EscapeJSON(b.Bytes()))
	}
	if err != nil {
		fmt.Fprintf(r.env.Stderr, "switchboard: writing JSON: %s\n", launcher.Escape(err.Error()))
		return ExitUpstream
	}
	return ExitOK
}

func (r *run) wantArgs(min, max int) bool {
	if len(r.args) < min || (max >= 0 && len(r.args) > max) {
		r.usagef("usage: switchboard %s %s", r.cmd.name, r.cmd.args)
		return false
	}
	return true
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// since formats a duration for progress output.
func since(t time.Time) string {
	return time.Since(t).Round(time.Millisecond).String()
}
