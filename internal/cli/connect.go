package cli

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/clientconf"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

func connectCommand(r *run) *command {
	f, imp := &connectFlags{}, &importFlags{}
	return &command{
		name: "connect", args: clientNames(),
		summary: "write the gateway into a client's configuration, with a backup (--print: show the entry only; --move: take the client's servers into Switchboard first)",
		examples: []string{"switchboard connect cursor", "switchboard connect claude-desktop --move", "switchboard connect claude-desktop --print",
			"switchboard connect vscode --token-env SWITCHBOARD_TOKEN"},
		flags: func(fs *pflag.FlagSet) {
			f.register(fs, "connect")
			imp.register(fs, "connect", &r.edit.noVerify)
		},
		run:      func(r *run) int { return f.connect(&importer{run: r, imp: imp}) },
		complete: firstClient,
	}
}

// connectFlags are the flags of `switchboard connect` and `disconnect`.
type connectFlags struct {
	file     string // the client's file, instead of where the client keeps it
	print    bool   // connect: print the entry, write nothing
	stdio    bool   // connect: a stdio entry, whatever the client
	tokenEnv string // connect: the token header refers to this variable
	addr     string // connect: where serve listens
	force    bool   // disconnect: keep servers added back since connect
}

func (f *connectFlags) register(fs *pflag.FlagSet, name string) {
	fs.StringVar(&f.file, "file", "", "the client's configuration `file` (default: where the client keeps it)")
	if name == "disconnect" {
		fs.BoolVar(&f.force, "force", false, "keep a server that was moved out and has since been added back with other content")
		return
	}
	fs.BoolVar(&f.print, "print", false, "print the entry that would be written, and where; write nothing")
	fs.BoolVar(&f.stdio, "stdio", false, "have the client launch 'switchboard serve --stdio' instead of reaching the HTTP gateway (Claude Desktop always does)")
	fs.StringVar(&f.addr, "http", "", "the `addr` 'switchboard serve --http' listens on (default 127.0.0.1:8939; a bare port means 127.0.0.1:PORT)")
	fs.StringVar(&f.tokenEnv, "token-env", "", "write the token header as a reference to environment `variable` VAR, as 'serve --token-env VAR' reads it (default: the token kept in the home)")
}

// clientNames lists the clients connect and disconnect know.
func clientNames() string {
	var ids []string
	for _, c := range clientconf.Clients() {
		ids = append(ids, c.ID)
	}
	return strings.Join(ids, "|")
}

// clientFile resolves the client named by the first argument and its file.
func (f *connectFlags) clientFile(r *run) (*clientconf.Client, string, int, bool) {
	c, err := clientconf.Lookup(r.args[0])
	if err != nil {
		return nil, "", r.usagef("%s: %v", r.cmd.name, err), false
	}
	if f.file != "" {
		return c, f.file, ExitOK, true
	}
	p, err := r.place()
	if err != nil {
		return nil, "", r.usagef("%s: cannot find %s's file: %v; name it with --file", r.cmd.name, c.Name, err), false
	}
	path, _ := c.Find(p)
	return c, path, ExitOK, true
}

// gatewayEntry is the entry that reaches this Switchboard: a stdio entry
// that launches it with this configuration and home for Claude Desktop
// (and with --stdio), else an HTTP entry for the gateway at --http (as
// serve reads it) with the token header.
func (f *connectFlags) gatewayEntry(r *run, c *clientconf.Client) (clientconf.Entry, error) {
	if f.stdio || c.ID == "claude-desktop" {
		if f.tokenEnv != "" {
			return clientconf.Entry{}, fmt.Errorf("--token-env is for the HTTP gateway; a stdio entry needs no token")
		}
		exe := r.env.Executable
		if exe == "" {
			exe = "switchboard"
		}
		return clientconf.Entry{Transport: clientconf.Stdio, Command: exe, Args: r.stdioArgs()}, nil
	}
	addr := serveAddr(f.addr)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return clientconf.Entry{}, fmt.Errorf("--http %s: %v", f.addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1" // every interface: the client is on this machine
	}
	url := "http://" + net.JoinHostPort(host, port) + frontdoor.DefaultPath
	e := clientconf.Entry{Transport: clientconf.HTTP, URL: url}
	if f.tokenEnv != "" {
		e.BearerTokenEnvVar = f.tokenEnv
		return e, nil
	}
	home, err := r.homeDir()
	if err != nil {
		return e, err
	}
	tok, _, err := keptToken(filepath.Join(home, TokenFile))
	if err != nil {
		return e, err
	}
	e.Headers = map[string]string{"Authorization": "Bearer " + tok}
	return e, nil
}

func (f *connectFlags) connect(r *importer) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	c, path, code, ok := f.clientFile(r.run)
	if !ok {
		return code
	}
	gw, err := f.gatewayEntry(r.run, c)
	if err != nil {
		return r.usagef("connect: %v", err)
	}
	if f.print && r.imp.move {
		return r.usagef("connect: --print shows the entry only; it does not go with --move")
	}
	// The entry holds the token kept in the home unless it refers to a
	// variable (--token-env) or launches serve --stdio.
	tokenFile := ""
	if gw.Transport != clientconf.Stdio && f.tokenEnv == "" {
		home, _ := r.homeDir() // gatewayEntry read the token there
		tokenFile = filepath.Join(home, TokenFile)
	}
	if f.print {
		return r.printEntry(c, path, gw, tokenFile)
	}
	if r.imp.move {
		// The client's servers go into Switchboard first, each checked;
		// unless every one is there, the client's file is left alone.
		if _, err := os.Stat(path); err != nil {
			return r.usagef("connect --move: %v", err)
		}
		if code, ok := r.importFrom([]importSource{{c, path}}, true); !ok || code != ExitOK {
			if code == ExitOK {
				code = ExitUsage
			}
			return code
		}
	}
	ch, err := clientconf.Connect(c, path, gw, clientconf.Options{Move: r.imp.move, Private: tokenFile != ""})
	if err != nil {
		return r.failf(ExitUsage, codeConfig, "connect: %v", err)
	}
	if r.json {
		out := map[string]any{"client": c.ID, "file": ch.Path, "backup": ch.Backup, "replaced": ch.Replaced, "private": tokenFile != ""}
		if r.imp.move {
			out["moved"] = append([]string{}, ch.Removed...)
			out["import"] = r.imported
		}
		return r.printJSON(out)
	}
	verb := "added"
	if ch.Replaced {
		verb = "updated"
	}
	fmt.Fprintf(r.env.Stdout, "%s: %s the %q entry in %s (backup: %s; 'switchboard disconnect %s' restores it)\n",
		c.Name, verb, clientconf.DefaultName, launcher.Escape(ch.Path), launcher.Escape(ch.Backup), c.ID)
	if tokenFile != "" {
		fmt.Fprintf(r.env.Stdout, "%s: the file holds the gateway's token now, so it is readable by you only (mode 0600); 'connect --token-env VAR' writes a reference to a variable instead\n", c.Name)
	}
	if len(ch.Removed) > 0 {
		fmt.Fprintf(r.env.Stdout, "%s: moved %s into Switchboard; the gateway is its one entry\n", c.Name, launcher.Escape(strings.Join(ch.Removed, ", ")))
	}
	return ExitOK
}

// printEntry prints the entry connect would write for c in path, with the
// token kept in tokenFile ("" when the entry holds none) masked: a secret
// is never printed. It says how to get the real one.
func (r *run) printEntry(c *clientconf.Client, path string, gw clientconf.Entry, tokenFile string) int {
	gw.Name = clientconf.DefaultName
	if tokenFile != "" {
		gw.Headers = map[string]string{"Authorization": "Bearer " + maskedToken}
	}
	b, err := clientconf.Render(c, gw)
	if err != nil {
		return r.usagef("connect: %v", err)
	}
	if r.json {
		out := map[string]string{"client": c.ID, "file": path, "entry": string(b)}
		if tokenFile != "" {
			out["tokenFile"] = tokenFile
		}
		return r.printJSON(out)
	}
	fmt.Fprintf(r.env.Stdout, "# %s: %s\n%s", c.Name, launcher.Escape(path), b)
	if tokenFile != "" {
		fmt.Fprintf(r.env.Stdout, "# the token is masked: it is kept in %s (mode 0600); 'switchboard connect %s' writes the real one, or use --token-env VAR to refer to a variable holding it\n",
			launcher.Escape(tokenFile), c.ID)
	}
	return ExitOK
}

// maskedToken stands for the gateway's token in a printed entry.
const maskedToken = "[redacted]"
