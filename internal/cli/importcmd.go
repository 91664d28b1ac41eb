package cli

import (
	"flag"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/clientconf"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// connectFlags are the flags of `switchboard connect` and `disconnect`.
type connectFlags struct {
	file     string // the client's file, instead of where the client keeps it
	print    bool   // connect: print the entry, write nothing
	stdio    bool   // connect: a stdio entry, whatever the client
	tokenEnv string // connect: the token header refers to this variable
	addr     string // connect: where serve listens
	force    bool   // disconnect: keep servers added back since connect
}

func (f *connectFlags) register(fs *flag.FlagSet, name string) {
	fs.StringVar(&f.file, "file", "", "the client's configuration `file` (default: where the client keeps it)")
	if name == "disconnect" {
		fs.BoolVar(&f.force, "force", false, "keep a server that was moved out and has since been added back with other content")
		return
	}
	fs.BoolVar(&f.print, "print", false, "print the entry that would be written, and where; write nothing")
	fs.BoolVar(&f.stdio, "stdio", false, "have the client launch `switchboard serve --stdio` instead of reaching the HTTP gateway (Claude Desktop always does)")
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
func (r *run) clientFile() (*clientconf.Client, string, int, bool) {
	c, err := clientconf.Lookup(r.args[0])
	if err != nil {
		return nil, "", r.usagef("%s: %v", r.cmd.name, err), false
	}
	if r.conn.file != "" {
		return c, r.conn.file, ExitOK, true
	}
	key := "HOME"
	if runtime.GOOS == "windows" {
		key = "USERPROFILE"
	}
	home, ok := r.env.LookupEnv(key)
	if !ok || home == "" {
		return nil, "", r.usagef("%s: cannot find %s's file: $%s is not set; name it with --file", r.cmd.name, c.Name, key), false
	}
	path, _ := c.Find(clientconf.Place{Home: home, OS: runtime.GOOS, Getenv: func(k string) string {
		v, _ := r.env.LookupEnv(k)
		return v
	}})
	return c, path, ExitOK, true
}

// gatewayEntry is the entry that reaches this Switchboard: a stdio entry
// that launches it with this configuration and home for Claude Desktop
// (and with --stdio), else an HTTP entry for the gateway at --http (as
// serve reads it) with the token header.
func (r *run) gatewayEntry(c *clientconf.Client) (clientconf.Entry, error) {
	if r.conn.stdio || c.ID == "claude-desktop" {
		if r.conn.tokenEnv != "" {
			return clientconf.Entry{}, fmt.Errorf("--token-env is for the HTTP gateway; a stdio entry needs no token")
		}
		exe := r.env.Executable
		if exe == "" {
			exe = "switchboard"
		}
		return clientconf.Entry{Transport: clientconf.Stdio, Command: exe, Args: r.stdioArgs()}, nil
	}
	addr := serveAddr(r.conn.addr)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return clientconf.Entry{}, fmt.Errorf("--http %s: %v", r.conn.addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1" // every interface: the client is on this machine
	}
	url := "http://" + net.JoinHostPort(host, port) + frontdoor.DefaultPath
	e := clientconf.Entry{Transport: clientconf.HTTP, URL: url}
	if r.conn.tokenEnv != "" {
		e.BearerTokenEnvVar = r.conn.tokenEnv
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

func runConnect(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	c, path, code, ok := r.clientFile()
	if !ok {
		return code
	}
	gw, err := r.gatewayEntry(c)
	if err != nil {
		return r.usagef("connect: %v", err)
	}
	if r.conn.print {
		gw.Name = clientconf.DefaultName
		b, err := clientconf.Render(c, gw)
		if err != nil {
			return r.usagef("connect: %v", err)
		}
		if r.json {
			return r.printJSON(map[string]string{"client": c.ID, "file": path, "entry": string(b)})
		}
		fmt.Fprintf(r.env.Stdout, "# %s: %s\n%s", c.Name, launcher.Escape(path), b)
		return ExitOK
	}
	ch, err := clientconf.Connect(c, path, gw, clientconf.Options{})
	if err != nil {
		return r.failf(ExitUsage, codeConfig, "connect: %v", err)
	}
	if r.json {
		return r.printJSON(map[string]any{"client": c.ID, "file": ch.Path, "backup": ch.Backup, "replaced": ch.Replaced})
	}
	verb := "added"
	if ch.Replaced {
		verb = "updated"
	}
	fmt.Fprintf(r.env.Stdout, "%s: %s the %q entry in %s (backup: %s; 'switchboard disconnect %s' restores it)\n",
		c.Name, verb, clientconf.DefaultName, launcher.Escape(ch.Path), launcher.Escape(ch.Backup), c.ID)
	return ExitOK
}

func runDisconnect(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	c, path, code, ok := r.clientFile()
	if !ok {
		return code
	}
	ch, err := clientconf.Disconnect(c, path, clientconf.Options{Force: r.conn.force})
	if err != nil {
		return r.failf(ExitUsage, codeConfig, "disconnect: %v", err)
	}
	if r.json {
		return r.printJSON(map[string]any{"client": c.ID, "file": ch.Path, "removed": ch.After == nil, "restored": ch.Restored})
	}
	if ch.After == nil {
		fmt.Fprintf(r.env.Stdout, "%s: removed %s, which connect had created\n", c.Name, launcher.Escape(ch.Path))
		return ExitOK
	}
	fmt.Fprintf(r.env.Stdout, "%s: took the %q entry out of %s", c.Name, clientconf.DefaultName, launcher.Escape(ch.Path))
	if len(ch.Restored) > 0 {
		fmt.Fprintf(r.env.Stdout, " and put back %s", launcher.Escape(strings.Join(ch.Restored, ", ")))
	}
	fmt.Fprintln(r.env.Stdout)
	return ExitOK
}
