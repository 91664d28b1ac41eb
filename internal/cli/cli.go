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
// It may import config, host, fault and internal/demo; nothing imports it
// but cmd/switchboard.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
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

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
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
}

// command is one subcommand.
type command struct {
	name    string
	args    string // usage of positional arguments
	summary string
	// needsHost commands load the config and open a Host first.
	needsHost bool
	run       func(r *run) int
	hidden    bool // for the project's own tests; not in the usage
}

var commands []*command

func init() {
	commands = []*command{
		{"servers", "[--tokens] [--check]", "list configured servers with state, protocol version and counts (-v: stderr tail; --tokens: what their tool definitions cost; --check: exit 3 when one does not work)", true, runServers, false},
		{"tools", "[NAME | SERVER] [--raw] [--format FMT]", "list tools by model-facing name (SERVER: that server's only), or describe one (--raw: as its server sent it; --format: the model's tools for an LLM provider's API)", true, runTools, false},
		{"search", "QUERY... [-k N]", "find tools by what they do, in plain words (offline index)", true, runSearch, false},
		{"call", "NAME [JSON | key=value ... | -] [--yes]", "call a tool; arguments as one JSON object, key=value pairs, or - for JSON on stdin", true, runCall, false},
		{"resources", "", "list resources by ID (<server>:<uri>)", true, runResources, false},
		{"templates", "", "list resource templates", true, runTemplates, false},
		{"read", "ID", "read a resource: <server>:<uri> or a listed URI, also a URI filled in from a template", true, runRead, false},
		{"prompts", "", "list prompts by ID (<server>:<prompt>)", true, runPrompts, false},
		{"prompt", "ID [key=value ...]", "render a prompt with arguments", true, runPrompt, false},
		{"approve", "SERVER[:TOOL]", "approve the held (changed or new) tool definitions of a server, or one tool", false, runApprove, false},
		{"diff", "SERVER[:TOOL]", "show what changed in held tool definitions since they were approved", false, runDiff, false},
		{"restart", "SERVER", "restart a server of the running gateway (switchboard serve, for the same home)", false, runRestart, false},
		{"log", "[SERVER[:TOOL]] [-n N]", "show recent tool calls from the audit log (argument shapes only, never values)", false, runLog, false},
		{"add", "[NAME] URL | [NAME] -- COMMAND [ARGS...]", "add a server, after checking that it starts; --env and --header values are kept in creds.json; without arguments at a terminal, a form asks", false, runAdd, false},
		{"edit", "NAME", "change a server in a form at a terminal, after checking that it starts (a blank secret keeps the stored one, - removes it)", false, runEdit, false},
		{"add-json", "NAME JSON", "add a server from its JSON configuration, after checking that it starts", false, runAddJSON, false},
		{"remove", "NAME", "remove a server (and the credentials and OAuth grants only it used)", false, runRemove, false},
		{"enable", "NAME", "enable a server, after checking that it starts", false, runEnable, false},
		{"disable", "NAME", "disable a server", false, runDisable, false},
		{"login", "NAME", "log in to an HTTP server that asks for OAuth: opens the browser (or prints the URL) and keeps the grant in creds.json", false, runLogin, false},
		{"logout", "NAME", "forget the OAuth grants and registered client kept for a server", false, runLogout, false},
		{"get", "NAME", "show one server: its configuration (secrets masked), state, protocol, capabilities, tools, findings, last error, stderr", true, runGet, false},
		{"list", "[--check]", "the same as servers", true, runServers, false},
		{"version", "", "print the version", false, runVersion, false},
		{"trust-project", "[--show] [--yes]", "review the servers the working directory's .mcp.json would run, and trust that exact content (a changed file needs trust again)", false, runTrustProject, false},
		{"serve", "[--http ADDR | --stdio] [--token-env VAR | --no-auth [--allow-remote]]", "serve every configured server as one MCP server (the gateway); default --http 127.0.0.1:8939 (a bare port is on 127.0.0.1); a generated token is kept in the home", true, runServe, false},
		{"import", "[--from CLIENT|FILE] [--dry-run] [--prefix P]", "add the servers of your MCP clients' configurations (every one found, or --from one), each checked first; inline secrets move to creds.json", false, runImport, false},
		{"connect", clientNames(), "write the gateway into a client's configuration, with a backup (--print: show the entry only; --move: take the client's servers into Switchboard first)", false, runConnect, false},
		{"disconnect", clientNames(), "take the gateway out of a client's configuration again, keeping later edits", false, runDisconnect, false},
		{"completion", "bash|zsh|fish", "print the script that completes commands, flags, server and tool names in your shell (see the examples)", false, runCompletion, false},
		{"demo-server", "[--http ADDR]", "serve the demo MCP server on stdio, or Streamable HTTP at ADDR", false, runDemoServer, false},
		{name: "conformance-fixture", args: "[--http ADDR]", summary: "serve the MCP conformance-suite fixture (for scripts/conformance-all.sh)", run: runFixture, hidden: true},
		{name: "conformance-client", args: "SERVER-URL", summary: "the client side of the MCP conformance suite, on the host package", run: runConformanceClient, hidden: true},
	}
}

// examples are each command's examples, shown by `switchboard help
// COMMAND` and `switchboard COMMAND --help`.
var examples = map[string][]string{
	"servers":       {"switchboard servers", "switchboard servers -v", "switchboard servers --tokens"},
	"login":         {"switchboard login github"},
	"logout":        {"switchboard logout github"},
	"tools":         {"switchboard tools", "switchboard tools demo", "switchboard tools demo__echo", "switchboard tools --format openai"},
	"search":        {"switchboard search add two numbers"},
	"call":          {"switchboard call demo__echo text=hello", `switchboard call demo__add '{"a": 2, "b": 40}'`},
	"resources":     {"switchboard resources"},
	"templates":     {"switchboard templates"},
	"read":          {"switchboard read demo:demo://readme"},
	"prompts":       {"switchboard prompts"},
	"prompt":        {"switchboard prompt demo:review code='x := 1' language=go"},
	"approve":       {"switchboard approve demo:echo", "switchboard approve demo"},
	"diff":          {"switchboard diff demo", "switchboard diff demo:echo"},
	"restart":       {"switchboard restart demo"},
	"log":           {"switchboard log", "switchboard log demo:echo -n 10", "switchboard log --json"},
	"version":       {"switchboard version"},
	"trust-project": {"switchboard trust-project --show", "switchboard trust-project", "switchboard trust-project --yes"},
	"serve":         {"switchboard serve", "switchboard serve --http 9000", "switchboard serve --stdio"},
	"import":        {"switchboard import --dry-run", "switchboard import --from claude-desktop", "switchboard import --from ./mcp.json --prefix work-", "switchboard import --from vscode --secret PERPLEXITY_KEY=pplx-xxx"},
	"connect":       {"switchboard connect cursor", "switchboard connect claude-desktop --move", "switchboard connect claude-desktop --print", "switchboard connect vscode --token-env SWITCHBOARD_TOKEN"},
	"disconnect":    {"switchboard disconnect cursor"},
	"demo-server":   {"switchboard demo-server", "switchboard demo-server --http 127.0.0.1:9001"},
}

// run is the state of one invocation.
type run struct {
	ctx     context.Context
	env     Env
	cmd     *command
	args    []string // positional arguments
	json    bool
	verbose bool
	http    string // demo-server and serve --http
	cfgFile string
	serve   serveFlags
	// observer is serve's log, metrics and tracing (observe.go), set by
	// open.
	observer *observer
	gateway  atomic.Pointer[gateway.Gateway] // set by serve, for notifications the host receives
	// reloadAsk takes a reload asked for by the control API (serve's
	// watchReload does it and closes the channel it was given).
	reloadAsk chan chan struct{}
	// replica identifies this process in the notices of the store's
	// change feed (a reload), so that it ignores its own; set by serve.
	replica string
	signal  atomic.Value // the syscall.Signal that ended ctx, if one did
	home    string
	cfg     *config.Config // the loaded configuration (commands that need the host)
	host    *host.Host
	opening time.Time   // when the host was opened: its servers started then
	store   store.Store // with host
	// storeURL is --store: a PostgreSQL URL that overrides the
	// configuration's "store".
	storeURL string
	yes      bool   // call --yes
	limit    int    // log -n
	caller   string // log --client
	raw      bool   // tools --raw
	format   string // tools --format
	tokens   bool   // servers --tokens
	refresh  bool   // tools, call, servers --refresh
	conn     connectFlags
	edit     editFlags
	imp      importFlags
	// imported is what the last import did, as import --json prints it.
	imported map[string]any
	// dashAt is the index in args of the first argument after "--"; -1
	// without "--".
	dashAt int
	// noProject is --no-project: the working directory's .mcp.json is
	// not read.
	noProject bool
	show      bool // trust-project --show
	// cobra is r's command in the command tree (dispatch.go).
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
	if len(env.Args) == 0 {
		r.usage(env.Stderr)
		return ExitUsage
	}
	return newTree(r).execute()
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
func suggestCommand(name string) string {
	for _, c := range commands {
		if !c.hidden && (strings.HasPrefix(c.name, name) || strings.HasPrefix(name, c.name)) {
			return fmt.Sprintf(" (did you mean %q?)", c.name)
		}
	}
	best, dist := "", 3
	for _, c := range commands {
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
	r := t.global
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
		r.usage(r.env.Stdout)
		return ExitOK
	}
	for c, cr := range t.runs {
		if c.Name() == name {
			cr.commandUsage(r.env.Stdout, c)
			return ExitOK
		}
	}
	r.json = wantsJSON(args)
	return r.usagef("unknown command %q%s; run 'switchboard help'", name, suggestCommand(name))
}

// flags returns the flags of r's command, bound to r's fields.
func (r *run) flags() *flag.FlagSet {
	fs := flag.NewFlagSet("switchboard "+r.cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&r.json, "json", false, "print JSON for programs")
	fs.BoolVar(&r.verbose, "v", false, "verbose: more detail, debug logs on stderr")
	fs.StringVar(&r.cfgFile, "config", "", "configuration `file` (default $SWITCHBOARD_HOME/config.json)")
	fs.StringVar(&r.home, "home", "", "Switchboard's home `dir` (default $SWITCHBOARD_HOME or ~/.switchboard)")
	fs.BoolVar(&r.noProject, "no-project", false, "do not read the working directory's "+config.ProjectFileName)
	fs.StringVar(&r.storeURL, "store", "", "keep state in the PostgreSQL database at `url` (postgres://...), shared with every Switchboard using it (default: the config's \"store\", else state.db in the home)")
	switch r.cmd.name {
	case "demo-server", "conformance-fixture":
		fs.StringVar(&r.http, "http", "", "serve Streamable HTTP at `addr` instead of stdio")
	case "serve":
		fs.StringVar(&r.http, "http", "", "serve Streamable HTTP at `addr` (default 127.0.0.1:8939; a bare port means 127.0.0.1:PORT, :PORT every interface)")
		r.serve.register(fs)
	case "call":
		fs.BoolVar(&r.yes, "yes", false, "confirm the call if the policy asks for confirmation (policy.confirm)")
	case "trust-project":
		fs.BoolVar(&r.yes, "yes", false, "trust the file without asking")
		fs.BoolVar(&r.show, "show", false, "only show the servers the file would run and whether it is trusted")
	case "tools":
		fs.BoolVar(&r.raw, "raw", false, "show NAME's definition exactly as its server sent it, escaped (for review; never for a model)")
		fs.StringVar(&r.format, "format", "", "print the tools a model is given as `FMT`'s API takes them: "+strings.Join(host.Formats(), ", "))
	case "servers", "list":
		fs.BoolVar(&r.tokens, "tokens", false, "estimate the tokens each server's tool definitions take in a model's context")
	case "log":
		fs.IntVar(&r.limit, "n", 50, "show at most `N` calls")
		fs.StringVar(&r.caller, "client", "", "show only the calls of the gateway client `NAME`")
	case "search":
		fs.IntVar(&r.limit, "k", 5, "show the best `N` matches")
	case "connect", "disconnect":
		r.conn.register(fs, r.cmd.name)
		r.imp.register(fs, r.cmd.name, &r.edit.noVerify)
	case "import":
		r.imp.register(fs, r.cmd.name, &r.edit.noVerify)
	}
	r.edit.register(fs, r.cmd.name)
	switch r.cmd.name {
	case "tools", "call", "servers", "list":
		fs.BoolVar(&r.refresh, "refresh", false, "discover every enabled server again first, ignoring the saved catalogues (starts the servers)")
	}
	return fs
}

func (r *run) usage(w io.Writer) {
	fmt.Fprintf(w, "switchboard: one host for all your MCP servers\n\nUsage: switchboard COMMAND [flags] [args]\n\nCommands:\n")
	for _, c := range commands {
		if !c.hidden {
			fmt.Fprintf(w, "  %-13s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintf(w, "\nFlags (any command): --json, -v, --config FILE, --home DIR, --store URL, --no-project\n")
	fmt.Fprintf(w, "'switchboard help COMMAND' shows a command's flags and examples.\n")
	fmt.Fprintf(w, "With no config file, the embedded default serves the demo server: try 'switchboard tools'.\n")
}

// commandUsage prints the usage of r's command c: its arguments, what it
// does, examples and its flags.
func (r *run) commandUsage(w io.Writer, c *cobra.Command) {
	fmt.Fprintf(w, "Usage: switchboard %s [flags] %s\n\n%s\n", r.cmd.name, r.cmd.args, r.cmd.summary)
	if ex := examples[r.cmd.name]; len(ex) > 0 {
		fmt.Fprintf(w, "\nExamples:\n  %s\n", strings.Join(ex, "\n  "))
	}
	fmt.Fprintf(w, "\nFlags:\n%s", flagUsages(c.LocalFlags().FlagUsages()))
}

// flagUsages tidies pflag's usage lines: a one-letter flag (-v, -k, -n)
// is shown as itself, not as "-v, --v" (a Go flag of one letter becomes
// both a shorthand and a name in pflag); the columns stay aligned.
func flagUsages(lines string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(lines, "\n") {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		rest := l[indent:]
		if len(rest) > 7 && rest[0] == '-' && rest[2:6] == ", --" && rest[1] == rest[6] && rest[7] == ' ' {
			after := rest[7:] // " N   usage" or "   usage"
			arg := ""
			if len(after) > 1 && after[0] == ' ' && after[1] != ' ' {
				end := strings.IndexByte(after[1:], ' ') + 1
				if end == 0 {
					end = len(after)
				}
				arg, after = after[:end], after[end:]
			}
			l = l[:indent] + rest[:2] + arg + "     " + after
		}
		b.WriteString(l)
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
	// The gateway forwards servers' requests (sampling, elicitation,
	// roots) to its clients; the other commands have no one to ask.
	opts := &host.Options{ClientVersion: r.env.Version, Forward: r.cmd.name == "serve", OAuth: r.oauthOptions(),
		LeftoverDir: r.leftoverDir()}
	// search reads the saved catalogues and get touches its one server:
	// neither starts the others.
	opts.NoStart = r.cmd.name == "search" || r.cmd.name == "get"
	if r.cmd.name != "serve" {
		opts.StopTimeout = oneShotStop
		opts.StartupWait = startupWait
	} else {
		opts.StartupWait = -1 // it listens at once; late servers join with list_changed
	}
	if r.cmd.name == "serve" {
		opts.OnResourceUpdated = func(server, uri string) {
			if g := r.gateway.Load(); g != nil {
				g.ResourceUpdated(server, uri)
			}
		}
		opts.OnChange = func() {
			if g := r.gateway.Load(); g != nil {
				g.Sync()
			}
		}
	}
	switch {
	case r.cmd.name == "serve":
		// The gateway's log: a line per call, servers' exits and
		// restarts, what goes wrong with a server, and the findings of
		// warn severity or above, as they happen.
		obs, err := r.newObserver(opts)
		if err != nil {
			return r.usagef("%v", err)
		}
		r.observer = obs
	case r.verbose:
		opts.Logger = slog.New(slog.NewTextHandler(r.env.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	st, err := r.openStore(cfg)
	if err != nil {
		r.observer.close()
		return r.configError(err)
	}
	r.store = st
	opts.Store = st
	r.opening = time.Now()
	h, err := host.Open(r.ctx, cfg, opts)
	if err != nil {
		st.Close()
		r.observer.close()
		if code, ok := r.interrupted(); ok {
			return r.report(code, failure{Code: codeInterrupted, Message: "interrupted"})
		}
		return r.report(ExitUpstream, failureOf(err, codeError))
	}
	r.cfg, r.host = cfg, h
	if r.observer != nil {
		r.observer.host.h.Store(h)
	}
	if r.refresh || r.edit.check {
		// A failure is in the server's status, reported below (or by
		// the servers command) like a failure at start.
		h.Refresh(r.ctx) //nolint:errcheck // see above
	}
	listing := r.cmd.name == "servers" || r.cmd.name == "list"
	if !listing && r.cmd.name != "serve" {
		r.noteStarting()
	}
	switch r.cmd.name {
	case "tools", "call", "servers", "list":
		if !r.verbose { // -v: the host's log has them, and servers -v lists them
			r.warnFindings()
		}
	}
	if !listing {
		for _, s := range h.Servers() {
			if r.cmd.name == "get" && (len(r.args) == 0 || s.Name != r.args[0]) {
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
