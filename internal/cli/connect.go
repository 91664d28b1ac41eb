package cli

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/clientconf"
	"github.com/switchboard-mcp/switchboard/internal/control"
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

// A gatewayEntry is the entry connect writes for this Switchboard, and
// what it should tell about it.
type gatewayEntry struct {
	clientconf.Entry
	// tokenFile is the file that keeps the token the entry holds; "" when
	// it holds none (a stdio entry, a reference to a variable, a gateway
	// without authentication).
	tokenFile string
	notes     []string // said on stderr, as warnings
}

// gatewayEntry is the entry that reaches this Switchboard: a stdio entry
// that launches it with this configuration and home for Claude Desktop
// (and with --stdio), else an HTTP entry for the gateway with its token.
// The gateway is the one running for the home, when one runs (its
// runtime file): the entry has its address and its kind of token, and
// --http naming another address is warned about. Otherwise it is the one
// serve would run with --http (default 127.0.0.1:8939) and the token kept
// in the home.
func (f *connectFlags) gatewayEntry(r *run, c *clientconf.Client) (gatewayEntry, error) {
	var gw gatewayEntry
	if f.stdio || c.ID == "claude-desktop" {
		if f.tokenEnv != "" {
			return gw, fmt.Errorf("--token-env is for the HTTP gateway; a stdio entry needs no token")
		}
		exe := r.env.Executable
		if exe == "" {
			exe = "switchboard"
		}
		gw.Entry = clientconf.Entry{Transport: clientconf.Stdio, Command: exe, Args: r.stdioArgs()}
		return gw, nil
	}
	home, err := r.homeDir()
	if err != nil {
		return gw, err
	}
	addr := serveAddr(f.addr)
	rt := runningGateway(r, home)
	if rt != nil {
		u, err := url.Parse(rt.URL)
		switch {
		case err != nil || u.Host == "":
			rt = nil
		case f.addr == "":
			addr = u.Host
		case !sameAddr(u.Host, addr):
			gw.notes = append(gw.notes, fmt.Sprintf("the gateway running for this home (pid %d) serves on %s, not on %s: the client reaches it only once 'switchboard serve --http %s' runs",
				rt.PID, u.Host, addr, addr))
			rt = nil // the entry is for the gateway --http names
		}
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return gw, fmt.Errorf("--http %s: %v", f.addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1" // every interface: the client is on this machine
	}
	gw.Entry = clientconf.Entry{Transport: clientconf.HTTP, URL: "http://" + net.JoinHostPort(host, port) + frontdoor.DefaultPath}
	switch {
	case f.tokenEnv != "":
		gw.BearerTokenEnvVar = f.tokenEnv
		if rt != nil && rt.TokenEnv != f.tokenEnv {
			gw.notes = append(gw.notes, fmt.Sprintf("the gateway running for this home takes its token from %s, not from $%s", runningTokenSource(rt), f.tokenEnv))
		}
		return gw, nil
	case rt != nil && rt.TokenEnv != "":
		gw.BearerTokenEnvVar = rt.TokenEnv
		gw.notes = append(gw.notes, fmt.Sprintf("the entry refers to $%s, the variable the running gateway takes its token from; the client must have it set", rt.TokenEnv))
		return gw, nil
	case rt != nil && rt.NoAuth:
		gw.notes = append(gw.notes, "the gateway running for this home takes no token (--no-auth): the entry holds none")
		return gw, nil
	}
	gw.tokenFile = filepath.Join(home, TokenFile)
	tok, _, err := keptToken(gw.tokenFile)
	if err != nil {
		return gw, err
	}
	gw.Headers = map[string]string{"Authorization": "Bearer " + tok}
	return gw, nil
}

// runningGateway returns what the gateway running for home wrote about
// itself, or nil when none runs.
func runningGateway(r *run, home string) *control.Runtime {
	_, rt, _ := control.Find(r.ctx, home, r.env.LookupEnv)
	return rt // also when it runs but its token is not at hand here
}

// runningTokenSource says where a running gateway's token comes from.
func runningTokenSource(rt *control.Runtime) string {
	switch {
	case rt.NoAuth:
		return "nowhere (--no-auth)"
	case rt.TokenEnv != "":
		return "$" + rt.TokenEnv
	}
	return launcher.Escape(rt.TokenFile)
}

// sameAddr reports whether two listen addresses are the same port on the
// same host, an unspecified host being the same as loopback for a client
// on this machine.
func sameAddr(a, b string) bool {
	norm := func(s string) string {
		h, p, err := net.SplitHostPort(s)
		if err != nil {
			return s
		}
		if ip := net.ParseIP(h); h == "" || h == "localhost" || (ip != nil && (ip.IsUnspecified() || ip.IsLoopback())) {
			h = "loopback"
		}
		return h + ":" + p
	}
	return norm(a) == norm(b)
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
	for _, n := range gw.notes {
		fmt.Fprintf(r.env.Stderr, "warning: %s\n", launcher.Escape(n))
	}
	if f.print {
		return r.printEntry(c, path, gw.Entry, gw.tokenFile)
	}
	code = ExitOK
	if r.imp.move {
		// The client's servers go into Switchboard first, each checked;
		// those that cannot be imported stay in the client's file.
		if _, err := os.Stat(path); err != nil {
			return r.usagef("connect --move: %v", err)
		}
		var all bool
		if code, all = r.importFrom([]importSource{{c, path}}, true); code != ExitOK || !all {
			if len(r.left) == 0 {
				return code // refused before anything was checked
			}
			code = ExitUpstream
		}
	}
	opts := clientconf.Options{Move: r.imp.move, Private: gw.tokenFile != ""}
	for _, l := range r.left {
		opts.Keep = append(opts.Keep, l.Name)
	}
	ch, err := clientconf.Connect(c, path, gw.Entry, opts)
	if err != nil {
		return r.failf(ExitUsage, codeConfig, "connect: %v", err)
	}
	others := clientServers(c, ch.Path, r.imp.move)
	if r.json {
		out := map[string]any{"client": c.ID, "file": ch.Path, "backup": ch.Backup, "replaced": ch.Replaced, "private": gw.tokenFile != "",
			"url": gw.URL, "alongside": others}
		if r.imp.move {
			out["moved"] = append([]string{}, ch.Removed...)
			out["left"] = append([]leftServer{}, r.left...)
			out["import"] = r.imported
		}
		if len(gw.notes) > 0 {
			out["warnings"] = gw.notes
		}
		r.printJSON(out)
		return code
	}
	verb := "added"
	if ch.Replaced {
		verb = "updated"
	}
	fmt.Fprintf(r.env.Stdout, "%s: %s the %q entry in %s (backup: %s; 'switchboard disconnect %s' restores it)\n",
		c.Name, verb, clientconf.DefaultName, launcher.Escape(ch.Path), launcher.Escape(ch.Backup), c.ID)
	if gw.URL != "" {
		fmt.Fprintf(r.env.Stdout, "%s: reaches the gateway at %s\n", c.Name, launcher.Escape(gw.URL))
	}
	if gw.tokenFile != "" {
		fmt.Fprintf(r.env.Stdout, "%s: the file holds the gateway's token now, so it is readable by you only (mode 0600); 'connect --token-env VAR' writes a reference to a variable instead\n", c.Name)
	}
	if len(ch.Removed) > 0 {
		fmt.Fprintf(r.env.Stdout, "%s: moved %s into Switchboard\n", c.Name, launcher.Escape(strings.Join(ch.Removed, ", ")))
	}
	for _, l := range r.left {
		fmt.Fprintf(r.env.Stdout, "%s: left %q in its own file: %s\n", c.Name, l.Name, launcher.Escape(l.Reason))
	}
	if len(others) > 0 && !r.imp.move {
		fmt.Fprintf(r.env.Stdout, "%s: still runs its own %s beside the gateway; the tools of any that Switchboard serves too appear twice ('switchboard connect %s --move' moves them into Switchboard)\n",
			c.Name, plural(len(others), "server"), c.ID)
	}
	return code
}

// clientServers lists the servers of the client's file at path other than
// the gateway's entry (nil when it cannot be read). After a move, those
// left are reported on their own and nil is returned.
func clientServers(c *clientconf.Client, path string, moved bool) []string {
	if moved {
		return []string{}
	}
	res, err := clientconf.Read(c, path)
	if err != nil {
		return []string{}
	}
	out := []string{}
	for _, e := range res.Servers {
		if e.Name != clientconf.DefaultName && e.Project == "" {
			out = append(out, e.Name)
		}
	}
	return out
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
